import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DATABASE_URL } from '../support/env.js';
import { startTestApp, type TestApp } from '../support/harness.js';
import { apiClient, unique } from '../support/http.js';

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npx tsx scripts/admin.ts ...` as a child process against the test database. */
function admin(...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['tsx', 'scripts/admin.ts', ...args],
      { cwd: process.cwd(), env: { ...process.env, DATABASE_URL: TEST_DATABASE_URL }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
      },
    );
  });
}

const lastLine = (text: string): string => text.trim().split('\n').at(-1)!.trim();

describe('admin CLI (scripts/admin.ts)', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => app?.close());

  it('create-crm prints a working key as the last stdout line; rotate-key replaces it', async () => {
    const crmId = unique('cli');
    const created = await admin('create-crm', crmId);
    expect(created.code, created.stderr).toBe(0);
    const key = lastLine(created.stdout);
    expect(key).toMatch(/^bk_[A-Za-z0-9_-]{20,}$/);

    const probe = `/crms/${crmId}/user/${encodeURIComponent('nobody@cli')}`;
    const api = apiClient(app.baseUrl, key);
    expect((await api.get(probe)).status).toBe(404);
    const user = await api.post(`/crms/${crmId}/user`, { reference: 'a@cli', email: `${crmId}@example.com`, username: crmId, lastName: 'Cli' });
    expect(user.status).toBe(201);

    const rotated = await admin('rotate-key', crmId);
    expect(rotated.code, rotated.stderr).toBe(0);
    const newKey = lastLine(rotated.stdout);
    expect(newKey).toMatch(/^bk_/);
    expect(newKey).not.toBe(key);
    expect((await api.get(probe)).status).toBe(401);
    const fresh = apiClient(app.baseUrl, newKey);
    expect((await fresh.get(`/crms/${crmId}/user/${encodeURIComponent('a@cli')}`)).status).toBe(200);

    const listed = await admin('list-crms');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(crmId);
    expect(listed.stdout).not.toContain(newKey);
  }, 120_000);

  it('fails with a message and a non-zero exit code for bad use', async () => {
    const crmId = unique('cli');
    expect((await admin('create-crm', crmId)).code).toBe(0);
    const duplicate = await admin('create-crm', crmId);
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    const unknown = await admin('rotate-key', unique('missing'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('CRM not found');
    const invalid = await admin('create-crm', 'bad id/with slash');
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('crmId');
    const usage = await admin('frobnicate');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('usage');
  }, 120_000);
});
