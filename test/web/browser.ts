/**
 * Debian's chromium driven by playwright-core, headless and offline (no background
 * networking, no component updates, no sync), with a fresh profile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

export const CHROMIUM = process.env.SKILLOPT_CHROMIUM ?? '/usr/bin/chromium';
export const OUTPUT = path.join(ROOT, 'test-output');

export function chromiumMissing(): string | undefined {
  return fs.existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run does it)`;
}

export async function launchBrowser(): Promise<BrowserContext> {
  return chromium.launchPersistentContext(tmpDir('skillopt-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export function screenshotPath(name: string): string {
  fs.mkdirSync(OUTPUT, { recursive: true });
  return path.join(OUTPUT, name);
}
