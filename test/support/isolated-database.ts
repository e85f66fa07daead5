import pg from 'pg';
import { TEST_DATABASE_URL } from './env.js';

/**
 * A database of its own for a suite that runs a worker: the outbox relay
 * takes every pending row of its database, so a worker of another suite on
 * the shared test database would send this suite's mails (with its own
 * transport) and this suite's worker would send theirs. Named after the test
 * database plus `suffix`, dropped first so it starts empty; startTestApp
 * creates and migrates it (pass the URL as `config.databaseUrl`).
 */
export async function isolatedDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(TEST_DATABASE_URL);
  const name = `${decodeURIComponent(url.pathname.slice(1))}_${suffix}`;
  if (!/test/.test(name) || !/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`Refusing to use ${name} as a test database`);
  const drop = async () => {
    const admin = new URL(url);
    admin.pathname = '/postgres';
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    try {
      await client.query(`drop database if exists "${name}" with (force)`);
    } finally {
      await client.end();
    }
  };
  await drop();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { url: own.toString(), drop };
}
