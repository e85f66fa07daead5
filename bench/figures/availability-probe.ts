/**
 * The availability probe's own process (see probeAppointmentsApart): a CRM
 * is another client than the visitors flooding the listing, and the flood's
 * load generator (in the benchmark's process) would otherwise
 * make the probe's answers wait behind its own event loop. Arguments: base
 * URL, CRM id, key, provider reference. Probes until the parent sends
 * 'stop', then sends its samples and exits.
 */
import { Api } from '../lib/http.js';
import { probeAppointments } from './availability.js';

const [baseUrl, crmId, key, providerRef] = process.argv.slice(2);
if (!baseUrl || !crmId || !key || !providerRef || !process.send) {
  console.error('usage (forked by the benchmark): availability-probe <baseUrl> <crmId> <key> <providerRef>');
  process.exit(2);
}
let over = false;
process.on('message', (message) => {
  if (message === 'stop') over = true;
});
// The benchmark is gone (stopped or failed): nobody waits for the samples.
process.on('disconnect', () => process.exit(0));
const samples = await probeAppointments(new Api(baseUrl, crmId, key), providerRef, () => over);
process.send(samples, () => process.exit(0));
