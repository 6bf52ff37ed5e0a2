/**
 * The audit on the step page in the browser: a candidate rejected before the gate for a leak
 * shows the check, the item it leaks, where, and the edit that brought it in; an accept whose
 * gain the second scorer does not see shows the items.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tmpDir } from '../helpers/tmp.ts';
import { trainSim } from '../helpers/train.ts';
import { BROWSER_SKIP, dashboardInBrowser } from './browser.ts';

describe('the audit in the browser', { skip: BROWSER_SKIP }, () => {
  const root = tmpDir('skillopt-web-audit-');
  let open: Awaited<ReturnType<typeof dashboardInBrowser>>;
  let step = 0;
  let gamedStep = 0;

  before(async () => {
    const run = await trainSim(['model.optimizer.options.leak=1', 'train.num_epochs=1'], path.join(root, 'leaky'));
    step = run.history.find((h) => h.action === 'skip_audit')!.step;
    const gamed = await trainSim(
      ['env.scorer=judge', 'model.judge.options.gullible=true', 'model.optimizer.options.game=0.3'],
      path.join(root, 'gamed'),
    );
    gamedStep = gamed.history.find((h) =>
      h.audit?.checks.some((c) => c.check === 'second_scorer' && c.verdict === 'flag'),
    )!.step;
    open = await dashboardInBrowser([root]);
  });

  after(() => open?.close());

  it('names the leaked item, where it is and the edit that wrote it', async () => {
    const { dash, page, errors } = open;
    await page.goto(`${dash.url}#/run/${encodeURIComponent('0/leaky')}/step/${step}`);
    await page.waitForSelector('#audit');
    assert.match((await page.locator('#audit h3').textContent()) ?? '', /^Audit: fail$/);
    const text = (await page.locator('#audit').textContent()) ?? '';
    assert.match(text, /leak fail: carries \d+ items? of the data/);
    assert.match(text, /(answer|input) of train item train-\d{4} at SKILL\.md:\d+, edit \d+ \(append\)/);
    assert.match(
      (await page.locator('.callout.warn').first().textContent()) ?? '',
      /the audit rejected the candidate before any rollout/,
    );
    assert.deepEqual(errors, []);
  });

  it("shows an accept's gain flagged by the second scorer, with the items it does not see", async () => {
    const { dash, page, errors } = open;
    await page.goto(`${dash.url}#/run/${encodeURIComponent('0/gamed')}/step/${gamedStep}`);
    await page.waitForSelector('#audit');
    assert.match((await page.locator('#audit h3').textContent()) ?? '', /^Audit: flag$/);
    const text = (await page.locator('#audit').textContent()) ?? '';
    assert.match(text, /second_scorer flag: the gain mostly vanishes under a second scorer/);
    assert.match(text, /item val-\d{4}: gain \+1 under training's scorer, \+0 under the rule scorer/);
    assert.deepEqual(errors, []);
  });

  it("shows the best skill's audit on the run's page", async () => {
    const { dash, page, errors } = open;
    await page.goto(`${dash.url}#/run/${encodeURIComponent('0/leaky')}`);
    await page.waitForSelector('#best-audit');
    const text = (await page.locator('#best-audit').textContent()) ?? '';
    assert.match(text, /^Audit of the best skillpasspassed: leak, second_scorer, probes$/);
    assert.deepEqual(errors, []);
  });
});
