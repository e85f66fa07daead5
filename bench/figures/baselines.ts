import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { flood } from '../http-load.js';
import { runToEnd } from '../lib/children.js';
import { round } from '../lib/stats.js';
import { BENCH_DATABASE } from '../service.js';
import { baselineFigure, type Figure } from './figure.js';

export const B0_WHAT = 'POST /graphql { __typename }, 50 connections';
export const B1_WHAT = 'pgbench 16 clients: guarded UPDATE … capacity_left > 0 + INSERT on one row';

/** B0: what the gateway answers when an answer costs nothing: Apollo `{ __typename }`, 50 connections. */
export async function measureB0(baseUrl: string, seconds: number): Promise<Figure> {
  const result = await flood({
    url: `${baseUrl}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __typename }' }),
    connections: 50,
    seconds,
  });
  return baselineFigure('B0', B0_WHAT, result.requestsPerSecond, 'req/s', { ...roundAll(result) });
}

const SCRIPT = `BEGIN;
UPDATE bench_slot SET capacity_left = capacity_left - 1 WHERE id = 1 AND capacity_left > 0;
INSERT INTO bench_booking (slot_id) VALUES (1);
END;
`;

/**
 * B1 hot: what PostgreSQL does when every booking hits one row: a guarded
 * capacity decrement plus an insert per transaction, 16 pgbench clients, on
 * scratch tables of the bench database (capacity far beyond what 5 s use).
 */
export async function measureB1(db: pg.Pool, workDir: string, seconds: number): Promise<Figure> {
  await db.query(`drop table if exists bench_booking, bench_slot`);
  await db.query(`create table bench_slot (id int primary key, capacity_left int not null)`);
  await db.query(`insert into bench_slot values (1, 1000000000)`);
  await db.query(`create table bench_booking (id bigserial primary key, slot_id int not null, booked_at timestamptz not null default now())`);
  const script = join(workDir, 'b1-hot.sql');
  writeFileSync(script, SCRIPT);
  try {
    const run = await runToEnd(
      'pgbench',
      ['-n', '-c', '16', '-j', '2', '-T', String(seconds), '-f', script, '-h', '127.0.0.1', '-p', '5432', '-U', 'postgres', BENCH_DATABASE],
      { timeoutMs: (seconds + 30) * 1000, env: { ...process.env, PGCONNECT_TIMEOUT: '10' } },
    );
    const tps = /tps = ([\d.]+) \((?:without initial connection time|excluding connections establishing)\)/.exec(run.stdout);
    const latency = /latency average = ([\d.]+) ms/.exec(run.stdout);
    const processed = /number of transactions actually processed: (\d+)/.exec(run.stdout);
    const failed = /number of failed transactions: (\d+)/.exec(run.stdout);
    const details = {
      clients: 16,
      seconds,
      transactions: processed ? Number(processed[1]) : null,
      failedTransactions: failed ? Number(failed[1]) : null,
      latencyAverageMs: latency ? Number(latency[1]) : null,
    };
    if (!tps) return baselineFigure('B1 hot', B1_WHAT, null, 'TPS', details, `pgbench gave no TPS (exit ${run.code}${run.timedOut ? ', timed out' : ''}): ${run.stderr.trim().slice(-300)}`);
    return baselineFigure('B1 hot', B1_WHAT, Number(tps[1]), 'TPS', details);
  } finally {
    await db.query(`drop table if exists bench_booking, bench_slot`);
  }
}

export function roundAll<T extends object>(values: T): T {
  return Object.fromEntries(Object.entries(values).map(([key, value]) => [key, typeof value === 'number' ? round(value, 1) : value])) as T;
}
