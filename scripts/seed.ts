/**
 * Demo data in one command: `npm run seed` (or `npm run seed -- --crm <crmId>`).
 * Creates a demo CRM, a provider, products, two resources with a week of
 * BOOKABLE timeslots, and prints the CRM's key (last line of stdout) and URLs
 * to try. Safe to run again: nothing is created twice; the key is replaced.
 */
import 'reflect-metadata';
import { DEMO_CRM_ID, seedDemoData } from '../services/demo/demo-seed.service.js';
import { systemClock } from '../services/kernel/clock.js';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { DomainError } from '../services/kernel/errors.js';
import { createLogger } from '../services/kernel/logger.js';
import { initOrm } from '../services/kernel/orm.js';

const args = process.argv.slice(2);
const crmIndex = args.indexOf('--crm');
const crmId = crmIndex >= 0 ? args[crmIndex + 1] : DEMO_CRM_ID;
if (!crmId || args.some((arg, i) => arg !== '--crm' && args[i - 1] !== '--crm')) {
  console.error('usage: npm run seed [-- --crm <crmId>]');
  process.exit(2);
}

const config = loadConfigOrExit();
const orm = await initOrm(config.databaseUrl, {}, config.databasePool);
try {
  const result = await seedDemoData({ em: orm.em, clock: systemClock, config, logger: createLogger('warn') }, crmId);
  const base = config.publicBaseUrl.replace(/\/$/, '');
  const [flat, court] = result.resources;
  console.log(`Demo CRM "${result.crmId}" ${result.crmCreated ? 'created' : 'already there (its key was replaced)'}; ${result.timeslotsCreated} timeslot(s) added.`);
  console.log('');
  console.log('Try:');
  console.log(`  booking page:       ${base}/book/${flat!.uuid}`);
  console.log(`  listing (public):   ${base}/resources/${flat!.uuid}/upcoming_bookables`);
  console.log(`  group slot (8 places): ${base}/resources/${court!.uuid}/upcoming_bookables?languageTag=en&groupFormat=EEEE,%20d%20MMMM`);
  console.log(`  GraphQL:            ${base}/graphql`);
  console.log(`  REST reference:     ${base}/docs  (OpenAPI: ${base}/openapi.json)`);
  console.log(`  CRM API:            curl -H "X-SERVICE-CLIENT-ID: <key>" ${base}/crms/${result.crmId}/provider/${encodeURIComponent(result.providerReference)}/resources`);
  console.log('');
  console.log(`Key of CRM ${result.crmId} (send as X-SERVICE-CLIENT-ID; shown only now):`);
  console.log(result.key);
} catch (error) {
  console.error(error instanceof DomainError ? error.message : error);
  process.exitCode = 1;
} finally {
  await orm.close();
}
