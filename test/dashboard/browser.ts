/**
 * Chromium for the dashboard's browser tests, driven by playwright-core: the binary from
 * SENDPOOL_CHROMIUM, else the distribution's (`apt-get install -y chromium`). Without one the
 * browser tests are skipped, with the reason printed once; CI (.ci/run) installs it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/lib/chromium/chromium'];

/** The Chromium to use, or why there is none. */
export function findChromium(): { path: string } | { reason: string } {
  const asked = process.env.SENDPOOL_CHROMIUM;
  if (asked !== undefined && asked !== '') {
    return existsSync(asked) ? { path: asked } : { reason: `SENDPOOL_CHROMIUM=${asked} does not exist` };
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  return found ? { path: found } : { reason: `no Chromium found (set SENDPOOL_CHROMIUM, or apt-get install -y chromium; looked at ${CANDIDATES.join(', ')})` };
}

const found = findChromium();
/** The path of Chromium, or undefined when the browser tests must be skipped. */
export const chromiumPath = 'path' in found ? found.path : undefined;
if (!('path' in found)) console.log(`dashboard browser tests skipped: ${found.reason}`);

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath!,
    headless: true,
    // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** What a page complained about: script errors, failed requests, console errors (a CSP violation is one). */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  return problems;
}

/** Types the key into the page's form, as a user does. */
export async function useKey(page: Page, key: string): Promise<void> {
  await page.fill('#key-input', key);
  await page.click('#key-form button[type=submit]');
}
