import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed operations for frontends: `npm run codegen` reads the schema SDL and
 * the example operations and writes TypedDocumentNodes and result/variable
 * types to examples/generated/ (not checked in). A test runs the same
 * generation and type-checks its output, so the examples and the schema stay
 * in step.
 */
export const codegenConfig = (outputDir = 'examples/generated/'): CodegenConfig => ({
  schema: 'schema/schema.graphql',
  documents: ['examples/operations/*.graphql'],
  ignoreNoDocuments: false,
  silent: true,
  generates: {
    [outputDir]: {
      preset: 'client',
      config: {
        // Instants arrive as ISO 8601 strings in UTC; JSON inputs are free-form.
        scalars: { DateTime: 'string', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
      presetConfig: { fragmentMasking: false },
    },
  },
});

export default codegenConfig();
