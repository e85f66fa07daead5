import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-process.js';
import { startServerProcess } from './server-process.js';

export interface Nginx {
  port: number;
  url: string;
  /** nginx's error log so far (for failure messages). */
  errors(): string;
  /** Points the upstream at `ports` (a reload, as `nginx -s reload`) and resolves once nginx proxies to them. */
  setUpstreams(ports: number[]): Promise<void>;
  stop(): Promise<void>;
}

/** The nginx binary (Debian's package installs /usr/sbin/nginx), or undefined when it is not installed. */
export function nginxBinary(): string | undefined {
  for (const candidate of ['/usr/sbin/nginx', 'nginx']) {
    if (spawnSync(candidate, ['-v'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return undefined;
}

/**
 * A private nginx (our own child process, never the system service) on a
 * free port with its configuration, logs and temp files in a temp folder:
 * round-robin over `upstreamPorts`, passing WebSocket upgrades through, as a
 * load balancer in front of N gateways would.
 */
export async function startNginx(upstreamPorts: number[] = []): Promise<Nginx> {
  const binary = nginxBinary();
  if (!binary) throw new Error('nginx is not installed: apt-get install -y nginx (Debian)');
  const dir = mkdtempSync(join(tmpdir(), 'booking-nginx-'));
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  // Run as root, nginx hands the worker process to an unprivileged user, which must reach the temp folders.
  chmodSync(dir, 0o777);
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) chmodSync(join(dir, sub), 0o777);
  const port = await freePort();
  const configure = (ports: number[]) =>
    writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  map $http_upgrade $connection_upgrade { default upgrade; '' close; }
  upstream gateways {
${ports.length ? ports.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n') : '    server 127.0.0.1:9 down;'}
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 2m;
    location / {
      proxy_pass http://gateways;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_read_timeout 3600s;
    }
  }
}
`,
  );
  configure(upstreamPorts);
  const server = await startServerProcess({
    name: 'nginx',
    binary,
    args: ['-p', dir, '-c', join(dir, 'nginx.conf'), '-g', 'daemon off;'],
    port,
    dir,
    logFile: join(dir, 'error.log'),
    // SIGQUIT: graceful stop of the master and its worker.
    stopSignal: 'SIGQUIT',
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    port,
    url,
    errors: server.output,
    stop: server.stop,
    async setUpstreams(ports) {
      configure(ports);
      process.kill(Number(readFileSync(join(dir, 'nginx.pid'), 'utf8').trim()), 'SIGHUP');
      // New workers take the new upstream; old ones finish. Round robin: as many answers in a row as gateways reach each once.
      const until = Date.now() + 10_000;
      for (let inARow = 0; inARow < ports.length; ) {
        if (Date.now() > until) throw new Error(`nginx did not proxy to ${ports.join(', ')} after reload: ${server.output()}`);
        const res = await fetch(`${url}/livez`).catch(() => undefined);
        await res?.body?.cancel();
        if (res?.ok) inARow++;
        else {
          inARow = 0;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
  };
}
