/**
 * A Sleep night in Chromium: the night (run on the simulator by `skillopt sleep run --backend sim`)
 * in the list beside a training run, its page with the staged diff, and Adopt, confirmed in the
 * dialog that names the files, changing the skill on disk.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { PROJECT, simNightHome, type SimNightHome } from '../sleep/sim-night.ts';
import { BROWSER_SKIP, launchBrowser, screenshotPath, watchedPage } from './browser.ts';
import { copyFixture } from './helpers.ts';

const skip = BROWSER_SKIP;

describe('a Sleep night in the browser', () => {
  const pageErrors: string[] = [];
  let home: SimNightHome;
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;

  before(async () => {
    if (skip) return;
    home = simNightHome('mine:\n  seed: 3\n');
    const run = home.sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
    assert.equal(run.status, 0, run.stderr);
    const { root } = copyFixture('finished-run', 'run');
    dash = await startDashboard({
      roots: [root],
      host: '127.0.0.1',
      port: 0,
      sleepStateDir: path.join(home.home, '.skillopt-sleep'),
      configRoots: [],
      log: () => {},
    });
    browser = await launchBrowser();
    page = await watchedPage(browser, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  it('shows the staged night beside the run, its diff, and adopts it after the confirmation', { skip }, async () => {
    const skill = path.join(home.home, '.claude/skills/skillopt-sleep-learned/SKILL.md');
    const [id] = fs.readdirSync(path.join(home.home, '.skillopt-sleep/nights'));
    await page.goto(dash.url);
    await page.waitForSelector('#runs tr[data-run="0/run"]');
    const row = page.locator(`#nights tr[data-night="${id}"]`);
    assert.match((await row.textContent())!, /night 1.*staged.*skillopt-sleep-learned: 0\.\d{3} → 0\.\d{3}/);
    await page.screenshot({ path: screenshotPath('nights-list.png'), fullPage: true });

    await row.click();
    await page.waitForSelector('.night-doc .diff');
    assert.match((await page.textContent('.night-doc[data-doc="skillopt-sleep-learned"] .diff .add'))!, /^---$/);
    assert.ok(
      await page.locator('.night-doc .diff .add', { hasText: '<!-- SKILLOPT-SLEEP:LEARNED START -->' }).count(),
    );
    assert.equal(fs.existsSync(skill), false, 'nothing changes before the adoption');

    await page.click('#adopt');
    const dialog = page.locator('dialog#confirm-adopt');
    await dialog.waitFor();
    assert.match(
      (await dialog.textContent())!,
      new RegExp(`skill skillopt-sleep-learned: ${skill.replace(/[.]/g, '\\.')}`),
    );
    // Cancel changes nothing; Adopt, confirmed, does.
    await dialog.locator('#cancel').click();
    assert.equal(await page.locator('dialog').count(), 0);
    assert.equal(fs.existsSync(skill), false);
    await page.click('#adopt');
    await page.click('dialog#confirm-adopt #confirm');
    await page.waitForSelector('#night-head .badge.adopted');
    const proposed = fs.readdirSync(path.join(home.home, '.skillopt-sleep/nights', id!, 'proposed'));
    assert.equal(
      fs.readFileSync(skill, 'utf8'),
      fs.readFileSync(path.join(home.home, '.skillopt-sleep/nights', id!, 'proposed', proposed[0]!), 'utf8'),
    );
    assert.match(
      (await page.textContent('#night-actions .callout.ok'))!,
      /adopted: .*skillopt-sleep-learned\/SKILL\.md/,
    );
    await page.waitForSelector('#rollback');
    await page.screenshot({ path: screenshotPath('nights-adopted.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });
});
