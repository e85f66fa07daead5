import 'reflect-metadata';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_POOL } from '../../services/kernel/config.js';
import { initOrm, type Orm } from '../../services/kernel/orm.js';
import { CrmIntegration } from '../../services/crm/crm-integration.entity.js';
import { findOneMapped, inSqlTransaction, sql, statementName } from '../../services/kernel/sql.js';
import { TEST_DATABASE_URL } from '../support/env.js';

const TABLE = `sql_helper_${process.pid}`;
const named = { databasePool: DEFAULT_DATABASE_POOL };
const unnamed = { databasePool: { ...DEFAULT_DATABASE_POOL, preparedStatements: false } };

describe('kernel/sql: hot statements with bound values, prepared once per connection', () => {
  let orm: Orm;
  beforeAll(async () => {
    orm = await initOrm(TEST_DATABASE_URL, {}, { max: 2, statementTimeoutMs: 5_000, idleInTransactionTimeoutMs: 5_000 });
    await orm.em.fork().execute(`create table ${TABLE} (id int primary key, name text not null, at timestamptz, tags jsonb)`);
  });
  afterAll(async () => {
    await orm?.em.fork().execute(`drop table if exists ${TABLE}`);
    await orm?.close();
  });

  it('sends values apart from the text: quotes, semicolons and question marks arrive as they are', async () => {
    const em = orm.em.fork();
    const name = `O'Brien"; drop table ${TABLE}; -- ?`;
    const at = new Date('2027-03-28T01:30:00.000Z');
    await sql({ em, config: named }, `insert into ${TABLE} (id, name, at, tags) values (?, ?, ?, ?::jsonb)`, [1, name, at, JSON.stringify(['a', "b'c"])]);
    const [row] = await sql<{ name: string; at: string; tags: string[] }>({ em, config: named }, `select name, at, tags from ${TABLE} where id = ?`, [1]);
    expect(row!.name).toBe(name);
    // Timestamps come back as PostgreSQL's text, as em.execute answers them.
    expect(new Date(row!.at).toISOString()).toBe(at.toISOString());
    expect(row!.tags).toEqual(['a', "b'c"]);
  });

  it('prepares a statement under its name on the connection, and not at all with DATABASE_PREPARED_STATEMENTS=false', async () => {
    const text = `select count(*)::int as n from ${TABLE} where id > ?`;
    const prepared = (em: Orm['em']) =>
      sql<{ name: string }>({ em, config: unnamed }, `select name from pg_prepared_statements where name = ?`, [statementName(text)]);
    await orm.em.fork().transactional(async (em) => {
      // One transaction is one connection: the same name is found again there.
      const [first] = await sql<{ n: number }>({ em, config: named }, text, [0]);
      const [second] = await sql<{ n: number }>({ em, config: named }, text, [100]);
      expect([first!.n, second!.n]).toEqual([1, 0]);
      expect(await prepared(em)).toHaveLength(1);
    });
    const other = `select count(*)::int as n from ${TABLE} where id < ?`;
    await orm.em.fork().transactional(async (em) => {
      await sql({ em, config: unnamed }, other, [5]);
      expect(await sql({ em, config: unnamed }, `select 1 from pg_prepared_statements where name = ?`, [statementName(other)])).toHaveLength(0);
    });
  });

  it('runs inside the EntityManager’s transaction: its writes are seen there and rolled back with it', async () => {
    await expect(
      orm.em.fork().transactional(async (em) => {
        await sql({ em, config: named }, `insert into ${TABLE} (id, name) values (?, ?)`, [2, 'inside']);
        expect(await sql({ em, config: named }, `select id from ${TABLE} where id = ?`, [2])).toHaveLength(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await sql({ em: orm.em.fork(), config: named }, `select id from ${TABLE} where id = ?`, [2])).toHaveLength(0);
  });

  it('throws the ORM’s exceptions with the SQLSTATE and constraint, as em.execute does', async () => {
    const em = orm.em.fork();
    const error = await sql({ em, config: named }, `insert into ${TABLE} (id, name) values (?, ?)`, [1, 'again']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UniqueConstraintViolationException);
    expect(error).toMatchObject({ code: '23505', constraint: `${TABLE}_pkey` });
  });

  it('refuses a call whose values do not match its placeholders before sending anything', async () => {
    await expect(sql({ em: orm.em.fork(), config: named }, `select ?::int + ?::int as n`, [1])).rejects.toThrow('sql: 1 values for 2 placeholders');
  });

  it('names a statement by its text: stable, and different texts get different names', () => {
    expect(statementName('select 1')).toBe(statementName('select 1'));
    expect(statementName('select 1')).not.toBe(statementName('select 2'));
    expect(statementName('select 1')).toMatch(/^s[A-Za-z0-9_-]{22}$/);
  });
  describe('shared reads: one round trip for callers that ask while it waits for a connection', () => {
    const SEQUENCE = `${TABLE}_reads`;
    // nextval shows which callers one execution served: each execution draws a new number.
    const DRAW = `select nextval('${SEQUENCE}')::int as n, ?::text as tag`;
    const draw = (em: Orm['em'], tag: string) => sql<{ n: number }>({ em, config: named }, DRAW, [tag], { shared: true }).then((rows) => rows[0]!.n);
    /** Resolves once a statement containing `text` runs on some connection (seen from a connection of its own). */
    const running = async (text: string) => {
      const watcher = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await watcher.connect();
      try {
        for (;;) {
          const { rows } = await watcher.query(`select 1 from pg_stat_activity where state = 'active' and query like $1 and pid <> pg_backend_pid()`, [`%${text}%`]);
          if (rows.length) return;
          await new Promise((resolve) => setImmediate(resolve));
        }
      } finally {
        await watcher.end();
      }
    };
    beforeAll(async () => {
      await orm.em.fork().execute(`create sequence ${SEQUENCE}`);
    });
    afterAll(async () => {
      await orm?.em.fork().execute(`drop sequence if exists ${SEQUENCE}`);
    });

    it('callers asking the same while the pool is busy share one execution; other values read apart', async () => {
      // Both connections of the pool are taken until the sleeps end.
      const busy = [1, 2].map(() => sql({ em: orm.em.fork(), config: named }, `select pg_sleep(0.3) as busy_shared_reads`));
      await running('busy_shared_reads');
      const same = await Promise.all([1, 2, 3, 4].map(() => draw(orm.em.fork(), 'a')));
      const [other] = await Promise.all([draw(orm.em.fork(), 'b'), ...busy]);
      expect(new Set(same).size).toBe(1);
      expect(other).not.toBe(same[0]);
    });

    it('a caller that asks once the read has its connection reads for itself', async () => {
      const slow = `select nextval('${SEQUENCE}')::int as n, pg_sleep(0.3) is null as slow_shared_read, ?::text as tag`;
      const read = (em: Orm['em']) => sql<{ n: number }>({ em, config: named }, slow, ['c'], { shared: true }).then((rows) => rows[0]!.n);
      const first = read(orm.em.fork());
      await running('slow_shared_read');
      const [a, b] = await Promise.all([first, read(orm.em.fork())]);
      expect(b).not.toBe(a);
    });

    it('does not share inside a transaction: its statements read on its own connection', async () => {
      const drawn = await orm.em.fork().transactional((em) => Promise.all([draw(em, 'd'), draw(em, 'd')]));
      expect(drawn[0]).not.toBe(drawn[1]);
    });

    it('a failed read fails every caller that shared it, and the next caller reads afresh', async () => {
      const failing = `select 1 / (?::int - 1) as n`;
      const busy = [1, 2].map(() => sql({ em: orm.em.fork(), config: named }, `select pg_sleep(0.2) as busy_failing_read`));
      await running('busy_failing_read');
      const results = await Promise.allSettled([1, 2, 3].map(() => sql({ em: orm.em.fork(), config: named }, failing, [1], { shared: true })));
      await Promise.all(busy);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
      expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: '22012' });
      expect(await sql<{ n: number }>({ em: orm.em.fork(), config: named }, failing, [2], { shared: true })).toEqual([{ n: 1 }]);
    });
  });

  describe('inSqlTransaction: BEGIN and COMMIT travel with the statements', () => {
    const ctxOf = (config = named) => ({ em: orm.em.fork(), config });
    const ids = async (from: number, to: number) =>
      (await sql<{ id: number }>(ctxOf(), `select id from ${TABLE} where id between ? and ? order by id`, [from, to])).map((r) => r.id);
    const backend = (ctx: Parameters<typeof sql>[0]) => sql<{ pid: number }>(ctx, `select pg_backend_pid() as pid`).then((rows) => rows[0]!.pid);

    for (const [label, config] of [
      ['named statements', named],
      ['unnamed statements (DATABASE_PREPARED_STATEMENTS=false)', unnamed],
    ] as const) {
      it(`runs every statement in one transaction on one connection and commits at the end (${label})`, async () => {
        const base = config === named ? 100 : 200;
        await inSqlTransaction(ctxOf(config), async (tx) => {
          const first = await backend(tx);
          await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 1, 'a']);
          // Another connection does not see it before the commit.
          expect(await ids(base, base + 9)).toEqual([]);
          await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 2, 'b']);
          expect(await backend(tx)).toBe(first);
          const [state] = await sql<{ open: boolean }>(tx, `select now() = statement_timestamp() as open`);
          // Inside a transaction now() stays at its start.
          expect(state!.open).toBe(false);
        });
        expect(await ids(base, base + 9)).toEqual([base + 1, base + 2]);
      });

      it(`commits with the statement told it is the last: its writes are seen, and its locks gone, before the work ends (${label})`, async () => {
        const base = config === named ? 110 : 210;
        await sql(ctxOf(), `insert into ${TABLE} (id, name) values (?, ?)`, [base, 'locked']);
        await inSqlTransaction(ctxOf(config), async (tx) => {
          await sql(tx, `select id from ${TABLE} where id = ? for update`, [base]);
          await sql(tx, `update ${TABLE} set name = ? where id = ?`, ['committed', base], { commit: true });
          // Another connection updates the row at once: no lock is held any more, and the update is there.
          const [row] = await sql<{ name: string }>(ctxOf(), `update ${TABLE} set name = name || '!' where id = ? returning name`, [base]);
          expect(row!.name).toBe('committed!');
          await expect(sql(tx, `select 1`)).rejects.toThrow('the transaction has committed');
        });
      });

      it(`rolls back when the work throws, and when the committing statement fails, and the connection serves on (${label})`, async () => {
        const base = config === named ? 120 : 220;
        await expect(
          inSqlTransaction(ctxOf(config), async (tx) => {
            await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 1, 'thrown']);
            throw new Error('changed my mind');
          }),
        ).rejects.toThrow('changed my mind');
        const failed = await inSqlTransaction(ctxOf(config), async (tx) => {
          await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 2, 'first']);
          // Fails: the COMMIT sent with it is skipped, the whole transaction rolls back.
          await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 2, 'duplicate'], { commit: true });
        }).catch((error: unknown) => error);
        expect(failed).toBeInstanceOf(UniqueConstraintViolationException);
        expect(await ids(base, base + 9)).toEqual([]);
        // The pool (of two) still works on both connections, outside any transaction.
        for (let i = 0; i < 4; i++) {
          await inSqlTransaction(ctxOf(config), async (tx) => {
            await sql(tx, `insert into ${TABLE} (id, name) values (?, ?)`, [base + 3 + i, 'after'], { commit: true });
          });
        }
        expect(await ids(base, base + 9)).toEqual([base + 3, base + 4, base + 5, base + 6]);
      });
    }

    it('a failure in the first statement (sent with BEGIN) leaves nothing behind', async () => {
      const error = await inSqlTransaction(ctxOf(), (tx) => sql(tx, `select 1 / ?::int as n`, [0])).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: '22012' });
      const [row] = await sql<{ n: number }>(ctxOf(), `select 1 as n`);
      expect(row!.n).toBe(1);
    });
  });

  describe('findOneMapped: an entity from a plain select', () => {
    const SELECT = 'select * from crm_integration where id = ? limit 1';

    it('maps the row to a managed entity with typed fields; null without a row', async () => {
      const id = `mapped-${process.pid}-${Date.now()}`;
      const issued = new Date('2027-01-02T03:04:05.000Z');
      await orm.em.fork().execute('insert into crm_integration (id, key_hash, language, created_at, key_issued_at) values (?, ?, ?, ?, ?)', [id, `hash-${id}`, 'en', issued, issued]);
      const em = orm.em.fork();
      const crm = await findOneMapped(em, CrmIntegration, SELECT, [id]);
      expect(crm).toBeInstanceOf(CrmIntegration);
      expect(crm).toMatchObject({ id, keyHash: `hash-${id}`, language: 'en' });
      expect(crm!.keyIssuedAt).toEqual(issued);
      // Managed: a change is written by the next flush.
      crm!.language = 'de';
      await em.flush();
      expect((await orm.em.fork().execute<{ language: string }[]>('select language from crm_integration where id = ?', [id]))[0]!.language).toBe('de');
      expect(await findOneMapped(orm.em.fork(), CrmIntegration, SELECT, ['no-such-crm'])).toBeNull();
    });

    it('answers an entity the EntityManager holds as it is, with changes not yet flushed; reads in its transaction', async () => {
      const id = `held-${process.pid}-${Date.now()}`;
      await orm.em.fork().transactional(async (em) => {
        const created = em.create(CrmIntegration, { id, keyHash: `hash-${id}`, language: 'de', createdAt: new Date(), keyIssuedAt: new Date() });
        await em.flush();
        // Only this transaction sees the row.
        expect(await findOneMapped(orm.em.fork(), CrmIntegration, SELECT, [id])).toBeNull();
        created.language = 'en';
        const found = await findOneMapped(em, CrmIntegration, SELECT, [id]);
        expect(found).toBe(created);
        expect(found!.language).toBe('en');
      });
      expect((await orm.em.fork().execute<{ language: string }[]>('select language from crm_integration where id = ?', [id]))[0]!.language).toBe('en');
    });
  });
});
