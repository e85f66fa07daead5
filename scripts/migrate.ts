/**
 * `npm run migrate` (or `node dist/scripts/migrate.js` in the image, e.g. as a
 * Kubernetes Job before a rollout): creates the database when it is missing
 * and DB_CREATE_IF_MISSING allows it, then applies pending migrations under
 * the same advisory lock the processes use at start, over DIRECT_DATABASE_URL
 * (else DATABASE_URL). `npm run migrate:status` (`… migrate.js status`)
 * lists executed and pending migrations and changes nothing.
 */
import 'reflect-metadata';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { ensureDatabase, migrateDatabase, migrationStatus } from '../services/kernel/orm.js';

const command = process.argv[2] ?? 'up';
if (command !== 'up' && command !== 'status') {
  console.error(`Unknown command ${command}; use: migrate [up|status]`);
  process.exit(2);
}
const config = loadConfigOrExit();
const database = new URL(config.directDatabaseUrl).pathname.slice(1);

try {
  if (command === 'status') {
    const { executed, pending } = await migrationStatus(config.directDatabaseUrl);
    console.log(`database ${database}: ${executed.length} executed, ${pending.length} pending`);
    for (const name of executed) console.log(`  executed  ${name}`);
    for (const name of pending) console.log(`  pending   ${name}`);
  } else {
    if (config.createDatabaseIfMissing) await ensureDatabase(config.directDatabaseUrl);
    const applied = await migrateDatabase(config.directDatabaseUrl);
    console.log(applied.length ? `database ${database}: applied ${applied.join(', ')}` : `database ${database}: up to date`);
  }
} catch (error) {
  console.error(`migrate ${command} failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
