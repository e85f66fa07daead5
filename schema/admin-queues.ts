import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Queue } from 'bullmq';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Config } from '../services/kernel/config.js';
import { QUEUES } from '../services/kernel/jobs.js';
import type { RedisClient } from '../services/kernel/redis.js';
import { presentsToken } from './observability.js';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/**
 * The queue dashboard (bull-board) at /admin/queues, behind ADMIN_TOKEN
 * (Bearer, or Basic with the token as password so a browser can log in).
 * Not mounted at all without ADMIN_TOKEN. It reads the queues of this
 * deployment (QUEUE_PREFIX) over the gateway's Redis connection.
 */
export function adminQueues(config: Config, connection: RedisClient): { router: express.Router; close(): Promise<void> } | undefined {
  const token = config.adminToken;
  if (!token) return undefined;
  const queues = Object.values(QUEUES).map((name) => {
    const queue = new Queue(name, { connection, prefix: config.queuePrefix });
    queue.on('error', () => undefined);
    return queue;
  });
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({ queues: queues.map((queue) => new BullMQAdapter(queue)), serverAdapter, options: { uiConfig: { boardTitle: 'Booking queues' } } });
  const router = express.Router();
  router.use((req: Request, res: Response, next: NextFunction) => {
    if (presentsToken(req, token)) return next();
    res.status(401).set('WWW-Authenticate', 'Basic realm="queues", charset="UTF-8"').json({ error: 'ADMIN_TOKEN required (Bearer, or Basic with the token as password)' });
  });
  router.use(serverAdapter.getRouter() as express.Router);
  return { router, close: async () => void (await Promise.all(queues.map((queue) => queue.close()))) };
}
