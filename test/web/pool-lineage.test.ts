/**
 * The dashboard on a run with a candidate pool, the paired gate and a transfer target: the
 * lineage API and its tree, a step's paired test (p-value, effect) and parent, and the
 * transfer table.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { createDashboardApp } from '../../src/web/server/app.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { LineageFileSchema } from '../../src/run/records.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { trainSim } from '../helpers/train.ts';
import { BROWSER_SKIP, launchBrowser, watchedPage } from './browser.ts';
import { FIXTURES } from './helpers.ts';

const POOL = [
  'optimizer.pool_size=3',
  'optimizer.pool_merge=true',
  'optimizer.learning_rate=2',
  'optimizer.min_learning_rate=1',
  'train.seed=3',
  'evaluation.gate=paired',
  'evaluation.gate_alpha=0.2',
  'train.num_epochs=2',
  'evaluation.transfer_targets=["sim:sim-2"]',
];

describe('the dashboard on a pool run with the paired gate and transfer', () => {
  const root = tmpDir('skillopt-web-pool-');
  const out = path.join(root, 'pool');
  const run = '0/pool';
  let lineage: ReturnType<typeof LineageFileSchema.parse>;
  before(async () => {
    await trainSim(POOL, out);
    lineage = LineageFileSchema.parse(JSON.parse(fs.readFileSync(path.join(out, 'pool', 'lineage.json'), 'utf8')));
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const get = async (url: string, roots = [root]): Promise<any> => {
    const res = await createDashboardApp({ roots }).app.request(url);
    assert.equal(res.status, 200, url);
    return res.json();
  };

  it('serves the lineage of every candidate (without per-item scores), and no pool for a run without one', async () => {
    const view = await get(`/api/lineage?run=${encodeURIComponent(run)}`);
    assert.equal(view.pool, true);
    assert.deepEqual(view.members, lineage.members);
    assert.deepEqual(
      view.nodes.map((n: { id: string; parents: string[] }) => [n.id, n.parents]),
      lineage.nodes.map((n) => [n.id, n.parents]),
    );
    assert.ok(view.nodes.every((n: object) => !('item_scores' in n) && !('edits' in n)));
    const plain = await get(`/api/lineage?run=${encodeURIComponent('0/finished-run')}`, [FIXTURES]);
    assert.deepEqual(plain, { pool: false, members: [], nodes: [], problems: [] });
  });

  it("gives a step its paired test and its parent, and diffs the candidate against the parent's skill", async () => {
    const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as {
      step: number;
      action: string;
      gate?: { test?: { p: number; effect: number } };
      pool: { parent: string };
    }[];
    const r = history.find((x) => x.gate?.test && x.pool.parent !== 'initial_skill')!;
    assert.ok(r, 'a gated step whose parent is not the initial skill');
    const view = await get(`/api/step?run=${encodeURIComponent(run)}&step=${r.step}`);
    assert.equal(view.gate.test.p, r.gate!.test!.p);
    assert.equal(view.gate.test.effect, r.gate!.test!.effect);
    assert.equal(view.gate.pool.parent, r.pool.parent);
    assert.equal(view.diff.a, `pool:${r.pool.parent}`);
    const skill = await get(`/api/skill?run=${encodeURIComponent(run)}&ref=${encodeURIComponent(view.diff.a)}`);
    assert.equal(skill.text, fs.readFileSync(path.join(out, 'pool', `${r.pool.parent}.md`), 'utf8'));
  });

  it("gives the run's transfer table from summary.json", async () => {
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
    const detail = await get(`/api/run?run=${encodeURIComponent(run)}`);
    assert.deepEqual(detail.transfer, summary.transfer);
    assert.equal(detail.transfer.rows[0].target, 'sim:sim-2');
  });

  describe('in a browser', () => {
    let dash: RunningDashboard;
    let browser: BrowserContext;
    let page: Page;
    const pageErrors: string[] = [];
    before(async () => {
      if (BROWSER_SKIP) return;
      dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 1000 });
      browser = await launchBrowser();
      page = await watchedPage(browser, pageErrors);
    });
    after(async () => {
      await browser?.close();
      await dash?.close();
    });

    it('draws the candidates as a tree under their first parents, the members marked, the transfer table, and a step its p-value', {
      skip: BROWSER_SKIP,
    }, async () => {
      await page.goto(`${dash.url}#/run/${encodeURIComponent(run)}/candidates`);
      await page.waitForSelector('#lineage li.node');
      const drawn = await page.$$eval('#lineage li.node', (els) =>
        els.map((e) => {
          const el = e as unknown as {
            dataset: Record<string, string>;
            parentElement: { closest(s: string): { dataset: Record<string, string> } | null };
          };
          return [el.dataset.id, el.parentElement.closest('li.node')?.dataset.id ?? '', el.dataset.inPool];
        }),
      );
      assert.deepEqual(
        drawn.sort(),
        lineage.nodes.map((n) => [n.id, n.parents[0] ?? '', lineage.members.includes(n.id) ? '1' : '0']).sort(),
      );
      await page.goto(`${dash.url}#/run/${encodeURIComponent(run)}`);
      await page.waitForSelector('#transfer tbody tr[data-target="sim:sim-2"]');
      assert.equal(await page.locator('.tabs a', { hasText: 'Candidates' }).count(), 1);
      const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8'));
      const cells = await page.$$eval('#transfer tbody tr td', (tds) =>
        tds.map((td) => (td as unknown as { firstChild: { textContent: string } }).firstChild.textContent),
      );
      assert.deepEqual(
        cells.slice(1, 3),
        [summary.transfer.rows[0].initial.hard, summary.transfer.rows[0].best.hard].map(
          (x: number) => `${(x * 100).toFixed(1)}%`,
        ),
      );
      const tested = lineage.nodes.find((n) => n.kind === 'step' && n.test)!;
      await page.goto(`${dash.url}#/run/${encodeURIComponent(run)}/step/${tested.step}`);
      await page.waitForSelector('#paired-test');
      assert.equal(Number(await page.getAttribute('#paired-test', 'data-p')), tested.test!.p);
      assert.match((await page.locator('#paired-test').textContent()) ?? '', /effect [+-]\d\.\d{3} per item, p = /);
      assert.deepEqual(pageErrors, []);
    });
  });
});
