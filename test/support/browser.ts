import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots and other browser-test output (gitignored). */
export const ARTIFACTS_DIR = join(ROOT, 'test-artifacts');

/** One headless Chromium for a test file; contexts (one per simulated visitor) are cheap, browsers are not. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}

/** Opens a context (one visitor) whose waits fail within 10 s, well inside the test's timeout, naming what was awaited. */
export async function newVisitor(browser: Browser, options: BrowserContextOptions) {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(10_000);
  return context;
}

export const PHONE: BrowserContextOptions = { viewport: { width: 320, height: 640 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
export const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 900 } };

/** Saves a full-page screenshot as a test artifact and returns its path. */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** How wide the page's content is, in CSS pixels (wider than the viewport means horizontal scrolling). */
export const contentWidth = (page: Page): Promise<number> => page.evaluate('document.documentElement.scrollWidth') as Promise<number>;

/** Saves a text file (e.g. measured sizes) as a test artifact. */
export function saveArtifact(name: string, text: string): void {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  writeFileSync(join(ARTIFACTS_DIR, name), text);
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core (WCAG 2.x A/AA and best practices) on the page as it is and
 * returns the serious and critical violations. The script is evaluated
 * through the DevTools protocol, which the page's CSP does not govern (a
 * <script> tag would be refused by it, as it should be).
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[] }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => JSON.stringify(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
