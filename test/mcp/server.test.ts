/**
 * `skillopt mcp` driven by the MCP SDK's own client over stdio: the tools and their input schemas,
 * Sleep's dry run on a home of real transcripts, a training run followed by progress
 * notifications, a cancelled run stopping at a safe point, paths outside the project refused,
 * the consent gate (elicitation, refusal, configured consent), and Sleep's night: a run with
 * progress, its status, history, and a staged proposal adopted and rolled back from the agent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { runningOwner } from '../../src/run/lock.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { stagedNight } from '../sleep/staged-night.ts';
import { connect, connectAsking, setup, textOf, type Setup } from './mcp-client.ts';

/** One server for the tests that need no particular consent setting (starting one takes seconds). */
let shared: Promise<{ s: Setup; client: Client }> | undefined;
function sharedServer(): Promise<{ s: Setup; client: Client }> {
  shared ??= (async () => {
    const s = setup('mcp:\n  act_without_confirmation: true\n');
    return { s, client: await connect(s) };
  })();
  return shared;
}

test('the server lists its tools, each with an input schema', async () => {
  const { client } = await sharedServer();
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, [
    'eval',
    'run_progress',
    'sleep_adopt',
    'sleep_dry_run',
    'sleep_harvest',
    'sleep_history',
    'sleep_rollback',
    'sleep_run',
    'sleep_schedule',
    'sleep_status',
    'sleep_unschedule',
    'train',
  ]);
  const train = tools.find((t) => t.name === 'train')!;
  assert.deepEqual(train.inputSchema.required, ['config']);
  const schedule = tools.find((t) => t.name === 'sleep_schedule')!;
  assert.deepEqual((schedule.inputSchema.properties as any).hour, {
    type: 'integer',
    minimum: 0,
    maximum: 23,
    default: 3,
    description: 'hour, 0-23',
  });
});

test("sleep_dry_run reports the agent sessions of the project, from the user's real transcript files", async () => {
  const { s, client } = await sharedServer();
  const r = await client.callTool({ name: 'sleep_dry_run', arguments: { sources: ['claude'], since: '2026-11-01' } });
  assert.equal(r.isError, undefined, textOf(r));
  const report = JSON.parse(textOf(r));
  assert.equal(report.sessions, 2);
  assert.equal(report.scope, s.project);
});

test('train runs a config of the project with progress notifications; run_progress reads its state', async () => {
  const { client } = await sharedServer();
  const progress: { progress: number; total?: number; message?: string }[] = [];
  const r = await client.callTool(
    {
      name: 'train',
      arguments: {
        config: 'configs/sim/default.yaml',
        out: 'runs/one',
        set: [
          'train.num_epochs=1',
          'env.n_train=20',
          'env.n_val=10',
          'env.n_test=10',
          'model.target.options.latency_ms=40',
        ],
      },
    },
    undefined,
    { onprogress: (p) => progress.push(p), timeout: 120_000 },
  );
  assert.equal(r.isError, undefined, textOf(r));
  assert.match(textOf(r), /^run directory: runs\/one\nfinished: step 1\/1/);
  assert.ok(progress.length > 0, 'progress notifications arrived');
  assert.match(progress.at(-1)!.message!, /step \d/);
  const p = await client.callTool({ name: 'run_progress', arguments: { run: 'runs/one' } });
  assert.equal((p.structuredContent as any).status, 'finished');
  assert.equal((p.structuredContent as any).completed_steps, 1);
});

test('a cancelled train call stops the run at a safe point, resumable', async () => {
  const { client } = await sharedServer();
  const controller = new AbortController();
  const call = client.callTool(
    {
      name: 'train',
      arguments: { config: 'configs/sim/default.yaml', out: 'runs/long', set: ['model.target.options.latency_ms=300'] },
    },
    undefined,
    { signal: controller.signal, timeout: 120_000, onprogress: () => controller.abort('the user cancelled') },
  );
  await assert.rejects(call, /cancelled|abort/i);
  let status = '';
  for (let i = 0; i < 600 && status !== 'stopped'; i++) {
    const p = await client.callTool({ name: 'run_progress', arguments: { run: 'runs/long' } });
    status = (p.structuredContent as any)?.status;
    if (status !== 'stopped') await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(status, 'stopped');
});

test('paths outside the project are refused, through .. or through a link', async () => {
  const { s, client } = await sharedServer();
  const outside = tmpDir();
  writeFiles(outside, { 'x.yaml': 'env: {name: sim}\n' });
  fs.symlinkSync(outside, path.join(s.project, 'link'));
  for (const config of ['../x.yaml', path.join(outside, 'x.yaml'), 'link/x.yaml']) {
    const r = await client.callTool({ name: 'train', arguments: { config } });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /config must lie inside the project/);
  }
  const r = await client.callTool({ name: 'run_progress', arguments: { run: '../..' } });
  assert.match(textOf(r), /run must lie inside the project/);
});

test('sleep_schedule asks the user through elicitation: declined changes nothing, accepted schedules', async () => {
  const s = setup();
  const { client, user, asked } = await connectAsking(s);
  const table = path.join(path.dirname(s.env.SKILLOPT_CRONTAB!), 'table');
  let r = await client.callTool({ name: 'sleep_schedule', arguments: { hour: 4, minute: 30 } });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /you declined/);
  assert.equal(fs.existsSync(table), false);
  user.answer = 'accept';
  r = await client.callTool({ name: 'sleep_schedule', arguments: { hour: 4, minute: 30 } });
  assert.equal(r.isError, undefined, textOf(r));
  assert.match(asked[1]!, /every night at 04:30/);
  assert.match(fs.readFileSync(table, 'utf8'), /^30 4 \* \* \* .* sleep run --project /m);
});

test('without elicitation the gated tools are refused, unless the Sleep config allows acting without confirmation', async () => {
  const refused = setup();
  let client = await connect(refused);
  let r = await client.callTool({ name: 'sleep_schedule', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /cannot ask you to confirm/);
  assert.equal(fs.existsSync(path.join(path.dirname(refused.env.SKILLOPT_CRONTAB!), 'table')), false);
  const { s: allowed, client: other } = await sharedServer();
  client = other;
  r = await client.callTool({ name: 'sleep_schedule', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.match(
    fs.readFileSync(path.join(path.dirname(allowed.env.SKILLOPT_CRONTAB!), 'table'), 'utf8'),
    /^17 3 \* \* \* /m,
  );
});

test("arguments outside a tool's schema are refused before anything runs", async () => {
  const { s, client } = await sharedServer();
  const table = path.join(path.dirname(s.env.SKILLOPT_CRONTAB!), 'table');
  const before = fs.existsSync(table) ? fs.readFileSync(table, 'utf8') : undefined;
  const r = await client.callTool({ name: 'sleep_schedule', arguments: { hour: 24 } });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /hour/);
  assert.equal(fs.existsSync(table) ? fs.readFileSync(table, 'utf8') : undefined, before);
});

const LIVE =
  '---\nname: depot-records\ndescription: How to answer questions about the depot.\n---\n\n# Depot records\n';
const PROPOSED = `${LIVE}\n<!-- SKILLOPT-SLEEP:LEARNED START -->\n- Write every date as YYYY-MM-DD.\n<!-- SKILLOPT-SLEEP:LEARNED END -->\n`;

/** A project with a night staged for it (a proposal for its skill and the diff), Sleep's state inside it. */
function stagedSetup(): Setup & { skill: string; night: string } {
  const project = fs.realpathSync(tmpDir('acme-project-'));
  const staged = stagedNight(
    [{ name: 'depot-records', kind: 'skill', file: 'skills/depot-records/SKILL.md', live: LIVE, proposed: PROPOSED }],
    project,
  );
  fs.writeFileSync(
    path.join(staged.night, 'diff.patch'),
    `--- ${staged.paths[0]}\n+++ ${staged.paths[0]}\n@@ -6,0 +7,4 @@\n+\n+<!-- SKILLOPT-SLEEP:LEARNED START -->\n+- Write every date as YYYY-MM-DD.\n+<!-- SKILLOPT-SLEEP:LEARNED END -->\n`,
  );
  const dir = tmpDir();
  writeFiles(dir, { 'sleep.yaml': `state_dir: ${JSON.stringify(staged.stateDir)}\n` });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    SKILLOPT_SLEEP_CONFIG: path.join(dir, 'sleep.yaml'),
  };
  return { project, home: dir, env, skill: staged.paths[0]!, night: staged.night };
}

test('from inside the agent: sleep_status shows the staged proposal; adopt declined changes nothing, accepted changes the skill; rollback restores it byte for byte', async () => {
  const s = stagedSetup();
  const { client, user, asked } = await connectAsking(s);

  const status = await client.callTool({ name: 'sleep_status', arguments: { diff: true } });
  assert.equal(status.isError, undefined, textOf(status));
  assert.match(textOf(status), /waiting for adoption: skill depot-records .*gate accept_new_best: val 0\.250 → 0\.750/);
  assert.match(textOf(status), /diff: \+4 -0 lines/);
  assert.match(textOf(status), /\+- Write every date as YYYY-MM-DD\./, 'the diff itself, when asked for');
  const view = status.structuredContent as any;
  assert.deepEqual(
    view.latest.pending.map((p: any) => p.name),
    ['depot-records'],
  );

  let r = await client.callTool({ name: 'sleep_adopt', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /you declined/);
  assert.match(
    asked[0]!,
    /Adopt SkillOpt Sleep's proposals into your files: skill depot-records \(.*SKILL\.md, val 0\.250 → 0\.750\)/,
  );
  assert.equal(fs.readFileSync(s.skill, 'utf8'), LIVE, 'declined: the skill is untouched');

  user.answer = 'accept';
  r = await client.callTool({ name: 'sleep_adopt', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.equal(fs.readFileSync(s.skill, 'utf8'), PROPOSED);
  assert.equal(JSON.parse(textOf(r)).adopted[0].name, 'depot-records');
  assert.match(textOf(await client.callTool({ name: 'sleep_status', arguments: {} })), /adopted: depot-records/);

  user.answer = 'decline';
  r = await client.callTool({ name: 'sleep_rollback', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(
    asked.at(-1)!,
    /Roll back the latest SkillOpt Sleep adoption \(this project's latest: .*depot-records\/SKILL\.md\)/,
  );
  assert.equal(fs.readFileSync(s.skill, 'utf8'), PROPOSED, 'declined: the adoption stays');
  user.answer = 'accept';
  r = await client.callTool({ name: 'sleep_rollback', arguments: {} });
  assert.equal(r.isError, undefined, textOf(r));
  assert.deepEqual(fs.readFileSync(s.skill), Buffer.from(LIVE), 'restored byte for byte');
});

test('without elicitation sleep_adopt and sleep_rollback are refused and change nothing; a night is named, not a path', async () => {
  const s = stagedSetup();
  const client = await connect(s);
  for (const name of ['sleep_adopt', 'sleep_rollback']) {
    const r = await client.callTool({ name, arguments: {} });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /cannot ask you to confirm/);
  }
  let r = await client.callTool({ name: 'sleep_adopt', arguments: { night: '20990101-000000' } });
  assert.match(textOf(r), /no night 20990101-000000 in /);
  r = await client.callTool({ name: 'sleep_adopt', arguments: { night: '../../etc' } });
  assert.equal(r.isError, true);
  assert.match(textOf(r), /a night's name, YYYYMMDD-HHMMSS/);
  assert.equal(fs.readFileSync(s.skill, 'utf8'), LIVE);
});

test('sleep_run runs a night on the simulator with progress notifications; sleep_status and sleep_history show it', async () => {
  const { s, client } = await sharedServer();
  const progress: string[] = [];
  const r = await client.callTool(
    { name: 'sleep_run', arguments: { sources: ['claude'], since: '2026-11-01', backend: 'sim' } },
    undefined,
    { onprogress: (p) => progress.push(p.message ?? ''), timeout: 120_000 },
  );
  assert.equal(r.isError, undefined, textOf(r));
  assert.ok(
    progress.some((m) => /^night 1: \d+ sessions/.test(m)),
    progress.join('\n'),
  );
  const status = await client.callTool({ name: 'sleep_status', arguments: {} });
  assert.match(
    textOf(status),
    /last night: 1, ran \d{4}-\d\d-\d\d \d\d:\d\d UTC, staged nothing \(no proposal passed the gate\)/,
  );
  const history = await client.callTool({ name: 'sleep_history', arguments: {} });
  assert.equal((history.structuredContent as any).nights[0].project, s.project);
  assert.match(textOf(history), /^night\s+started \(UTC\)/);
});

test('a cancelled sleep_run stops the night: nothing recorded, the lock not held', async () => {
  const s = setup('model:\n  target:\n    options:\n      latency_ms: 500\n');
  const client = await connect(s);
  const controller = new AbortController();
  const call = client.callTool(
    { name: 'sleep_run', arguments: { sources: ['claude'], since: '2026-11-01', backend: 'sim' } },
    undefined,
    { signal: controller.signal, timeout: 120_000, onprogress: () => controller.abort('the user cancelled') },
  );
  await assert.rejects(call, /cancelled|abort/i);
  const stateDir = path.join(path.dirname(s.env.SKILLOPT_SLEEP_CONFIG!), 'state');
  const lockFile = path.join(stateDir, 'locks', 'night', 'run.lock');
  const holder = () =>
    fs.existsSync(lockFile) ? runningOwner(JSON.parse(fs.readFileSync(lockFile, 'utf8'))) : undefined;
  for (let i = 0; i < 600 && holder(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(holder(), undefined, 'the night process is gone');
  const history = await client.callTool({ name: 'sleep_history', arguments: {} });
  assert.equal(textOf(history), 'no night yet');
});
