import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
}

/**
 * A local HTTP endpoint for webhook tests: records every POST, answers
 * `status` (200 by default), and can be stopped and started again on the
 * same port to play an endpoint that is down for a while.
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  status = 200;
  private server: Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, body, json: JSON.parse(body) });
        res.writeHead(this.status).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    this.port = typeof address === 'object' && address ? address.port : this.port;
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** Polls `probe` until it returns a truthy value (at most `timeoutMs`). */
export async function eventually<T>(probe: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
