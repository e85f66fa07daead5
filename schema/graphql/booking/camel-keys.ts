/**
 * The booking flow's REST views use snake_case field names (`timeslot_uuid`);
 * GraphQL shows the same views in camelCase (`timeslotUuid`). One rule for
 * every field keeps the mapping obvious: each `_x` becomes `X`.
 */
type CamelCase<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;

// Primitives first: ORM types such as Opt<number> are `number & {...}` and must stay numbers.
export type CamelKeys<T> = T extends string | number | boolean | bigint | symbol | null | undefined | Date
  ? T
  : T extends readonly (infer U)[]
    ? CamelKeys<U>[]
    : T extends object
      ? { [K in keyof T as K extends string ? CamelCase<K> : K]: CamelKeys<T[K]> }
      : T;

const camel = (key: string): string => key.replace(/_([a-zA-Z0-9])/g, (_, letter: string) => letter.toUpperCase());

/** A deep copy of a plain view with its object keys in camelCase. */
export function camelKeys<T>(value: T): CamelKeys<T> {
  if (Array.isArray(value)) return value.map((item) => camelKeys(item)) as CamelKeys<T>;
  if (value === null || typeof value !== 'object' || value instanceof Date) return value as CamelKeys<T>;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [camel(key), camelKeys(item)])) as CamelKeys<T>;
}
