import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

/** `npm run test:scale`: the scale-out test (test/scale/*.scale.ts), heavy, apart from `npm test`. */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['test/scale/**/*.scale.ts'],
    maxWorkers: 1,
    testTimeout: 240_000,
    hookTimeout: 240_000,
  },
});
