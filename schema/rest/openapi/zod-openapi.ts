import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

// Adds `.openapi()` (names, descriptions, examples) to every zod schema; imported before any schema uses it.
extendZodWithOpenApi(z);

export { z };
