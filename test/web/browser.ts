/**
 * Debian's chromium driven by playwright-core, headless and offline (no background
 * networking, no component updates, no sync), with a fresh profile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

export const CHROMIUM = process.env.SKILLOPT_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of the browser tests, to look at after a run; under the system's temporary directory, never in the checkout. */
export const SCREENSHOTS = path.join(os.tmpdir(), 'skillopt-screenshots');

/**
 * Why the browser tests cannot run here, or undefined. Each browser test takes it as its own
 * `skip` option, so that the test runner counts the tests as skipped.
 */
export const BROWSER_SKIP: string | undefined = fs.existsSync(CHROMIUM)
  ? undefined
  : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does it)`;

export async function launchBrowser(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tmpDir('skillopt-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export function screenshotPath(name: string): string {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return path.join(SCREENSHOTS, name);
}

/** A new page whose script errors (thrown, or logged as errors) are added to `errors`. */
export async function watchedPage(browser: BrowserContext, errors: string[]): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return page;
}

/** A dashboard over `roots` on 127.0.0.1 and a watched page of a fresh browser; `close` ends both. */
export async function dashboardInBrowser(
  roots: string[],
  pollMs = 200,
): Promise<{
  dash: RunningDashboard;
  browser: BrowserContext;
  page: Page;
  errors: string[];
  close: () => Promise<void>;
}> {
  const dash = await startDashboard({ roots, host: '127.0.0.1', port: 0, pollMs });
  const browser = await launchBrowser();
  const errors: string[] = [];
  const page = await watchedPage(browser, errors);
  return {
    dash,
    browser,
    page,
    errors,
    close: async () => {
      await browser.close();
      await dash.close();
    },
  };
}
