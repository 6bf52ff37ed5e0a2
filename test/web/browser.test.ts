import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { BIN, ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { BROWSER_SKIP, launchBrowser, screenshotPath, watchedPage } from './browser.ts';
import { copyFixture, finishStep, rewindToRunning } from './helpers.ts';

const skip = BROWSER_SKIP;

// The page's own objects, typed by what the tests read (this project compiles without the DOM library).
interface Dataset {
  dataset: Record<string, string | undefined>;
}
interface Doc {
  document: {
    querySelectorAll(sel: string): Iterable<Dataset>;
    querySelector(sel: string): { getAttribute(name: string): string | null } | null;
  };
}

const runUrl = (dash: RunningDashboard, id: string, rest = '') => `${dash.url}#/run/${encodeURIComponent(id)}${rest}`;

/** Points of every chart on the page: what the container says and what uPlot holds. */
interface ChartInfo {
  points: number;
  plotted: number;
  canvas: number;
  series: Record<string, number>;
}

/** The [step, value] points of one series of a chart. */
async function seriesAt(page: Page, chart: string, label: string): Promise<[number, number][]> {
  return page.$eval(
    `[data-chart="${chart}"]`,
    (el, label) => {
      const u = (el as unknown as { _uplot: { data: (number | null)[][]; series: { label?: string }[] } })._uplot;
      const i = u.series.findIndex((s) => s.label === label);
      return u.data[0]!.flatMap((x, j) => (u.data[i]![j] == null ? [] : [[x, u.data[i]![j]] as [number, number]]));
    },
    label,
  );
}

async function chartPoints(page: Page): Promise<Record<string, ChartInfo>> {
  return page.$$eval('[data-chart]', (els) =>
    Object.fromEntries(
      els.map((el) => {
        const u = (el as unknown as { _uplot?: { data: unknown[][]; series: { label?: string }[] } })._uplot;
        const canvas = el.querySelector('canvas');
        return [
          (el as unknown as Dataset).dataset.chart,
          {
            points: Number((el as unknown as Dataset).dataset.points),
            plotted: u ? u.data[0]!.length : -1,
            canvas: canvas ? canvas.width * canvas.height : 0,
            series: u
              ? Object.fromEntries(
                  u.series
                    .slice(1)
                    .map((s, i) => [s.label, u.data[i + 1]!.filter((v) => v !== null && v !== undefined).length]),
                )
              : {},
          },
        ];
      }),
    ),
  );
}

describe('the dashboard in a browser', () => {
  const root = tmpDir('skillopt-web-browser-');
  copyFixture('finished-run', 'finished', root);
  const live = copyFixture('finished-run', 'live', root).dir;
  rewindToRunning(live, 3);
  copyFixture('python-searchqa', 'python', root);
  // A step whose training batch is a long list of rollouts.
  const long = copyFixture('finished-run', 'long', root).dir;
  const longResults = path.join(long, 'steps/step_0001/rollout/results.jsonl');
  const first = JSON.parse(fs.readFileSync(longResults, 'utf8').split('\n')[0]!) as Record<string, unknown>;
  // The first of them was run by an agent target, whose trace the result line keeps.
  const agentTrace = {
    agent: 'claude-code',
    sessionId: 'a3c1e2f0',
    steps: [
      { tool: 'Read', input: '.claude/skills/skillopt-target/SKILL.md', ok: true },
      { tool: 'Bash', input: 'cat ../answers.jsonl', ok: false, output: 'Permission denied' },
      { tool: 'Grep', input: 'receipts documents/bulletin.txt', ok: true },
    ],
    files: ['.claude/skills/skillopt-target/SKILL.md', 'documents/bulletin.txt'],
    errors: [],
    durationMs: 5300,
    exitCode: 0,
  };
  fs.writeFileSync(
    longResults,
    Array.from(
      { length: 50 },
      (_, i) =>
        `${JSON.stringify({ ...first, id: `item-${String(i).padStart(2, '0')}`, ...(i === 0 ? { traces: [agentTrace] } : {}) })}\n`,
    ).join(''),
  );
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  before(async () => {
    if (skip) return;
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 100 });
    browser = await launchBrowser();
    page = await watchedPage(browser, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await dash?.close();
  });

  it('lists the runs', { skip }, async () => {
    await page.goto(dash.url);
    await page.waitForSelector('#runs tbody tr');
    const rows = await page.$$eval('#runs tbody tr', (trs) =>
      trs.map((tr) => [(tr as unknown as Dataset).dataset.run, tr.querySelector('.badge')?.textContent]),
    );
    assert.deepEqual(rows.sort(), [
      ['0/finished', 'finished'],
      ['0/live', 'running'],
      ['0/long', 'finished'],
      ['0/python', 'finished'],
    ]);
    assert.deepEqual(pageErrors, []);
  });

  it('draws the charts of a run with one point per step, a rejected candidate at its score or at its bound', {
    skip,
  }, async (t) => {
    await page.goto(runUrl(dash, '0/finished'));
    await page.waitForSelector('[data-chart="gate"][data-points]');
    const charts = await chartPoints(page);
    // Six steps, and the initial skill's selection score at step 0 on the score chart.
    assert.deepEqual(Object.fromEntries(Object.entries(charts).map(([k, v]) => [k, [v.points, v.plotted]])), {
      scores: [7, 7],
      lr: [6, 6],
      tokens: [6, 6],
      cost: [6, 6],
      timing: [6, 6],
      gate: [6, 6],
    });
    for (const [name, c] of Object.entries(charts)) assert.ok(c.canvas > 0, `${name} has a drawn canvas`);
    const s = charts.scores!.series;
    // Step 2's gate stopped early: its candidate has no score, only a bound (0.5), where its marker is.
    assert.deepEqual([s.accepted, s.rejected, s['rejected (at most)'], s.skipped], [2, 2, 1, 1]);
    assert.deepEqual(await seriesAt(page, 'scores', 'rejected (at most)'), [[2, 0.5]]);
    assert.deepEqual(await seriesAt(page, 'scores', 'rejected'), [
      [5, 0.6667],
      [6, 0.8333],
    ]);
    assert.equal(s.best, 7);
    assert.equal(await page.locator('#steps tbody tr').count(), 6);
    assert.equal(await page.locator('#steps tbody tr[data-step="2"] td:nth-child(5)').textContent(), '≤ 0.500');
    // A run without a candidate pool has no Candidates tab; a legend says no step while the cursor is off the chart.
    assert.deepEqual(await page.$$eval('.tabs a', (as) => as.map((a) => a.textContent)), [
      'Overview',
      'Skills',
      'Evaluations',
      'Config',
    ]);
    const legends = await page.$$eval('.u-legend', (ls) =>
      // biome-ignore lint/performance/useDomNodeTextContent: what is shown is the point, hidden labels left out
      ls.map((l) => (l as unknown as { innerText: string }).innerText),
    );
    assert.equal(legends.length, 6);
    for (const l of legends) assert.doesNotMatch(l, /step/);
    assert.equal(await page.locator('#tests tbody tr').count(), 6);
    assert.equal(await page.locator('#epochs tbody tr').count(), 2);
    await page.screenshot({ path: screenshotPath('dashboard-run.png'), fullPage: true });
    t.diagnostic(`screenshot: ${screenshotPath('dashboard-run.png')}`);
    assert.deepEqual(pageErrors, []);
  });

  it('adds a step to the charts and the step table without a reload', { skip }, async () => {
    await page.goto(runUrl(dash, '0/live'));
    await page.waitForSelector('[data-chart="scores"][data-points="4"]');
    assert.equal(await page.locator('#steps tbody tr').count(), 3);
    await page.evaluate(() => ((globalThis as unknown as { __samePage: boolean }).__samePage = true));
    finishStep(live, 4);
    await page.waitForSelector('[data-chart="scores"][data-points="5"]', { timeout: 15_000 });
    await page.waitForSelector('#steps tbody tr[data-step="4"]');
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as { __samePage?: boolean }).__samePage),
      true,
      'the page was not reloaded',
    );
    const charts = await chartPoints(page);
    assert.deepEqual([charts.scores!.plotted, charts.lr!.plotted, charts.gate!.plotted], [5, 4, 4]);
    assert.deepEqual(pageErrors, []);
  });

  it("shows a step's applied edit in the diff of its candidate against the current skill", { skip }, async () => {
    await page.goto(runUrl(dash, '0/finished', '/step/1'));
    await page.waitForSelector('#diff .diff .add');
    const applied = await page.$$eval('tr.edit[data-applied="1"] .content', (els) => els.map((e) => e.textContent));
    const skipped = await page.$$eval('tr.edit[data-applied="0"] .content', (els) => els.map((e) => e.textContent));
    const added = await page.$$eval('#diff .diff .add', (els) => els.map((e) => e.textContent));
    assert.equal(applied.length, 2);
    for (const a of applied) assert.ok(added.includes(a), `the diff adds the applied edit ${a}`);
    assert.equal(skipped.length, 2, 'the skipped replace and the edit left out by the budget');
    for (const s of skipped) assert.ok(!added.includes(s));
    assert.match(
      (await page.locator('tr.edit[data-status="skipped_replace_target_not_found"]').textContent()) ?? '',
      /the target text is not in the skill/,
    );
    await page.screenshot({ path: screenshotPath('dashboard-step.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });

  it('shows the bound of a candidate whose gate stopped early', { skip }, async () => {
    await page.goto(runUrl(dash, '0/finished', '/step/2'));
    await page.waitForSelector('#rejected');
    assert.match(
      (await page.locator('#rejected').textContent()) ?? '',
      /scored ≤ 0\.500 \(hard\) on the selection split \(stopped early after 3 of 6: it could no longer beat 0\.500/,
    );
    assert.match(
      (await page.locator('.card', { hasText: 'Candidate (selection)' }).textContent()) ?? '',
      /≤ 0\.500stopped early after 3 of 6/,
    );
    await page.goto(runUrl(dash, '0/finished', '/step/5'));
    await page.waitForSelector('#rejected[data-early="0"]');
    assert.match(
      (await page.locator('#rejected').textContent()) ?? '',
      /scored 0\.667 \(hard\) on the selection split, not above 0\.833/,
    );
    assert.deepEqual(pageErrors, []);
  });

  it('filters the rollouts of a step and opens a conversation', { skip }, async () => {
    await page.goto(runUrl(dash, '0/finished', '/step/2'));
    await page.waitForSelector('#rejected[data-early="1"]');
    await page.waitForSelector('#trajectories tbody tr');
    await page.click('button[data-outcome="fail"]');
    await page.waitForFunction(() =>
      [...(globalThis as unknown as Doc).document.querySelectorAll('#trajectories tbody tr')].every(
        (tr) => (tr as Dataset).dataset.outcome === 'fail',
      ),
    );
    assert.equal(await page.locator('#trajectories tbody tr').count(), 3);
    await page.click('#trajectories tbody tr >> nth=0');
    await page.waitForSelector('.conversation .msg');
    const detail = (await page.locator('#trajectory-detail').textContent()) ?? '';
    assert.match(detail, /Expected25\.00 kg/);
    assert.match(detail, /Predicted25kg/);
    assert.equal(await page.locator('.conversation .msg').count(), 3);
    assert.deepEqual(pageErrors, []);
  });

  it('shows only the page navigated to when the one before had not finished loading', { skip }, async () => {
    await page.goto(runUrl(dash, '0/finished'));
    await page.waitForSelector('#steps tbody tr');
    // Step 3 is left as soon as its page starts loading.
    await page.evaluate(
      async (hashes) => {
        const g = globalThis as unknown as { location: { hash: string }; setTimeout(f: () => void, ms: number): void };
        g.location.hash = hashes[0]!;
        await new Promise<void>((resolve) => g.setTimeout(resolve, 0));
        g.location.hash = hashes[1]!;
      },
      [runUrl(dash, '0/finished', '/step/3').split('#')[1]!, runUrl(dash, '0/finished', '/step/6').split('#')[1]!],
    );
    await page.waitForSelector('#trajectories tbody tr');
    await page.waitForLoadState('networkidle');
    assert.deepEqual(await page.$$eval('h1', (els) => els.map((e) => e.textContent)), ['Step 6']);
    assert.equal(await page.locator('#trajectories').count(), 1);
    assert.deepEqual(pageErrors, []);
  });

  it('brings a trajectory opened low in a long list into view', { skip }, async () => {
    await page.goto(runUrl(dash, '0/long', '/step/1'));
    await page.waitForSelector('#trajectories tbody tr[data-n="49"]');
    await page.click('#trajectories tbody tr[data-n="49"]');
    await page.waitForSelector('#trajectory-detail');
    await page.waitForFunction(() => {
      const g = globalThis as unknown as {
        innerHeight: number;
        document: { querySelector(s: string): { getBoundingClientRect(): { top: number; bottom: number } } | null };
      };
      const box = g.document.querySelector('.trajectory')!.getBoundingClientRect();
      return box.top >= 0 && box.top < g.innerHeight;
    });
    const detail = (await page.locator('.trajectory .row strong').textContent()) ?? '';
    assert.equal(detail, 'item-49');
    assert.deepEqual(pageErrors, []);
  });

  it("shows an agent target's trace in a collapsible block: which tools, on which files, what failed", {
    skip,
  }, async () => {
    await page.goto(runUrl(dash, '0/long', '/step/1'));
    await page.waitForSelector('#trajectories tbody tr[data-n="0"]');
    await page.click('#trajectories tbody tr[data-n="0"]');
    await page.waitForSelector('details.trace');
    assert.equal(
      await page.locator('details.trace summary').textContent(),
      'Agent trace: claude-code · 3 tool calls · 1 failed · 5.3 s',
    );
    // A run with a failed call opens by itself; a click closes it.
    assert.equal(await page.locator('details.trace').getAttribute('open'), '');
    assert.deepEqual(
      await page.$$eval('.trace-steps li', (lis) => lis.map((li) => [li.textContent, li.getAttribute('class')])),
      [
        ['Read .claude/skills/skillopt-target/SKILL.md', null],
        ['Bash cat ../answers.jsonlfailed: Permission denied', 'failed'],
        ['Grep receipts documents/bulletin.txt', null],
      ],
    );
    assert.match(
      (await page.locator('details.trace').textContent()) ?? '',
      /Files \.claude\/skills\/skillopt-target\/SKILL\.md, documents\/bulletin\.txt[\s\S]*session a3c1e2f0 · exit code 0/,
    );
    await page.click('details.trace summary');
    assert.equal(await page.locator('details.trace').getAttribute('open'), null);
    // A trajectory without a trace shows none.
    await page.click('#trajectories tbody tr[data-n="1"]');
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }
        ).document.querySelector('.trajectory .row strong')?.textContent === 'item-01',
    );
    assert.equal(await page.locator('details.trace').count(), 0);
    assert.deepEqual(pageErrors, []);
  });

  it("shows the expected answer of the original's SearchQA and — for its missing task type", { skip }, async () => {
    await page.goto(runUrl(dash, '0/python', '/step/1'));
    await page.waitForSelector('#trajectories tbody tr');
    const cells = await page.$$eval('#trajectories tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual([cells[0], cells[2], cells[4], cells[5]], ['sq-101', '—', 'thames', 'London']);
    await page.click('#trajectories tbody tr >> nth=0');
    await page.waitForSelector('.conversation .msg');
    const detail = (await page.locator('#trajectory-detail').textContent()) ?? '';
    assert.match(detail, /Expectedthames/);
    assert.match((await page.locator('.trajectory .row').textContent()) ?? '', /type —/);
    assert.deepEqual(await page.$$eval('.conversation .msg .who', (els) => els.map((e) => e.textContent)), [
      'target, turn 1',
      'system',
    ]);
    assert.deepEqual(pageErrors, []);
  });

  it('puts two runs on one chart', { skip }, async () => {
    await page.goto(`${dash.url}#/compare?runs=${encodeURIComponent('0/finished')},${encodeURIComponent('0/live')}`);
    await page.waitForSelector('[data-chart="compare"][data-points="6"]');
    const charts = await chartPoints(page);
    assert.deepEqual(charts.compare!.series, { finished: 6, live: 4 });
    assert.deepEqual(pageErrors, []);
  });
});

const ENGINE = path.join(ROOT, 'src/engine/trainer.ts');

describe('the dashboard on a sim run in progress', () => {
  const skipSim =
    skip ?? (fs.existsSync(ENGINE) ? undefined : 'the training engine (src/engine/trainer.ts) is not in this build');
  const root = tmpDir('skillopt-web-sim-');
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let trainer: ChildProcess;
  let trainerLog = '';

  before(async () => {
    if (skipSim) return;
    trainer = spawn(
      process.execPath,
      [
        BIN,
        'train',
        '--config',
        'configs/sim/default.yaml',
        '--out',
        path.join(root, 'sim'),
        '--cfg-options',
        'model.target.options.latency_ms=150',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    trainer.stdout!.on('data', (c) => (trainerLog += c));
    trainer.stderr!.on('data', (c) => (trainerLog += c));
    dash = await startDashboard({ roots: [root], host: '127.0.0.1', port: 0, pollMs: 200 });
    browser = await launchBrowser();
  });

  after(async () => {
    if (trainer && trainer.exitCode === null) {
      const exited = new Promise((r) => trainer.once('exit', r));
      trainer.kill('SIGTERM');
      await exited;
    }
    await browser?.close();
    await dash?.close();
  });

  it('follows the run live: new steps appear on the charts without a reload', { skip: skipSim }, async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const started = Date.now();
    while (!fs.existsSync(path.join(root, 'sim', 'history.json'))) {
      assert.ok(trainer.exitCode === null || trainer.exitCode === 0, `the trainer failed:\n${trainerLog}`);
      assert.ok(Date.now() - started < 60_000, `no step after 60 s:\n${trainerLog}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await page.goto(runUrl(dash, '0/sim'));
    await page.waitForSelector('[data-chart="scores"][data-points]');
    assert.equal(await page.locator('h1 + span .badge').textContent(), 'running');
    const first = Number(await page.getAttribute('[data-chart="scores"]', 'data-points'));
    await page.evaluate(() => ((globalThis as unknown as { __samePage: boolean }).__samePage = true));
    await page.waitForFunction(
      (n) =>
        Number(
          (globalThis as unknown as Doc).document.querySelector('[data-chart="scores"]')?.getAttribute('data-points'),
        ) > n,
      first,
      { timeout: 60_000 },
    );
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __samePage?: boolean }).__samePage), true);
    const history = JSON.parse(fs.readFileSync(path.join(root, 'sim', 'history.json'), 'utf8')) as unknown[];
    const points = Number(await page.getAttribute('[data-chart="scores"]', 'data-points'));
    // The chart may be a poll behind the file, never ahead of it (+1: the initial skill at step 0).
    assert.ok(
      points <= history.length + 1 && points > first,
      `chart has ${points} points, history ${history.length} steps`,
    );
    await page.screenshot({ path: screenshotPath('dashboard-sim.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
