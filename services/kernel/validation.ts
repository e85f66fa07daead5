import { z, type ZodIssue, type ZodTypeAny } from 'zod';
import { validationError } from './errors.js';

/** Parses input against a schema; the first problem becomes a 400 whose message names the field. */
export function parseInput<S extends ZodTypeAny>(schema: S, input: unknown, root = 'body'): z.output<S> {
  const result = schema.safeParse(input ?? undefined);
  if (result.success) return result.data;
  throw validationError(describeIssue(result.error.issues[0]!, root));
}

export function describeIssue(issue: ZodIssue, root = 'body'): string {
  const field = issue.path.length ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : p)).join('.').replace(/\.\[/g, '[') : root;
  switch (issue.code) {
    case 'invalid_type':
      if (issue.received === 'undefined' || issue.received === 'null') return `${field} is required`;
      return `${field} must be ${article(issue.expected)}, got ${issue.received}`;
    case 'too_small':
      if (issue.type === 'string' && issue.minimum === 1) return `${field} must not be empty`;
      if (issue.type === 'string') return `${field} must be at least ${issue.minimum} characters`;
      if (issue.type === 'array') return `${field} must contain at least ${issue.minimum} element(s)`;
      return `${field} must be ${issue.inclusive ? 'at least' : 'greater than'} ${issue.minimum}`;
    case 'too_big':
      if (issue.type === 'string') return `${field} must be at most ${issue.maximum} characters`;
      if (issue.type === 'array') return `${field} must contain at most ${issue.maximum} element(s)`;
      return `${field} must be ${issue.inclusive ? 'at most' : 'less than'} ${issue.maximum}`;
    case 'invalid_enum_value':
      return `${field} must be one of ${issue.options.join(', ')}`;
    case 'invalid_string': {
      // zod's own messages are "Invalid" or "Invalid <format>"; custom messages are kept.
      if (!/^Invalid( |$)/.test(issue.message)) return `${field} ${lowerFirst(issue.message)}`;
      const named = typeof issue.validation === 'string' && issue.validation !== 'regex';
      return named ? `${field} must be a valid ${String(issue.validation)}` : `${field} has an invalid format`;
    }
    case 'unrecognized_keys':
      return `${field} has unknown field(s): ${issue.keys.join(', ')}`;
    default:
      return `${field} ${lowerFirst(issue.message)}`;
  }
}

const lowerFirst = (text: string): string => `${text.charAt(0).toLowerCase()}${text.slice(1)}`;

function article(type: string): string {
  if (type === 'integer') return 'a whole number';
  if (type === 'array') return 'an array';
  if (type === 'object') return 'an object';
  return `a ${type}`;
}

/** A required, non-empty, trimmed string. */
export const requiredText = (max = 255) => z.string().trim().min(1).max(max);
/** An optional string; null and absent both mean "not given". */
export const optionalText = (max = 255) => z.string().trim().max(max).nullish();
export const emailAddress = () =>
  z.string().trim().max(320).email('must be a valid e-mail address').transform((value) => value.toLowerCase());
/** A mobile or phone number with international prefix, e.g. +49 170 1234567. */
export const internationalPhone = () =>
  z
    .string()
    .trim()
    .regex(/^\+[1-9][0-9 ()\/-]{5,24}$/, 'must be a phone number with international prefix, e.g. +49 170 1234567');

/**
 * A boolean as CRMs send it: `true`/`false` in JSON, or the strings `"true"`,
 * `"TRUE"`, `"True"`, `"false"`, … (any case); stored as a real boolean.
 */
export const flexibleBoolean = () =>
  z.preprocess((value) => {
    if (typeof value !== 'string') return value;
    const text = value.trim().toLowerCase();
    return text === 'true' ? true : text === 'false' ? false : value;
  }, z.boolean());

/** The languages of e-mails and pages. */
export const LANGUAGES = ['de', 'en'] as const;

/**
 * A language as `de`, `DE`, `de-DE`, `de_DE` or `en-GB`: the language part,
 * lower-cased, which must be one of LANGUAGES.
 */
export const languageCode = () =>
  z
    .string()
    .trim()
    .transform((value) => (/^[a-z]{2}([-_][a-z]{2})?$/i.test(value) ? value.slice(0, 2).toLowerCase() : value))
    .pipe(z.enum(LANGUAGES));
