/**
 * No page of the dashboard prints a missing value as code would: the text `null`, `undefined` or
 * `NaN` appears nowhere on any page of a finished run (a plain one and one with a candidate pool
 * and the paired gate), nor on the runs list, the comparison and the New-run page.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { trainSim } from '../helpers/train.ts';
import { BROWSER_SKIP, launchBrowser, watchedPage } from './browser.ts';
import { copyFixture } from './helpers.ts';

const skip = BROWSER_SKIP;
const STRAY = /\b(null|undefined|NaN)\b/;

/** The page's text outside code blocks (a config may hold a real `null`), with where each piece sits. */
async function strayText(page: Page): Promise<string[]> {
  return page.evaluate((source) => {
    const stray = new RegExp(source);
    const g = globalThis as unknown as {
      document: {
        body: unknown;
        createTreeWalker(root: unknown, what: number): { nextNode(): TextNode | null };
      };
    };
    interface El {
      tagName: string;
      id: string;
      className: string;
      parentElement: El | null;
      closest(sel: string): El | null;
    }
    interface TextNode {
      textContent: string;
      parentElement: El | null;
    }
    const found: string[] = [];
    const walker = g.document.createTreeWalker(g.document.body, 4);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      if (!parent || parent.closest('pre, code, textarea, script, style')) continue;
      if (!stray.test(n.textContent)) continue;
      const where: string[] = [];
      for (let e: El | null = parent; e && where.length < 4; e = e.parentElement)
        where.unshift(`${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${e.className}` : ''}`);
      found.push(`${where.join(' > ')}: ${JSON.stringify(n.textContent.slice(0, 120))}`);
    }
    return found;
  }, STRAY.source);
}

describe('the dashboard prints no null, undefined or NaN', () => {
  const root = tmpDir('skillopt-web-stray-');
  copyFixture('finished-run', 'finished', root);
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    if (skip) return;
    await trainSim(
      [
        'optimizer.pool_size=3',
        'optimizer.pool_merge=true',
        'train.seed=3',
        'evaluation.gate=paired',
        'evaluation.gate_alpha=0.2',
        'train.num_epochs=2',
      ],
      path.join(root, 'pool'),
    );
    dash = await startDashboard({
      roots: [root],
      host: '127.0.0.1',
      port: 0,
      pollMs: 100,
      configRoots: [path.join(ROOT, 'configs')],
    });
    browser = await launchBrowser();
    page = await watchedPage(browser, errors);
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  /** Opens `hash` in a freshly loaded page and waits until it has stopped fetching. */
  async function visit(hash: string): Promise<string[]> {
    await page.goto('about:blank');
    await page.goto(`${dash.url}${hash}`);
    await page.waitForSelector('#view h1, #view .callout');
    await page.waitForLoadState('networkidle');
    return (await strayText(page)).map((s) => `${hash} ${s}`);
  }

  async function runPages(id: string): Promise<string[]> {
    const run = `#/run/${encodeURIComponent(id)}`;
    const found: string[] = [];
    for (const tab of ['', '/skills', '/candidates', '/evals', '/config']) found.push(...(await visit(`${run}${tab}`)));
    const steps = await page.evaluate(async (id) => {
      const res = await fetch(`/api/run?run=${encodeURIComponent(id)}`);
      return ((await res.json()) as { progress: { completedSteps: number } }).progress.completedSteps;
    }, id);
    assert.ok(steps > 0, `${id} has steps`);
    for (let s = 1; s <= steps; s++) {
      found.push(...(await visit(`${run}/step/${s}`)));
      // The first rollout opened, as a user reads it.
      const row = page.locator('#trajectories tbody tr').first();
      if (await row.count()) {
        await row.click();
        await page.waitForSelector('#trajectory-detail');
        found.push(...(await strayText(page)).map((t) => `${run}/step/${s} (trajectory) ${t}`));
      }
    }
    return found;
  }

  it('on any page of a finished run', { skip }, async () => {
    const found = await runPages('0/finished');
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
  });

  it('on any page of a finished run with a candidate pool and the paired gate', { skip }, async () => {
    const found = await runPages('0/pool');
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
  });

  it('on the runs list, the comparison and the New-run page', { skip }, async () => {
    const found = [
      ...(await visit('#/')),
      ...(await visit(`#/compare?runs=${encodeURIComponent('0/finished')},${encodeURIComponent('0/pool')}`)),
      ...(await visit('#/new')),
    ];
    assert.deepEqual(found, []);
    assert.deepEqual(errors, []);
  });
});
