import 'reflect-metadata';
import pg from 'pg';
import { initOrm } from '../../services/kernel/orm.js';
import { TEST_DATABASE_URL } from './env.js';

/** Recreates the test database from the migrations once per run. */
export default async function setup(): Promise<void> {
  const url = new URL(TEST_DATABASE_URL);
  const name = url.pathname.slice(1);
  if (!/test/.test(name)) throw new Error(`Refusing to reset ${name}: the test database name must contain "test"`);
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
  const orm = await initOrm(TEST_DATABASE_URL);
  await orm.close();
}
