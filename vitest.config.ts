import 'reflect-metadata';
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql ships CommonJS (main) and ESM (module) builds. Node, Apollo and type-graphql load the
    // CommonJS one; without this alias Vite hands our sources the ESM one, so schema objects and
    // GraphQLErrors come from two copies and instanceof checks fail ("another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/setup-file.ts'],
    pool: 'forks',
    // Suites share one test database and one Redis; tenancy (a CRM per suite) keeps them apart.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
