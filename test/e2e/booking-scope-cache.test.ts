import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupBookable } from '../support/booking-fixtures.js';
import { book, participationsOf, reserve, setChannel, sql } from '../support/booking-flow.js';
import { startTestApp, type TestApp } from '../support/harness.js';

/**
 * Each gateway process keeps what a booking reads about its resources
 * (channel settings, products, time zone) and checks with BEGIN that the
 * providers' catalogue versions did not move. Changes made straight in the
 * database stand for a change through another gateway process: this
 * process hears of them only through the versions.
 */
describe('booking flow: the booking scope kept per process', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  const stateOf = async (booked: Awaited<ReturnType<typeof book>>) => {
    expect(booked.status, booked.text).toBe(201);
    return (await participationsOf(app, booked.body.createdAppointment.appointment_uuid)).map((p) => p.state);
  };

  it('a booking process changed by another process applies to the next booking (the cached scope is found outdated)', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    expect(await stateOf(await book(app.anonymous, f))).toEqual(['BOOKED']);
    // Another process (here: SQL) makes the public channel ask for confirmation.
    await sql(app, `insert into booking_channel_setting (id, resource_id, channel_key, visible, booking_process, product_ids, exclusive_product_ids, accepted_customer_ids)
                    values (gen_random_uuid(), ?, 'RESOURCE_PUBLIC', true, 'REQUESTED', null, '[]', '[]')`, [f.resourceUuid]);
    expect(await stateOf(await book(app.anonymous, f))).toEqual(['BOOKED', 'REQUESTED']);
    // And back, through the CRM API of this process.
    await setChannel(f, 'RESOURCE_PUBLIC', { bookingProcess: 'IMMEDIATE' });
    expect(await stateOf(await book(app.anonymous, f))).toEqual(['BOOKED', 'REQUESTED', 'BOOKED']);
  });

  it('a refusal decided on the cached scope is decided again on a fresh one', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    await sql(app, `update resource set archived = true where id = ?`, [f.resourceUuid]);
    expect((await reserve(app.anonymous, f)).status).toBe(400);
    // Opened again elsewhere: the refusal read from this process's cache does not stand.
    await sql(app, `update resource set archived = false where id = ?`, [f.resourceUuid]);
    expect((await reserve(app.anonymous, f)).status).toBe(200);
  });

  it('a product duration changed elsewhere is read afresh before the slot is claimed', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    expect((await reserve(app.anonymous, f)).status).toBe(200);
    // The product now needs far longer than the fixture's slot: that slot no longer fits it.
    await sql(app, `update product set min_duration = 600, max_duration = 600 where id = ?`, [f.productUuid]);
    const refused = await reserve(app.anonymous, f);
    expect(refused.status, refused.text).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
  });

  it('moves a provider’s catalogue version with every change of what a booking reads, and only then', async () => {
    const f = await setupBookable(app, { capacity: 5 });
    const [{ provider_id: providerId }] = await sql<{ provider_id: string }>(app, `select provider_id from resource where id = ?`, [f.resourceUuid]);
    const version = async () => Number((await sql<{ v: string }>(app, `select coalesce((select version from provider_catalogue where provider_id = ?), 0) as v`, [providerId]))[0]!.v);
    const before = await version();
    await sql(app, `update resource set public_name = 'Renamed' where id = ?`, [f.resourceUuid]);
    expect(await version()).toBe(before + 1);
    await sql(app, `update product set name = 'Renamed' where id = ?`, [f.productUuid]);
    expect(await version()).toBe(before + 2);
    await sql(app, `delete from resource_product where resource_id = ?`, [f.resourceUuid]);
    expect(await version()).toBe(before + 3);
    await sql(app, `update provider set time_zone = 'Europe/Vienna' where id = ?`, [providerId]);
    expect(await version()).toBe(before + 4);
    // A booking changes none of it.
    expect((await book(app.anonymous, f)).status).toBe(201);
    await sql(app, `update provider set name = 'Renamed' where id = ?`, [providerId]);
    expect(await version()).toBe(before + 4);
  });
});
