/**
 * The charts of a run with one point: the step axis stays around that point (uPlot alone spreads
 * one point over 0–100).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { BROWSER_SKIP, launchBrowser, watchedPage } from './browser.ts';
import { copyFixture, rewindToRunning } from './helpers.ts';

const skip = BROWSER_SKIP;

describe('the charts of a run with a single point', () => {
  const root = tmpDir('skillopt-web-charts-');
  rewindToRunning(copyFixture('finished-run', 'none', root).dir, 0);
  rewindToRunning(copyFixture('finished-run', 'one', root).dir, 1);
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    if (skip) return;
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 100 });
    browser = await launchBrowser();
    page = await watchedPage(browser, errors);
  });
  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  /** The step axis of each chart with points: [min, max]. */
  async function stepAxes(run: string): Promise<Record<string, [number, number]>> {
    await page.goto(`${dash.url}#/run/${encodeURIComponent(run)}`);
    await page.waitForSelector('[data-chart="scores"][data-points]');
    return page.$$eval('[data-chart]', (els) =>
      Object.fromEntries(
        els
          .map((el) => {
            const e = el as unknown as {
              dataset: { chart: string; points: string };
              _uplot: { scales: { x: { min: number; max: number } } };
            };
            return [e.dataset.chart, Number(e.dataset.points), e._uplot.scales.x] as const;
          })
          .filter(([, points]) => points === 1)
          .map(([name, , x]) => [name, [x.min, x.max]]),
      ),
    );
  }

  it('keeps the step axis around the initial skill when no step has finished', { skip }, async () => {
    assert.deepEqual(await stepAxes('0/none'), { scores: [-0.5, 0.5] });
    assert.deepEqual(errors, []);
  });

  it('keeps the step axis around the one step of a run that has just started', { skip }, async () => {
    const axes = await stepAxes('0/one');
    assert.ok(Object.keys(axes).length >= 4, JSON.stringify(axes));
    for (const [name, range] of Object.entries(axes)) assert.deepEqual(range, [0.5, 1.5], name);
    assert.deepEqual(errors, []);
  });
});
