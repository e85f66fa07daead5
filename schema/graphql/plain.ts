/**
 * GraphQL input objects arrive as class instances (nested ones too); services
 * validate plain data, so resolvers hand them a plain copy.
 */
export function plain<T>(input: T): T {
  return JSON.parse(JSON.stringify(input)) as T;
}
