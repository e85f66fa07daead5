import { readFileSync, readdirSync } from 'node:fs';
import { buildSchema, parse, validate } from 'graphql';
const schema = buildSchema(readFileSync('schema/schema.graphql', 'utf8'));
for (const f of readdirSync('examples/operations')) {
  const errors = validate(schema, parse(readFileSync(`examples/operations/${f}`, 'utf8')));
  console.log(f, errors.map((e) => e.message));
}
