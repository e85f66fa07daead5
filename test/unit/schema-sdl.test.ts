import { describe, expect, it } from 'vitest';
import { readCheckedInSdl, renderSchemaSdl, SCHEMA_SDL_PATH } from '../../scripts/emit-schema.js';

describe('schema/schema.graphql', () => {
  it('matches the schema the code builds (run `npm run schema:emit` when this fails)', async () => {
    const fresh = await renderSchemaSdl();
    const checkedIn = readCheckedInSdl();
    if (checkedIn !== fresh) {
      expect.fail(
        `${SCHEMA_SDL_PATH} is ${checkedIn === null ? 'missing' : 'stale'}: the GraphQL schema in the code changed.\n` +
          'Run `npm run schema:emit` and check in schema/schema.graphql.',
      );
    }
  });

  it('contains the setup operations', async () => {
    const sdl = await renderSchemaSdl();
    for (const operation of ['user(reference: String!): User\n', 'createUser(input: CreateUserInput!): CreateUserPayload\n', 'addStaffMember(', 'removeStaffMember(']) {
      expect(sdl).toContain(operation);
    }
  });
});
