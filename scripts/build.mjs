// @ts-check
/**
 * `npm run build`: compiles services, schema, worker and scripts to dist/ with
 * tsc (tsconfig.build.json, incremental, so an unchanged tree is quick).
 * `ensureBuilt()` is what `npm start` calls: it compiles only when dist/ is
 * missing or older than the sources, judged by the modification times of the
 * sources, their folders (adding or deleting a file) and the build settings
 * against a stamp written when a build succeeds.
 *
 *   node scripts/build.mjs              build (incremental)
 *   node scripts/build.mjs --if-stale   build only when something changed
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const BUILD_INFO = join(DIST, '.tsbuildinfo');
const SOURCE_DIRS = ['services', 'schema', 'worker', 'scripts'];
const SETTINGS = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** What `npm start` runs; if one is missing the build output is incomplete whatever the stamp says. */
const ENTRY_POINTS = ['scripts/supervisor.js', 'schema/gateway.js', 'worker/main.js'];

/** The newest modification time (ms) of a TypeScript source, a source folder or a build setting. */
function newestInputMs() {
  let newest = 0;
  const visit = (/** @type {string} */ dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const dir of SOURCE_DIRS) visit(join(ROOT, dir));
  for (const file of SETTINGS) if (existsSync(join(ROOT, file))) newest = Math.max(newest, statSync(join(ROOT, file)).mtimeMs);
  return newest;
}

/** Why dist/ needs a build, or undefined when it is up to date. */
export function staleReason() {
  if (!existsSync(STAMP)) return 'dist/ has not been built';
  if (ENTRY_POINTS.some((file) => !existsSync(join(DIST, file)))) return 'dist/ is incomplete';
  if (newestInputMs() > statSync(STAMP).mtimeMs) return 'sources changed since the last build';
  return undefined;
}

/** Runs tsc; exits the process with tsc's messages when the build fails. */
export function build() {
  let tsc;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    console.error('Cannot build dist/: TypeScript is not installed (npm ci installs it).');
    process.exit(1);
  }
  // Outputs deleted by hand are not noticed by tsc's incremental state; start over then.
  if (ENTRY_POINTS.some((file) => !existsSync(join(DIST, file)))) rmSync(BUILD_INFO, { force: true });
  // The stamp gets the time the build started, so a file saved during the build counts as newer.
  const startedAt = new Date();
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`Build failed (tsc ${result.signal ?? `exit ${result.status}`}); nothing was written to dist/.`);
    process.exit(1);
  }
  writeFileSync(STAMP, `${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt);
  console.error(`Built dist/ in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)} s`);
}

/** Builds when dist/ is missing or older than the sources. */
export function ensureBuilt() {
  const reason = staleReason();
  if (!reason) return;
  console.error(`Building dist/ (${reason}) ...`);
  build();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--if-stale')) ensureBuilt();
  else build();
}
