import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { Job } from 'kubernetes-models/batch/v1';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../services/kernel/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const KUBERNETES = join(ROOT, 'deploy/kubernetes');

/** The kubernetes-models class (its JSON schema) of each kind the manifests use. */
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/Namespace': Namespace,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
};

interface Manifest {
  file: string;
  doc: any;
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(name) ? [path] : [];
  });
}

const manifests: Manifest[] = yamlFiles(KUBERNETES).flatMap((file) =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((document) => {
    expect(document.errors, relative(ROOT, file)).toEqual([]);
    return { file: relative(KUBERNETES, file), doc: document.toJS() };
  }),
);
const inBase = (kind: string, name?: string) =>
  manifests.filter((m) => m.file.startsWith('base/') && m.doc.kind === kind && (!name || m.doc.metadata?.name === name)).map((m) => m.doc);
const one = (kind: string, name: string) => {
  const found = inBase(kind, name);
  expect(found, `${kind} ${name}`).toHaveLength(1);
  return found[0];
};
const overlayPatch = (kind: string, name: string) =>
  manifests.find((m) => m.file.startsWith('overlays/example/') && m.doc.kind === kind && m.doc.metadata?.name === name)?.doc;

/** The environment a pod of the example overlay gets: the ConfigMap and the Secret, each with the overlay's patch. */
function exampleEnvironment(): Record<string, string> {
  return {
    ...one('ConfigMap', 'booking-config').data,
    ...overlayPatch('ConfigMap', 'booking-config')?.data,
    ...one('Secret', 'booking-secrets').stringData,
    ...overlayPatch('Secret', 'booking-secrets')?.stringData,
  };
}

const containersOf = (workload: any): any[] => workload.spec.template.spec.containers;

/** `node dist/<path>.js …` must run a compiled source that exists. */
function expectEntryPoint(command: string[], where: string): void {
  expect(command[0], where).toBe('node');
  const match = /^dist\/(.+)\.js$/.exec(command[1] ?? '');
  expect(match, `${where}: ${command.join(' ')}`).not.toBeNull();
  expect(existsSync(join(ROOT, `${match![1]}.ts`)), `${where}: ${match![1]}.ts`).toBe(true);
}

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('every manifest validates against the Kubernetes schema of its kind', () => {
    const resources = manifests.filter((m) => m.doc.kind !== 'Kustomization');
    expect(resources.length).toBeGreaterThanOrEqual(14);
    for (const { file, doc } of resources) {
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${file}: no schema for ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc).validate(), file).not.toThrow();
    }
  });

  it('the schema check itself refuses a broken manifest', () => {
    const broken = structuredClone(one('Deployment', 'booking-gateway'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'four thousand';
    expect(() => new Deployment(broken).validate()).toThrow();
  });

  it('each kustomization names files that exist, and the base lists every manifest beside it', () => {
    for (const { file, doc } of manifests.filter((m) => m.doc.kind === 'Kustomization')) {
      const dir = join(KUBERNETES, dirname(file));
      const entries = [...(doc.resources ?? []), ...(doc.patches ?? []).map((patch: { path: string }) => patch.path)];
      for (const entry of entries) {
        const path = join(dir, entry);
        expect(existsSync(path) && (!statSync(path).isDirectory() || existsSync(join(path, 'kustomization.yaml'))), `${file}: ${entry}`).toBe(true);
      }
    }
    const base = parseYaml(readFileSync(join(KUBERNETES, 'base/kustomization.yaml'), 'utf8'));
    const beside = readdirSync(join(KUBERNETES, 'base')).filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml');
    expect([...base.resources].sort()).toEqual(beside.sort());
  });

  it('has the parts an operator needs: gateway Deployment, Service, HPA on CPU, PDBs, worker, migration Job, Ingress, ConfigMap, Secret', () => {
    const hpa = one('HorizontalPodAutoscaler', 'booking-gateway');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'booking-gateway' });
    expect(hpa.spec.metrics).toContainEqual(expect.objectContaining({ type: 'Resource', resource: expect.objectContaining({ name: 'cpu' }) }));
    one('Deployment', 'booking-worker');
    expectEntryPoint(containersOf(one('Job', 'booking-migrate'))[0].command, 'migration Job');
    expect(containersOf(one('Job', 'booking-migrate'))[0].command.slice(2)).toEqual(['up']);
    expect(inBase('PodDisruptionBudget')).toHaveLength(2);
    const ingress = one('Ingress', 'booking');
    expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({ name: 'booking-gateway', port: { name: 'http' } });
    expect(one('Service', 'booking-gateway').spec.ports.map((port: { name: string }) => port.name)).toContain('http');
  });

  it('selectors of Services and PodDisruptionBudgets match the pods of their Deployment', () => {
    const labelsOf = (name: string) => one('Deployment', name).spec.template.metadata.labels as Record<string, string>;
    const matches = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    for (const deployment of inBase('Deployment')) {
      expect(matches(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels), deployment.metadata.name).toBe(true);
    }
    expect(matches(one('Service', 'booking-gateway').spec.selector, labelsOf('booking-gateway'))).toBe(true);
    expect(matches(one('Service', 'booking-worker-metrics').spec.selector, labelsOf('booking-worker'))).toBe(true);
    expect(matches(one('PodDisruptionBudget', 'booking-gateway').spec.selector.matchLabels, labelsOf('booking-gateway'))).toBe(true);
    expect(matches(one('PodDisruptionBudget', 'booking-worker').spec.selector.matchLabels, labelsOf('booking-worker'))).toBe(true);
  });

  it('probes, ports and commands agree with the code and the settings', () => {
    const config = loadConfig(exampleEnvironment());
    const gateway = containersOf(one('Deployment', 'booking-gateway'))[0];
    const worker = containersOf(one('Deployment', 'booking-worker'))[0];
    expectEntryPoint(gateway.command, 'gateway');
    expect(gateway.command[1]).toBe('dist/schema/gateway.js');
    expectEntryPoint(worker.command, 'worker');
    expect(worker.command[1]).toBe('dist/worker/main.js');
    const portNamed = (container: any, name: string) => container.ports.find((port: { name: string }) => port.name === name)?.containerPort;
    expect(portNamed(gateway, 'http')).toBe(config.port);
    expect(portNamed(worker, 'health')).toBe(config.workerHealthPort);
    for (const [container, port] of [
      [gateway, 'http'],
      [worker, 'health'],
    ] as const) {
      expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port });
    }
    // The grace period outlasts the delay before the drain plus the drain itself (10 s).
    expect(one('Deployment', 'booking-gateway').spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.shutdownDelayMs + 10_000);
  });

  it('every setting in the ConfigMap and Secret is one the service reads, and together they form a valid production configuration', () => {
    const env = exampleEnvironment();
    for (const name of Object.keys(env)) expect(CONFIG_VARIABLES, name).toContain(name);
    const config = loadConfig(env);
    expect(config).toMatchObject({ production: true, migrateOnStart: false, createDatabaseIfMissing: false, queuePrefix: '{booking}' });
    expect(config.directDatabaseUrl).not.toBe(config.databaseUrl);
    expect(config.redisClusterNodes).toHaveLength(3);
    // The base alone (placeholders) is a valid configuration too.
    expect(() => loadConfig({ ...one('ConfigMap', 'booking-config').data, ...one('Secret', 'booking-secrets').stringData })).not.toThrow();
  });

  it('every pod runs as non-root with resource requests and limits', () => {
    for (const workload of [...inBase('Deployment'), ...inBase('Job')]) {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot, workload.metadata.name).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      for (const container of pod.containers) {
        expect(container.securityContext.allowPrivilegeEscalation, container.name).toBe(false);
        expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.resources.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
        expect(container.envFrom).toEqual([{ configMapRef: { name: 'booking-config' } }, { secretRef: { name: 'booking-secrets' } }]);
      }
    }
  });
});

describe('docker-compose.yml and Dockerfile', () => {
  const compose = parseYaml(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

  it('runs every process of the image with node dist/…, health checks on /readyz, and a stop grace longer than the drain', () => {
    for (const name of ['migrate', 'gateway', 'worker']) expectEntryPoint(compose.services[name].command, `compose ${name}`);
    expect(compose.services.gateway.healthcheck.test.join(' ')).toContain(':4000/readyz');
    expect(compose.services.worker.healthcheck.test.join(' ')).toContain(`:${compose.services.worker.environment.WORKER_HEALTH_PORT}/readyz`);
    for (const name of ['gateway', 'worker']) {
      expect(compose.services[name].image).toBe(compose.services.migrate.image);
      expect(Number.parseInt(compose.services[name].stop_grace_period, 10)).toBeGreaterThan(10);
      for (const variable of Object.keys(compose.services[name].environment)) expect(CONFIG_VARIABLES, variable).toContain(variable);
    }
  });

  it('builds in stages and runs as a non-root user with NODE_ENV=production and plain node', () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(3);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).toMatch(/NODE_ENV=production/);
    expect(dockerfile).toMatch(/^USER 1000:1000$/m);
    // Files the gateway reads at run time besides dist/: the booking page's browser files (schema/web/static-assets.ts).
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).toMatch(/^COPY schema\/web\/public \.\/schema\/web\/public$/m);
    expect(existsSync(join(ROOT, 'schema/web/public/booking.js'))).toBe(true);
    const cmd = JSON.parse(/^CMD (.+)$/m.exec(dockerfile)![1]!) as string[];
    expectEntryPoint(cmd, 'Dockerfile CMD');
  });
});
