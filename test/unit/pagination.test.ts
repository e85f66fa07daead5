import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, type Keyset, pageSize } from '../../services/kernel/pagination.js';

const keyset: Keyset = { list: 'things', alias: 't', at: { property: 'start', column: 'start' }, tie: { property: 'reference', column: 'reference' }, order: 'asc' };
const byId: Keyset = { ...keyset, tie: { property: 'id', column: 'id', uuid: true } };
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('keyset cursors', () => {
  it('round-trips the sort key, microseconds and odd references included', () => {
    for (const key of [
      { at: '2027-05-01T08:00:00.000000Z', tie: 'a' },
      { at: '2027-05-01T08:00:00.123456Z', tie: 'ünï cödé/+=?&"\'' },
      { at: '1970-01-01T00:00:00.000001Z', tie: 'x'.repeat(255) },
      // 255 characters as PostgreSQL counts them (varchar(255)), 510 UTF-16 units and 1020 bytes.
      { at: '2027-05-01T08:00:00.999999Z', tie: '😀'.repeat(255) },
      { at: '2027-05-01T08:00:00.999999Z', tie: '"\\\u0001'.repeat(85) },
    ]) {
      const cursor = encodeCursor('things', key);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(keyset, cursor)).toEqual(key);
    }
  });

  it('refuses anything that is not a cursor of this list', () => {
    const at = '2027-05-01T08:00:00.000000Z';
    for (const cursor of [
      '',
      'a b',
      'bm90IGpzb24',
      encode(['things', at]),
      encode(['things', at, 'a', 'b']),
      encode({ list: 'things', at, tie: 'a' }),
      encode(['others', at, 'a']),
      encode(['things', '2027-05-01T08:00:00Z', 'a']),
      encode(['things', '2027-02-30T08:00:00.000000Z', 'a']),
      encode(['things', '2027-05-01T25:00:00.000000Z', 'a']),
      encode(['things', at, '']),
      encode(['things', at, 'x'.repeat(256)]),
      encode(['things', at, 'a\u0000b']),
      encode(['things', at, 5]),
    ]) {
      expect(() => decodeCursor(keyset, cursor), cursor).toThrow('after: not a cursor of this list');
    }
    expect(() => decodeCursor(byId, encode(['things', at, 'not-a-uuid']))).toThrow('after: not a cursor of this list');
    expect(decodeCursor(byId, encode(['things', at, '0c0f5b1e-8c6e-4e52-9f55-2d6f5c9e1a01']))).toEqual({ at, tie: '0c0f5b1e-8c6e-4e52-9f55-2d6f5c9e1a01' });
  });

  it('page sizes are 1..max', () => {
    expect(pageSize(1, 200)).toBe(1);
    expect(pageSize(200, 200)).toBe(200);
    for (const bad of [0, -1, 201, 1.5, Number.NaN]) expect(() => pageSize(bad, 200)).toThrow('first must be between 1 and 200');
  });
});
