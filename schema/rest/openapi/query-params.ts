import { z } from './zod-openapi.js';

/** Query parameters as the route helpers (`booleanQuery`, `stringQuery`, `listQuery` in ../http.ts) read them. */
export const flagParam = (description: string) =>
  z.enum(['true', 'false', '1', '0']).optional().openapi({ description: `${description} (\`true\`/\`false\`/\`1\`/\`0\`, any case; empty = true)` });

export const textParam = (description: string, example?: string) => z.string().optional().openapi({ description, ...(example ? { example } : {}) });

export const listParam = (description: string) => z.array(z.string()).optional().openapi({ description: `${description} (repeatable: \`?ref=a&ref=b\`)` });

export const requiredTextParam = (description: string, example?: string) => z.string().openapi({ description, ...(example ? { example } : {}) });
