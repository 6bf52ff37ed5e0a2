/**
 * The step page of a skill package in the browser: the candidate's files with their change and
 * read counts, a binary file by its sizes only, a text file's diff on a click, and the checks
 * that rejected a broken candidate before any rollout; and of a description step: the
 * description before and after, and the activation F1 on the gate's queries.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import { RunDir } from '../../src/run/layout.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { readSkillFile, writeSkillFile } from '../../src/run/skill-files.ts';
import type { PackageFile } from '../../src/skill/package/package.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { BROWSER_SKIP, launchBrowser, screenshotPath, watchedPage } from './browser.ts';

const skip = BROWSER_SKIP;
const CONFIG = path.join(ROOT, 'configs/sim/package.yaml');
const logo = (n: number): PackageFile => ({ kind: 'binary', bytes: Buffer.alloc(n, 0x89), mode: 0o644 });

describe('the package view in the browser', { skip }, () => {
  const root = tmpDir('skillopt-web-pkg-browser-');
  const out = path.join(root, 'pkg');
  const errors: string[] = [];
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;
  let step = 0;

  before(async () => {
    const loaded = loadConfig(CONFIG, { environment: {} });
    await runTraining({ loaded, outRoot: out, configFile: CONFIG, console: false });
    const file = path.join(out, 'history.json');
    const history = JSON.parse(fs.readFileSync(file, 'utf8')) as HistoryRecord[];
    const at = history.findIndex(
      (r) => r.candidate_hash && Object.values(r.package_usage?.files ?? {}).some((f) => f.read > 0),
    );
    step = history[at]!.step;
    // The package as a public skill ships it: a binary asset, here grown by the candidate.
    const run = new RunDir(out);
    const parentRef = history.filter((r) => r.step < step && r.action.startsWith('accept')).at(-1)?.step ?? 0;
    for (const [f, size] of [
      [run.skill(parentRef), 1234],
      [run.step(step, 'candidate_skill.md'), 1310],
    ] as const) {
      const pkg = readSkillFile(run, f)!;
      writeSkillFile(run, f, {
        skill: pkg.skill,
        files: new Map([...(pkg.files ?? []), ['assets/logo.png', logo(size)]]),
      });
    }
    // As a candidate whose edits broke a script shows it.
    history[at] = {
      ...history[at]!,
      package_checks: {
        checks: 4,
        broken: [{ check: 'python', file: 'scripts/fill.py', message: 'line 3: invalid syntax' }],
      },
    };
    fs.writeFileSync(file, JSON.stringify(history, null, 1));
    const triggers = path.join(ROOT, 'configs/sim/triggers.yaml');
    await runTraining({
      loaded: loadConfig(triggers, { environment: {} }),
      outRoot: path.join(root, 'trig'),
      configFile: triggers,
      console: false,
    });
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 200 });
    browser = await launchBrowser();
    page = await watchedPage(browser, errors);
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  it('lists the files with changes and read counts, a binary by its sizes, and a diff on a click', async () => {
    await page.goto(`${dash.url}#/run/${encodeURIComponent('0/pkg')}/step/${step}`);
    await page.waitForSelector('#package tr[data-path="SKILL.md"]');
    const row = (p: string) => page.locator(`#package tr[data-path="${p}"]`);
    assert.match((await row('assets/logo.png').textContent()) ?? '', /binary, changed \(1,234 → 1,310 bytes\)/);
    const used = await page.$$eval('#package tr[data-path] td:nth-child(3)', (els) =>
      els.map((e) => e.textContent ?? ''),
    );
    assert.ok(
      used.some((u) => /^read by \d+ of \d+ rollouts$/.test(u)),
      used.join(' | '),
    );
    const edited = page
      .locator('#package tr[data-kind="text"][data-change]:not([data-change="unchanged"]) button')
      .first();
    await edited.click();
    await page.waitForSelector('#package .package-diff .diff');
    assert.ok((await page.locator('#package .package-diff .diff .add, #package .package-diff .diff .del').count()) > 0);
    assert.equal(await row('assets/logo.png').locator('button').count(), 0, 'a binary file has no diff');
    assert.match(
      (await page.locator('#package-checks').textContent()) ?? '',
      /python \(scripts\/fill\.py\): line 3: invalid syntax/,
    );
    await page.screenshot({ path: screenshotPath('dashboard-package.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });

  it("shows a description step's change and the activation on the gate's queries", async () => {
    await page.goto(`${dash.url}#/run/${encodeURIComponent('0/trig')}/step/1`);
    await page.waitForSelector('#description-change');
    assert.equal(await page.locator('#description-change .del').textContent(), 'Helps with data.');
    assert.match((await page.locator('#description-change .add').textContent()) ?? '', /^Helps with data\. Use when/);
    const card = page.locator('.card', { hasText: 'Activation F1' });
    assert.match((await card.textContent()) ?? '', /selection P 1\.000 R 0\.\d+ · train F1 .* · description step/);
    assert.deepEqual(errors, []);
  });
});
