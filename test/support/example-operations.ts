import { readFileSync } from 'node:fs';
import { type DefinitionNode, type DocumentNode, type FragmentDefinitionNode, Kind, parse, visit } from 'graphql';

/**
 * One operation of examples/operations/<file>, with the fragments it uses,
 * as a document of its own: tests run the examples a frontend would copy.
 */
export function exampleOperation(file: string, name: string): DocumentNode {
  const doc = parse(readFileSync(new URL(`../../examples/operations/${file}`, import.meta.url), 'utf8'));
  const operation = doc.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && d.name?.value === name);
  if (!operation) throw new Error(`no operation ${name} in examples/operations/${file}`);
  const fragments = new Map(
    doc.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const used: DefinitionNode[] = [];
  const pending: DefinitionNode[] = [operation];
  while (pending.length) {
    visit(pending.pop()!, {
      FragmentSpread(node) {
        const fragment = fragments.get(node.name.value);
        if (fragment && !used.includes(fragment)) {
          used.push(fragment);
          pending.push(fragment);
        }
      },
    });
  }
  return { kind: Kind.DOCUMENT, definitions: [operation, ...used] };
}
