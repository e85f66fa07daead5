import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Api } from '../lib/http.js';
import { completeHold, nextConsumerEmail, reserve } from '../lib/booking.js';
import { benchPool } from '../lib/db.js';
import { seedAll } from '../seed.js';
import { CRM_ID, DATABASE_URL, issueCrmKey, resetStores, startService } from '../service.js';

const workDir = mkdtempSync(join(tmpdir(), 'steady-'));
await resetStores();
const service = await startService(workDir, Date.now() + 120_000);
const db = benchPool(DATABASE_URL);
const api = new Api(service.baseUrl, CRM_ID, await issueCrmKey(service.env));
const seed = await seedAll(api, db, { apiBookingDeadline: Date.now() + 5_000 });
const clients = Number(process.env.CLIENTS ?? 6);
const queue = [...seed.p1.slots];
let done = 0; const t0 = performance.now();
console.error(`load start ${new Date().toISOString()} slots ${queue.length}`);
await Promise.all(Array.from({ length: clients }, async () => {
  while (queue.length) {
    const slot = queue.shift()!;
    const r = await reserve(api, { ...slot, appointmentId: null });
    if (r.status !== 200) { console.error('reserve', r.status); continue; }
    const b = await completeHold(api, slot, r.body, nextConsumerEmail('st'));
    if (b.status !== 201) console.error('create', b.status);
    done++;
  }
}));
console.error(`load end: ${done} pairs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
await service.stop();
await db.end();
process.exit(0);
