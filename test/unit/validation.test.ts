import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../services/kernel/errors.js';
import { describeIssue, emailAddress, internationalPhone, optionalText, parseInput, requiredText } from '../../services/kernel/validation.js';

/** The message of the first issue when `input` fails `schema`. */
function messageFor(schema: z.ZodTypeAny, input: unknown, root?: string): string {
  const result = schema.safeParse(input);
  if (result.success) throw new Error('expected the input to fail');
  return describeIssue(result.error.issues[0]!, root);
}

describe('describeIssue', () => {
  const user = z.object({ name: requiredText(5), age: z.number().int().min(18).max(99), tags: z.array(z.string()).min(1).max(2) });

  it('a missing or null field is required', () => {
    expect(messageFor(user, { age: 20, tags: ['a'] })).toBe('name is required');
    expect(messageFor(user, { name: null, age: 20, tags: ['a'] })).toBe('name is required');
  });

  it('a wrong type names the expected and the received type', () => {
    expect(messageFor(user, { name: 5, age: 20, tags: ['a'] })).toBe('name must be a string, got number');
    expect(messageFor(user, { name: 'x', age: 20.5, tags: ['a'] })).toBe('age must be a whole number, got float');
    expect(messageFor(user, { name: 'x', age: 20, tags: 'a' })).toBe('tags must be an array, got string');
    expect(messageFor(z.object({ a: z.object({}) }), { a: [] })).toBe('a must be an object, got array');
  });

  it('the whole body: root name for a non-object', () => {
    expect(messageFor(user, [])).toBe('body must be an object, got array');
    expect(messageFor(user, undefined)).toBe('body is required');
    expect(messageFor(user, 'x', 'input')).toBe('input must be an object, got string');
  });

  it('string, number and array bounds', () => {
    expect(messageFor(user, { name: '  ', age: 20, tags: ['a'] })).toBe('name must not be empty');
    expect(messageFor(user, { name: 'toolong', age: 20, tags: ['a'] })).toBe('name must be at most 5 characters');
    expect(messageFor(z.object({ code: z.string().min(3) }), { code: 'ab' })).toBe('code must be at least 3 characters');
    expect(messageFor(user, { name: 'x', age: 17, tags: ['a'] })).toBe('age must be at least 18');
    expect(messageFor(user, { name: 'x', age: 100, tags: ['a'] })).toBe('age must be at most 99');
    expect(messageFor(z.object({ n: z.number().gt(0) }), { n: 0 })).toBe('n must be greater than 0');
    expect(messageFor(z.object({ n: z.number().lt(10) }), { n: 10 })).toBe('n must be less than 10');
    expect(messageFor(user, { name: 'x', age: 20, tags: [] })).toBe('tags must contain at least 1 element(s)');
    expect(messageFor(user, { name: 'x', age: 20, tags: ['a', 'b', 'c'] })).toBe('tags must contain at most 2 element(s)');
  });

  it('nested paths use dots and [index]', () => {
    const schema = z.object({ items: z.array(z.object({ address: z.object({ zip: requiredText() }) })) });
    expect(messageFor(schema, { items: [{ address: { zip: 'x' } }, { address: {} }] })).toBe('items[1].address.zip is required');
    expect(messageFor(z.array(z.string()), ['a', 1])).toBe('[1] must be a string, got number');
  });

  it('enums list their options', () => {
    expect(messageFor(z.object({ state: z.enum(['CREATED', 'BOOKABLE']) }), { state: 'OPEN' })).toBe('state must be one of CREATED, BOOKABLE');
  });

  it('string formats: custom message, or "must be a valid <format>"', () => {
    expect(messageFor(z.object({ email: emailAddress() }), { email: 'nope' })).toBe('email must be a valid e-mail address');
    expect(messageFor(z.object({ id: z.string().uuid() }), { id: 'nope' })).toBe('id must be a valid uuid');
    expect(messageFor(z.object({ url: z.string().url() }), { url: 'nope' })).toBe('url must be a valid url');
    expect(messageFor(z.object({ code: z.string().regex(/^[A-Z]+$/) }), { code: 'x' })).toBe('code has an invalid format');
    expect(messageFor(z.object({ ref: z.string().startsWith('x') }), { ref: 'y' })).toBe('ref has an invalid format');
    expect(messageFor(z.object({ mobile: internationalPhone() }), { mobile: '0170 123' })).toBe(
      'mobile must be a phone number with international prefix, e.g. +49 170 1234567',
    );
  });

  it('unknown keys of a strict object are listed', () => {
    expect(messageFor(z.object({ a: z.string() }).strict(), { a: 'x', b: 1, c: 2 })).toBe('body has unknown field(s): b, c');
  });

  it('custom refinements keep their message after the field name', () => {
    const schema = z.object({ username: z.string().refine((value) => !value.includes('/'), 'Must not contain /') });
    expect(messageFor(schema, { username: 'a/b' })).toBe('username must not contain /');
  });
});

describe('parseInput', () => {
  it('returns the parsed value', () => {
    expect(parseInput(z.object({ name: requiredText(), note: optionalText() }), { name: '  Ann ', note: null })).toEqual({ name: 'Ann', note: null });
  });

  it('throws a 400 DomainError whose message names the field', () => {
    try {
      parseInput(z.object({ name: requiredText() }), { name: '' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ code: 'VALIDATION_FAILED', status: 400, message: 'name must not be empty' });
    }
  });

  it('treats null input like a missing body', () => {
    expect(() => parseInput(z.object({}), null)).toThrow('body is required');
  });

  it('lower-cases e-mail addresses', () => {
    expect(parseInput(emailAddress(), ' Ann@Example.COM ')).toBe('ann@example.com');
  });
});
