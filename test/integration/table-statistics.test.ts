import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initOrm, type Orm } from '../../services/kernel/orm.js';
import { analyzeStaleTables, autovacuumOn } from '../../services/kernel/table-statistics.js';
import { TEST_DATABASE_URL } from '../support/env.js';

const TABLE = `statistics_probe_${process.pid}`;

describe('table statistics where autovacuum is off (the worker’s table-statistics job)', () => {
  let orm: Orm;
  const lastAnalyze = async () =>
    (await orm.em.fork().execute<{ at: string | null }[]>(`select last_analyze as at from pg_stat_user_tables where relname = ?`, [TABLE]))[0]?.at ?? null;
  const write = async (rows: number) => {
    const em = orm.em.fork();
    await em.transactional(async (tx) => {
      await tx.execute(`insert into ${TABLE} (id) select g from generate_series((select coalesce(max(id), 0) + 1 from ${TABLE}), (select coalesce(max(id), 0) + ? from ${TABLE})) g`, [rows]);
      // Counters reach pg_stat_user_tables when the backend reports them; make it now.
      await tx.execute('select pg_stat_force_next_flush()');
    });
    await em.execute('select pg_stat_force_next_flush()');
  };

  beforeAll(async () => {
    orm = await initOrm(TEST_DATABASE_URL, {}, { max: 1, statementTimeoutMs: 10_000, idleInTransactionTimeoutMs: 10_000 });
    await orm.em.fork().execute(`create table ${TABLE} (id int primary key)`);
  });
  afterAll(async () => {
    await orm?.em.fork().execute(`drop table if exists ${TABLE}`);
    await orm?.close();
  });

  it('analyzes a table once more rows changed than autovacuum’s threshold (50 + 10 %), not before', async () => {
    await write(40);
    let analyzed = await analyzeStaleTables(orm.em.fork(), { evenWithAutovacuum: true });
    expect(analyzed).not.toContain(TABLE);
    expect(await lastAnalyze()).toBeNull();

    await write(200);
    analyzed = await analyzeStaleTables(orm.em.fork(), { evenWithAutovacuum: true });
    expect(analyzed).toContain(TABLE);
    expect(await lastAnalyze()).not.toBeNull();
    const [stats] = await orm.em.fork().execute<{ tuples: number }[]>(`select reltuples::int as tuples from pg_class where relname = ?`, [TABLE]);
    expect(stats!.tuples).toBe(240);

    // Now 240 rows: the next ANALYZE is due after 50 + 24 more changes.
    await write(60);
    expect(await analyzeStaleTables(orm.em.fork(), { evenWithAutovacuum: true })).not.toContain(TABLE);
    await write(20);
    expect(await analyzeStaleTables(orm.em.fork(), { evenWithAutovacuum: true })).toContain(TABLE);
  });

  it('leaves the work to autovacuum where it runs', async () => {
    await write(300);
    const analyzed = await analyzeStaleTables(orm.em.fork());
    if (await autovacuumOn(orm.em.fork())) expect(analyzed).toEqual([]);
    else expect(analyzed).toContain(TABLE);
  });
});
