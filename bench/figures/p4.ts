import { performance } from 'node:perf_hooks';
import { bookDirectly, nextConsumerEmail } from '../lib/booking.js';
import type { Slot } from '../lib/calendar.js';
import { type Api, describeFailure, type HttpAnswer } from '../lib/http.js';
import { watchClientLoad } from '../lib/client-load.js';
import { log, sleep } from '../lib/log.js';
import { percentile, round, tally } from '../lib/stats.js';
import { openSubscribers } from '../lib/ws.js';
import type { SeededResource } from '../seed.js';
import { type Figure, limitFigure } from './figure.js';

const BOOKINGS = 20;
const INTERVAL_MS = 200; // 5 bookings/s

/** Hands out slots of a resource, so that P4 and its stretch run never book the same slot. */
export class SlotCursor {
  private next = 0;
  constructor(private readonly slots: Slot[]) {}
  take(): Slot {
    const slot = this.slots[this.next++];
    if (!slot) throw new Error('out of slots');
    return slot;
  }
}

/**
 * P4: `sockets` graphql-ws sockets subscribe to capacityChanged of one
 * resource; once every socket has seen a warm-up booking (so its
 * subscription is live), 20 bookings land at 5/s. For each socket and
 * booking, latency = when the socket received the slot's change − when the
 * booking's HTTP answer arrived. It is negative when the change overtook the
 * answer; the p99 is taken over the values as they are.
 */
export async function measureP4(
  api: Api,
  resource: SeededResource,
  cursor: SlotCursor,
  options: { id: string; sockets: number; openDeadline: number; deadline: number; stretch?: boolean },
): Promise<Figure> {
  const seen = new Map<number, Float64Array>();
  const track = (slot: Slot) => {
    const row = new Float64Array(options.sockets).fill(Number.NaN);
    seen.set(Date.parse(slot.start), row);
    return row;
  };
  const wsUrl = api.baseUrl.replace(/^http/, 'ws') + '/graphql';
  const openStarted = performance.now();
  const subscribers = await openSubscribers({
    url: wsUrl,
    count: options.sockets,
    refs: [resource.id],
    concurrency: 100,
    deadline: options.openDeadline,
    onItems: (socket, items, at) => {
      for (const item of items) {
        if (item.resourceUuid !== resource.id || item.capacityLeft !== 0) continue;
        const row = seen.get(Date.parse(item.start));
        if (row && Number.isNaN(row[socket]!)) row[socket] = at;
      }
    },
  });
  const openSeconds = (performance.now() - openStarted) / 1000;
  log(`${options.id}: ${subscribers.connected}/${options.sockets} sockets connected in ${openSeconds.toFixed(1)} s${Object.keys(subscribers.failures).length ? `; failures ${JSON.stringify(subscribers.failures)}` : ''}`);

  try {
    // Warm-up: a booking every socket must see, so that every subscription is known to be live before measuring.
    const ready = new Uint8Array(options.sockets);
    let readyCount = 0;
    const warmups: string[] = [];
    for (let attempt = 0; attempt < 3 && readyCount < subscribers.connected && Date.now() < options.deadline; attempt++) {
      const slot = cursor.take();
      const row = track(slot);
      const answer = await bookDirectly(api, slot, nextConsumerEmail('p4-warmup'), 15_000);
      warmups.push(answer.status === 201 ? 'ok' : describeFailure(answer));
      const until = Math.min(Date.now() + 8_000, options.deadline);
      while (Date.now() < until) {
        readyCount = 0;
        for (let s = 0; s < options.sockets; s++) {
          if (!Number.isNaN(row[s]!)) ready[s] = 1;
          readyCount += ready[s]!;
        }
        if (readyCount >= subscribers.connected) break;
        await sleep(100);
      }
    }
    log(`${options.id}: ${readyCount} sockets saw the warm-up booking; ${BOOKINGS} bookings at ${1000 / INTERVAL_MS}/s`);

    const bookings: { slot: Slot; row: Float64Array; answer?: HttpAnswer }[] = [];
    const clientLoad = watchClientLoad();
    const started = performance.now();
    const sent: Promise<void>[] = [];
    for (let i = 0; i < BOOKINGS && Date.now() < options.deadline; i++) {
      await sleep(started + i * INTERVAL_MS - performance.now());
      const slot = cursor.take();
      const booking: (typeof bookings)[number] = { slot, row: track(slot) };
      bookings.push(booking);
      sent.push(bookDirectly(api, slot, nextConsumerEmail('p4'), 15_000).then((answer) => void (booking.answer = answer)));
    }
    await Promise.all(sent);
    const booked = bookings.filter((b) => b.answer?.status === 201);
    // Changes not received within 5 s of the last answer (or by the phase's deadline) count as missing.
    const answered = Date.now();
    const waitUntil = Math.min(answered + 5_000, options.deadline);
    const delivered = () => booked.reduce((n, b) => n + [...ready.keys()].filter((s) => ready[s] && !Number.isNaN(b.row[s]!)).length, 0);
    while (Date.now() < waitUntil && delivered() < booked.length * readyCount) await sleep(100);
    const waitedForDeliveriesMs = Date.now() - answered;
    const client = clientLoad();

    const latencies: number[] = [];
    let missing = 0;
    for (const b of booked) {
      for (let s = 0; s < options.sockets; s++) {
        if (!ready[s]) continue;
        const at = b.row[s]!;
        if (Number.isNaN(at)) missing++;
        else latencies.push(at - b.answer!.at);
      }
    }
    const p99 = percentile(latencies, 99);
    const figure = limitFigure(
      { id: options.id, what: `capacityChanged to ${options.sockets} sockets, ${BOOKINGS} bookings at 5/s`, unit: 'ms p99', max: 250, target: `p99 ≤ 250 ms at ${options.sockets} sockets` },
      p99,
      null,
      {
        [`all ${options.sockets} sockets subscribed`]: readyCount === options.sockets,
        [`all ${BOOKINGS} bookings succeeded`]: booked.length === BOOKINGS,
        'every socket got every booking': booked.length > 0 && missing === 0,
      },
      {
        socketsConnected: subscribers.connected,
        socketsReady: readyCount,
        connectFailures: subscribers.failures,
        openSeconds: round(openSeconds),
        warmups: tally(warmups),
        bookings: bookings.length,
        bookingsSucceeded: booked.length,
        bookingFailures: tally(bookings.filter((b) => b.answer?.status !== 201).map((b) => (b.answer ? describeFailure(b.answer) : 'not sent'))),
        deliveries: latencies.length,
        missingDeliveries: missing,
        waitedForDeliveriesMs,
        p50Ms: round(percentile(latencies, 50)),
        maxMs: round(percentile(latencies, 100)),
        negativeLatencies: latencies.filter((ms) => ms < 0).length,
        benchProcessCpuPercent: client.cpuPercent,
        benchEventLoopDelayP99Ms: client.eventLoopDelayP99Ms,
        socketsDropped: subscribers.dropped(),
        subscriptionErrors: subscribers.subscriptionErrors(),
      },
      p99 === null ? 'no change was delivered' : undefined,
    );
    return options.stretch ? { ...figure, stretch: true } : figure;
  } finally {
    await subscribers.close();
  }
}
