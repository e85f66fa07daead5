import { describe, expect, it } from 'vitest';
import { slotId } from '../../services/booking/slot-id.js';

describe('slotId: the identity of a slot in listings and capacity changes', () => {
  const resource = '7e9e0565-50a2-4291-b2db-7d3893060b59';

  it('is the resource with the start and end instants in UTC', () => {
    expect(slotId(resource, '2027-05-04T09:00:00+02:00', '2027-05-04T09:30:00+02:00')).toBe(
      `${resource}/2027-05-04T07:00:00.000Z/2027-05-04T07:30:00.000Z`,
    );
  });

  it('does not depend on how the instants are written (offset, Z, Date)', () => {
    const a = slotId(resource, '2027-05-04T09:00:00+02:00', '2027-05-04T09:30:00+02:00');
    expect(slotId(resource, '2027-05-04T07:00:00Z', '2027-05-04T07:30:00.000Z')).toBe(a);
    expect(slotId(resource, new Date('2027-05-04T07:00:00Z'), new Date('2027-05-04T07:30:00Z'))).toBe(a);
  });

  it('differs by resource, start and end', () => {
    const base = slotId(resource, '2027-05-04T07:00:00Z', '2027-05-04T07:30:00Z');
    expect(slotId('other', '2027-05-04T07:00:00Z', '2027-05-04T07:30:00Z')).not.toBe(base);
    expect(slotId(resource, '2027-05-04T07:15:00Z', '2027-05-04T07:30:00Z')).not.toBe(base);
    expect(slotId(resource, '2027-05-04T07:00:00Z', '2027-05-04T08:00:00Z')).not.toBe(base);
  });

  it('keeps the same slot apart across a daylight-saving change (the instants differ, the wall clock repeats)', () => {
    // 2027-10-31 02:30 happens twice in Europe/Berlin: +02:00, then +01:00.
    expect(slotId(resource, '2027-10-31T02:30:00+02:00', '2027-10-31T03:00:00+02:00')).not.toBe(
      slotId(resource, '2027-10-31T02:30:00+01:00', '2027-10-31T03:00:00+01:00'),
    );
  });
});
