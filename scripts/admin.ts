/**
 * Administration of CRM integrations.
 *
 *   npm run admin -- create-crm <crmId> [--language de|en]   prints the new key as the last line
 *   npm run admin -- rotate-key <crmId>                      prints the replacement key as the last line
 *   npm run admin -- list-crms
 */
import 'reflect-metadata';
import { createCrm, listCrms, rotateCrmKey } from '../services/crm/crm.service.js';
import { loadConfigOrExit } from '../services/kernel/config.js';
import { DomainError } from '../services/kernel/errors.js';
import { initOrm, startupOptions } from '../services/kernel/orm.js';

const USAGE = `usage:
  npm run admin -- create-crm <crmId> [--language de|en]
  npm run admin -- rotate-key <crmId>
  npm run admin -- list-crms`;

const [command, ...args] = process.argv.slice(2);
const positional = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
const languageIndex = args.indexOf('--language');
const language = languageIndex >= 0 ? args[languageIndex + 1] : 'de';

if (!command || !['create-crm', 'rotate-key', 'list-crms'].includes(command)) {
  console.error(USAGE);
  process.exit(2);
}
if (command !== 'list-crms' && !positional[0]) {
  console.error(USAGE);
  process.exit(2);
}
if (language !== 'de' && language !== 'en') {
  console.error('--language must be de or en');
  process.exit(2);
}

const config = loadConfigOrExit();
const orm = await initOrm(config.databaseUrl, {}, config.databasePool, startupOptions(config));
const em = orm.em.fork();
try {
  if (command === 'create-crm') {
    const { crm, key } = await createCrm(em, positional[0]!, language);
    console.error(`Created CRM ${crm.id}. Send this key as X-SERVICE-CLIENT-ID; it is shown only once:`);
    console.log(key);
  } else if (command === 'rotate-key') {
    const key = await rotateCrmKey(em, positional[0]!);
    console.error(`New key for CRM ${positional[0]}; the old key no longer works:`);
    console.log(key);
  } else {
    for (const crm of await listCrms(em)) console.log(`${crm.id}\tlanguage=${crm.language}\tkey issued ${crm.keyIssuedAt.toISOString()}`);
  }
} catch (error) {
  console.error(error instanceof DomainError ? error.message : error);
  process.exitCode = 1;
} finally {
  await orm.close();
}
