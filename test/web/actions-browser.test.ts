/**
 * The dashboard's actions in Chromium, as a user who never opens a terminal: launch a sim run
 * from the form, watch it live, stop it, resume it, see it finish, evaluate its best skill; a
 * launch refused by the checks (a fake provider that answers 401); and requests from a page of
 * another origin refused.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { BROWSER_SKIP, launchBrowser, screenshotPath, watchedPage } from './browser.ts';

const skip = BROWSER_SKIP;
const KEY = 'SKILLOPT_TEST_BROWSER_KEY';

// The page's own objects, typed by what the tests read (this project compiles without the DOM library).
type Doc = { document: { querySelector(s: string): { textContent: string | null } | null } };
type Win = { __samePage?: boolean; __liveMessages?: number };

/** Waits until the element's text is `text` (or, with `part`, contains it). */
async function waitForText(
  page: Page,
  selector: string,
  text: string,
  options: { part?: boolean; timeout?: number } = {},
) {
  await page.waitForFunction(
    ([sel, want, part]) => {
      const got = (globalThis as unknown as Doc).document.querySelector(sel as string)?.textContent ?? '';
      return part ? got.includes(want as string) : got === want;
    },
    [selector, text, options.part ?? false] as const,
    { timeout: options.timeout ?? 30_000 },
  );
}

describe('actions in the browser', () => {
  const runs = fs.realpathSync(tmpDir('skillopt-actions-browser-'));
  const configs = fs.realpathSync(tmpDir('skillopt-actions-configs-'));
  const refused: string[] = [];
  const pageErrors: string[] = [];
  let fake: FakeProvider;
  let dash: RunningDashboard;
  let browser: BrowserContext;
  let page: Page;
  /** The run launched by the first test, used by the next. */
  let runId = '';

  before(async () => {
    if (skip) return;
    fake = await startFakeProvider({
      fault: () => ({ status: 401, message: 'Incorrect API key provided.', code: 'invalid_api_key' }),
    });
    writeFiles(configs, {
      'remote.yaml': `_base_: ${path.join(ROOT, 'configs/sim/default.yaml')}\nmodel:\n  target:\n    backend: openai_compatible\n    model: fake-model\n    base_url: ${fake.url}/v1\n    api_key_env: ${KEY}\n`,
    });
    process.env[KEY] = 'a-key-the-server-refuses';
    dash = await startDashboard({
      roots: [runs],
      host: '127.0.0.1',
      port: 0,
      pollMs: 100,
      configRoots: [path.join(ROOT, 'configs'), configs],
      program: 'skillopt',
      log: (l) => refused.push(l),
    });
    browser = await launchBrowser();
    page = await watchedPage(browser, pageErrors);
  });

  after(async () => {
    delete process.env[KEY];
    // A process left running by a failed test is ended (each by its own id).
    for (const job of dash?.jobs?.list() ?? [])
      if (job.state === 'running' && job.pid) process.kill(job.pid, 'SIGKILL');
    await browser?.close();
    await dash?.close();
    await fake?.close();
  });

  /** Picks a config on the New run page and waits for it to show resolved. */
  async function chooseConfig(id: string) {
    await page.goto(`${dash.url}#/new`);
    await page.waitForSelector(`#config option[value="${id}"]`, { state: 'attached' });
    // Before a config is chosen: a word of what to do, no empty panels.
    assert.equal(await page.locator('#pick-config').count(), 1);
    assert.deepEqual([await page.isVisible('.config-view'), await page.isVisible('#plan-panel')], [false, false]);
    await page.selectOption('#config', id);
    await page.waitForSelector('#resolved');
  }

  it('launches a sim run from the form, shows it live, stops it, resumes it, and it finishes', { skip }, async () => {
    await chooseConfig('0/sim/default.yaml');
    await page.fill('[data-key="train.batch_size"]', '4');
    await page.fill(
      '#extra',
      [
        'env.n_train=12',
        'env.n_val=6',
        'env.n_test=6',
        'train.num_epochs=2',
        'model.target.options.latency_ms=250',
      ].join('\n'),
    );
    await waitForText(page, '#command', 'latency_ms=250', { part: true });
    const command = (await page.textContent('#command'))!;
    assert.match(
      command,
      /^skillopt train --config configs\/sim\/default\.yaml --out \S+\/sim\/\d{8}_\d{6} --set train\.batch_size=4 --set env\.n_train=12 .*--set model\.target\.options\.latency_ms=250$/,
    );
    // The form's change is marked in the resolved config, and the dry run counts 2 epochs of 3 steps.
    assert.equal(await page.getAttribute('#resolved [data-path="train.batch_size"]', 'class'), 'mark-form');
    await waitForText(page, '#plan', 'total', { part: true });
    assert.match((await page.textContent('#plan >> xpath=..'))!, /2 epoch\(s\) × 3 step\(s\) = 6 steps/);
    await page.screenshot({ path: screenshotPath('actions-new-run.png'), fullPage: true });

    await page.click('#launch');
    await page.waitForURL(/#\/run\//, { timeout: 30_000 });
    runId = decodeURIComponent(/#\/run\/([^/?]+)/.exec(page.url())![1]!);
    assert.match(runId, /^0\/sim\/\d{8}_\d{6}$/);
    const dir = path.join(runs, runId.slice(2));
    // The exact command the page showed is the one that runs, its run directory included.
    assert.equal(await page.textContent('#run-actions pre.command'), command);
    await page.evaluate(() => ((globalThis as unknown as Win).__samePage = true));
    // Live: the stage being run shows in the header, pushed by the server.
    await page.waitForSelector('#run-head .stage', { timeout: 30_000 });
    await page.click('#stop');
    await waitForText(page, '#run-head .badge', 'stopped');
    // The stop asked for reads as a stop that can be resumed, not as a failure (exit 130).
    await waitForText(page, '#run-actions .job[data-state="exited"] .badge', 'stopped: resumable');
    const stoppedAt = JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8')).length;
    assert.ok(stoppedAt < 6, `stopped before the end (after ${stoppedAt} of 6 steps)`);
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as Win).__samePage),
      true,
      'the page followed the run without a reload',
    );
    assert.ok((await page.evaluate(() => (globalThis as unknown as Win).__liveMessages ?? 0)) > 0);

    await page.click('#resume');
    await waitForText(page, '#run-head .badge', 'finished', { timeout: 60_000 });
    assert.match(
      (await page.textContent('#run-actions pre.command'))!,
      new RegExp(
        `^skillopt train --config configs/sim/default\\.yaml --resume ${dir.replace(/[/.]/g, '\\$&')} --set train\\.batch_size=4 `,
      ),
    );
    const events = fs
      .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; reason?: string });
    assert.deepEqual(
      events
        .filter((e) => ['run_started', 'run_stopped', 'run_finished'].includes(e.type))
        .map((e) => e.reason ?? e.type),
      ['run_started', 'interrupted', 'run_started', 'run_finished'],
    );
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'history.json'), 'utf8')).length, 6);
    await page.waitForSelector('#steps tbody tr[data-step="6"]');
    assert.equal(await page.evaluate(() => (globalThis as unknown as Win).__samePage), true);
    await page.screenshot({ path: screenshotPath('actions-run.png') });
    assert.deepEqual(pageErrors, []);
  });

  it("evaluates the run's best skill from its page and shows the results table", { skip }, async () => {
    assert.ok(runId, 'the run of the test before');
    await page.goto(`${dash.url}#/run/${encodeURIComponent(runId)}/evals`);
    // On the selection split: the run sealed its test figures, which an evaluation there shows without rollouts.
    await page.selectOption('#eval-split', 'val');
    await page.click('#evaluate');
    await page.waitForSelector('.eval table.eval-cells tbody tr', { timeout: 60_000 });
    const row = await page.$$eval('.eval table.eval-cells tbody tr td', (tds) => tds.map((td) => td.textContent));
    const [evalDir] = fs.readdirSync(path.join(runs, runId.slice(2), 'evals'));
    const summary = JSON.parse(
      fs.readFileSync(path.join(runs, runId.slice(2), 'evals', evalDir!, 'eval_summary.json'), 'utf8'),
    );
    assert.equal(summary.split, 'val');
    const cell = summary.cells[0];
    assert.deepEqual(row.slice(0, 3), ['best_skill', 'sim:sim-1', '6']);
    assert.equal(row[3]!.split(' ')[0], cell.hard.toFixed(3));
    const job = dash.jobs!.list().find((j) => j.kind === 'eval')!;
    assert.match(
      job.command,
      /^skillopt eval --config configs\/sim\/default\.yaml --set train\.batch_size=4 .* --skill \S+\/best_skill\.md --split val --repeats 1 --out \S+\/evals\/\d{8}_\d{6}_val$/,
    );
    // Its rollouts open in the trajectory browser of the tab.
    await page.reload();
    await page.waitForSelector('.eval table.eval-cells');
    const dirs = await page.$$eval('select option', (os) => os.map((o) => o.textContent));
    assert.ok(dirs.includes(`evaluation ${evalDir}: best_skill on sim_sim-1, repeat 00 (6)`), dirs.join('\n'));
    await page.screenshot({ path: screenshotPath('actions-eval.png'), fullPage: true });
    assert.deepEqual(pageErrors, []);
  });

  it('launches nothing when an endpoint refuses the key, and says which role and what to fix', { skip }, async () => {
    const before = fs.readdirSync(runs, { recursive: true }).length;
    const jobs = dash.jobs!.list().length;
    await chooseConfig('1/remote.yaml');
    await page.click('#launch');
    await page.waitForSelector('#launch-refused');
    const target = (await page.textContent('#preflight tr[data-check="model.target"]'))!;
    assert.match(target, /failed/);
    assert.match(
      target,
      /openai_compatible:fake-model at http:\/\/127\.0\.0\.1:\d+\/v1: model\.target \(openai_compatible:fake-model\): the provider refused the credentials/,
    );
    assert.match(target, new RegExp(`Fix: .*the key in the environment variable ${KEY}`));
    assert.ok(!target.includes('a-key-the-server-refuses'));
    assert.equal(await page.getAttribute('#preflight tr[data-check="model.optimizer"]', 'data-ok'), '1');
    assert.equal(await page.getAttribute('#preflight tr[data-check="data"]', 'data-ok'), '1');
    assert.equal(fake.requests.length, 1, 'one check call');
    assert.equal(dash.jobs!.list().length, jobs, 'no process started');
    assert.equal(fs.readdirSync(runs, { recursive: true }).length, before, 'nothing written');
    assert.match(page.url(), /#\/new$/);
    // A new error in the form: the refused checks of the earlier form are gone.
    await page.fill('#extra', 'train.no_such_key=1');
    await page.waitForSelector('#config-error');
    assert.equal(await page.locator('#launch-refused').count(), 0);
    assert.deepEqual(pageErrors, []);
  });

  it('refuses actions asked by a page of another origin, which cannot read the token either', { skip }, async () => {
    const evil = http.createServer((_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>elsewhere</title><body>elsewhere</body>'),
    );
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    const jobs = dash.jobs!.list().length;
    const before = refused.length;
    const other = await browser.newPage();
    try {
      await other.goto(evilUrl);
      const body = JSON.stringify({ config: '0/sim/default.yaml', overrides: [] });
      const tried = await other.evaluate(
        `(async () => {
          const outcome = (p) => p.then((r) => 'answered ' + r.type + ' ' + r.status, (e) => 'failed: ' + e.name);
          return {
            // A simple request: sent without a preflight, its answer unreadable.
            simple: await outcome(fetch('${dash.url}api/action/launch', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} })),
            // With the token header and JSON: the browser asks first, and the server does not allow it.
            guessed: await outcome(fetch('${dash.url}api/action/launch', { method: 'POST', headers: { 'content-type': 'application/json', 'x-skillopt-token': 'guess' }, body: ${JSON.stringify(body)} })),
            // The token: unreadable from another origin.
            token: await outcome(fetch('${dash.url}api/actions')),
          };
        })()`,
      );
      assert.deepEqual(tried, {
        simple: 'answered opaque 0',
        guessed: 'failed: TypeError',
        token: 'failed: TypeError',
      });
      // A form posted from there: the browser navigates to the answer, which is a refusal.
      await other.evaluate(`(() => {
        const form = document.createElement('form');
        Object.assign(form, { method: 'POST', action: '${dash.url}api/action/launch', enctype: 'text/plain' });
        const input = document.createElement('input');
        Object.assign(input, { name: '{"config":"0/sim/default.yaml","x":"', value: '"}' });
        form.append(input);
        document.body.append(form);
        form.submit();
      })()`);
      await other.waitForURL(`${dash.url}api/action/launch`);
      assert.match((await other.textContent('body'))!, /another origin \(http:\/\/127\.0\.0\.1:\d+\)/);
      const seen = refused.slice(before);
      assert.equal(
        seen.filter((l) => /refused POST \/api\/action\/launch: a request from another origin/.test(l)).length,
        2,
        seen.join('\n'),
      );
      assert.equal(dash.jobs!.list().length, jobs, 'nothing was launched');
    } finally {
      await other.close();
      evil.closeAllConnections();
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });
});
