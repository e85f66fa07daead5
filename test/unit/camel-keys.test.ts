import { describe, expect, it } from 'vitest';
import { camelKeys } from '../../schema/graphql/booking/camel-keys.js';

describe('camelKeys (REST booking views → GraphQL field names)', () => {
  it('turns every _x into X, deeply, and leaves values and other names alone', () => {
    const view = {
      timeslot_uuid: 't',
      customer_fullName: null,
      formatedAddress: 'Domkloster 4',
      capacity_left: 0,
      contact_channel: { type: 'mobile', value: '+49 1' },
      customers: [{ customer_placeholder_id: 'p', participationState: 'RESERVED' }],
      messages: ['a_b'],
    };
    expect(camelKeys(view)).toEqual({
      timeslotUuid: 't',
      customerFullName: null,
      formatedAddress: 'Domkloster 4',
      capacityLeft: 0,
      contactChannel: { type: 'mobile', value: '+49 1' },
      customers: [{ customerPlaceholderId: 'p', participationState: 'RESERVED' }],
      messages: ['a_b'],
    });
  });

  it('keeps dates, nulls and primitives as they are', () => {
    const at = new Date(0);
    expect(camelKeys({ created_at: at }).createdAt).toBe(at);
    expect(camelKeys(null)).toBeNull();
    expect(camelKeys('a_b')).toBe('a_b');
  });
});
