import type pg from 'pg';
import { bookDirectly, nextConsumerEmail, reserve } from '../lib/booking.js';
import type { Slot } from '../lib/calendar.js';
import { type Api, describeFailure } from '../lib/http.js';
import { log, sleep } from '../lib/log.js';
import { percentile, round, tally } from '../lib/stats.js';
import { openSubscribers } from '../lib/ws.js';
import type { SeededResource } from '../seed.js';
import { HOLD_MINUTES } from '../service.js';
import { type Figure, limitFigure } from './figure.js';

const HOLDS = 20;

/**
 * P5: with a subscriber open on the resource, 20 holds are placed at once
 * (reserve_appointment on distinct slots) and never completed. For each
 * hold, lateness = when the subscriber received the change that frees its
 * slot (capacityLeft > 0) − the hold's expiry instant (`expires_at` of its
 * participation row, read from the database). "Exactly once": each hold's
 * slot is freed by exactly one announcement — one change from full to
 * places left as the subscriber sees it; a repeat of a value it already has
 * frees nothing (the README calls repeats harmless), a flap back to full and
 * free again counts twice — and the participation rows are gone afterwards.
 */
export async function measureP5(api: Api, db: pg.Pool, resource: SeededResource, deadline: number): Promise<Figure> {
  const freedAt = new Map<number, number[]>();
  /** Every item about a hold's slot, for the details: what was announced and when. */
  const announced = new Map<number, { wallAt: number; kind: string; capacity: number; capacityLeft: number }[]>();
  let subscriberReady = false;
  const warmupSlot = resource.slots[0]!;
  const holdSlots = resource.slots.slice(1, 1 + HOLDS);
  const holdStarts = new Set(holdSlots.map((s) => Date.parse(s.start)));
  const subscribers = await openSubscribers({
    url: api.baseUrl.replace(/^http/, 'ws') + '/graphql',
    count: 1,
    refs: [resource.id],
    concurrency: 1,
    deadline,
    onItems: (_socket, items, _at, wallAt) => {
      for (const item of items) {
        if (item.resourceUuid !== resource.id) continue;
        const start = Date.parse(item.start);
        if (start === Date.parse(warmupSlot.start)) subscriberReady = true;
        if (!holdStarts.has(start)) continue;
        announced.set(start, [...(announced.get(start) ?? []), { wallAt, kind: item.kind, capacity: item.capacity, capacityLeft: item.capacityLeft }]);
        if (item.capacityLeft > 0) freedAt.set(start, [...(freedAt.get(start) ?? []), wallAt]);
      }
    },
  });
  try {
    if (!subscribers.connected) throw new Error(`the subscriber could not connect: ${JSON.stringify(subscribers.failures)}`);
    const warmup = await bookDirectly(api, warmupSlot, nextConsumerEmail('p5-warmup'), 15_000);
    const readyUntil = Math.min(Date.now() + 8_000, deadline);
    while (!subscriberReady && Date.now() < readyUntil) await sleep(50);
    if (!subscriberReady) log(`P5: the subscriber did not see the warm-up booking (${describeFailure(warmup)}); measuring anyway`);

    const answers = await Promise.all(holdSlots.map((slot: Slot) => reserve(api, slot, 15_000)));
    const holds = answers
      .map((answer, i) => ({ answer, slot: holdSlots[i]! }))
      .filter(({ answer }) => answer.status === 200)
      .map(({ answer, slot }) => ({ slot, participationId: answer.body.participation.uuid as string, answeredAt: answer.wallAt }));
    const failed = answers.filter((a) => a.status !== 200).map(describeFailure);
    const ids = holds.map((h) => h.participationId);
    const { rows } = await db.query<{ id: string; expires_at: Date | null }>(`select id, expires_at from participation where id = any($1::uuid[])`, [ids]);
    const expiresAt = new Map(rows.map((row) => [row.id, row.expires_at?.getTime() ?? null]));
    const expiryOf = (h: (typeof holds)[number]) => expiresAt.get(h.participationId) ?? h.answeredAt + HOLD_MINUTES * 60_000;
    const lastExpiry = Math.max(...holds.map(expiryOf), Date.now());
    log(`P5: ${holds.length} holds placed${failed.length ? ` (${failed.length} refused: ${JSON.stringify(tally(failed))})` : ''}; they expire within ${((lastExpiry - Date.now()) / 1000).toFixed(1)} s`);

    // Wait for every hold to be announced free (or 15 s past the last expiry), then 2 s more to catch a second announcement.
    const waitUntil = Math.min(lastExpiry + 15_000, deadline);
    const allFreed = () => holds.every((h) => (freedAt.get(Date.parse(h.slot.start)) ?? []).length > 0);
    while (Date.now() < waitUntil && !allFreed()) await sleep(50);
    await sleep(Math.min(2_000, Math.max(0, deadline - Date.now())));

    const lateness: number[] = [];
    const announcements: number[] = [];
    const transitions: number[] = [];
    for (const hold of holds) {
      const freed = (freedAt.get(Date.parse(hold.slot.start)) ?? []).filter((at) => at >= hold.answeredAt);
      announcements.push(freed.length);
      // Changes from "no place" to "place left", as a calendar showing the slot would see them (repeats of a free value are not).
      let wasFree = false;
      let flips = 0;
      for (const a of announced.get(Date.parse(hold.slot.start)) ?? []) {
        if (a.wallAt < hold.answeredAt) continue;
        const free = a.capacityLeft > 0;
        if (free && !wasFree) flips++;
        wasFree = free;
      }
      transitions.push(flips);
      if (freed.length) lateness.push(freed[0]! - expiryOf(hold));
    }
    // A slot freed more than once if there is one, else one with repeated free values: what the subscriber saw of it.
    const repeated =
      holds.find((_, i) => transitions[i]! > 1) ?? holds.find((h) => (freedAt.get(Date.parse(h.slot.start)) ?? []).filter((at) => at >= h.answeredAt).length > 1);
    const sample = repeated
      ? (announced.get(Date.parse(repeated.slot.start)) ?? []).map((a) => `${a.kind} ${a.capacityLeft}/${a.capacity} at ${Math.round(a.wallAt - expiryOf(repeated))} ms`)
      : null;
    const { rows: left } = await db.query<{ n: string }>(`select count(*) as n from participation where id = any($1::uuid[])`, [ids]);
    const rowsLeft = Number(left[0]?.n ?? 0);
    const p99 = percentile(lateness, 99);
    return limitFigure(
      { id: 'P5', what: `${HOLDS} holds expire (HOLD_MINUTES=${HOLD_MINUTES}); lateness of the announcement that frees each`, unit: 'ms p99 late', max: 1000, target: 'p99 ≤ 1 s late, exactly once' },
      p99,
      null,
      {
        [`all ${HOLDS} holds placed`]: holds.length === HOLDS,
        'each hold freed by exactly one announcement': holds.length > 0 && transitions.every((n) => n === 1),
        'participation rows gone': rowsLeft === 0,
      },
      {
        holds: holds.length,
        reserveFailures: tally(failed),
        // Announcements that free the slot (it was shown full before): must be exactly one per hold.
        freeingAnnouncementsPerHold: tally(transitions),
        // Every announcement with places left after the hold was placed, repeats of a free value included (README: harmless).
        freeValueAnnouncementsPerHold: tally(announcements),
        p50Ms: round(percentile(lateness, 50)),
        maxMs: round(percentile(lateness, 100)),
        minMs: round(percentile(lateness, 0)),
        expiresAtFromDatabase: rows.length,
        participationRowsLeft: rowsLeft,
        announcementsOfOneSlot: sample,
        subscriptionErrors: subscribers.subscriptionErrors(),
      },
      p99 === null ? 'no hold was announced free in time' : undefined,
    );
  } finally {
    await subscribers.close();
  }
}
