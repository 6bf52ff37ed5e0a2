/**
 * The Cursor harness. Cursor's CLI is not on npm, so these runs use a stand-in that follows its
 * documented command line and stream format (test/helpers/fake-cursor-agent.mjs); they show the
 * harness's side: the command line, the workspace, the environment, the parsing, and what
 * happens on a missing login, a crash (retried by the scheduler) and a timeout.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { CallFailure } from '../../../src/model/failure.ts';
import type { HarnessSettings } from '../../../src/model/harness/cli-harness.ts';
import { CursorHarness } from '../../../src/model/harness/cursor.ts';
import { HarnessChatModel, type HarnessModelOptions } from '../../../src/model/harness/harness-model.ts';
import { CallPool } from '../../../src/model/call-pool.ts';
import { ScheduledModel } from '../../../src/model/call-scheduler.ts';
import { FatalModelError, type ChatRequest } from '../../../src/model/types.ts';
import { harnessSettings, processesRunning, ROOT, tempDir, until } from '../../helpers/agent-cli.ts';

const FAKE = path.join(ROOT, 'test', 'helpers', 'fake-cursor-agent.mjs');
const SKILL = 'SKILL-BODY-e5a0 answer with the number only';
const REQUEST: ChatRequest = {
  purpose: 'rollout',
  system: `Answer.\n\n## Skill\n\n${SKILL}`,
  skill: SKILL,
  messages: [{ role: 'user', content: 'What is 6 times 7?' }],
};
const MODEL: HarnessModelOptions = {
  backend: 'cursor_exec',
  model: '',
  skillInstall: 'skill',
  skillName: 'skillopt-target',
  skillDescription: 'How to answer',
  timeoutMs: 30_000,
};

function setup(scenario: string, over: Partial<HarnessSettings> = {}) {
  const dir = tempDir('skillopt-test-cursor');
  const log = path.join(dir, 'run.json');
  const settings = harnessSettings({
    path: FAKE,
    baseUrl: '',
    model: '',
    env: { FAKE_CURSOR_SCENARIO: scenario, FAKE_CURSOR_LOG: log, FAKE_CURSOR_STATE: path.join(dir, 'state') },
    ...over,
  });
  settings.environment = {
    ...settings.environment,
    OPENAI_API_KEY: 'sk-skillopt-own-key',
    CURSOR_API_KEY: 'cursor-user-key',
  };
  return {
    settings,
    log: () =>
      JSON.parse(fs.readFileSync(log, 'utf8')) as { args: string[]; prompt: string; cwd: string; env: string[] },
  };
}

describe('cursor_exec harness (stand-in for the Cursor CLI)', () => {
  test('a rollout runs cursor-agent in print mode on the workspace, read-only and sandboxed, and reads its stream', async () => {
    const { settings, log } = setup('rollout');
    const res = await new HarnessChatModel(new CursorHarness(settings), MODEL).complete(REQUEST);
    const run = log();
    assert.deepEqual(run.args.slice(0, 3), ['-p', '--output-format', 'stream-json']);
    assert.ok(run.args.includes('--trust'));
    assert.equal(run.args[run.args.indexOf('--workspace') + 1], run.cwd);
    assert.equal(run.args[run.args.indexOf('--sandbox') + 1], 'enabled');
    assert.equal(run.args[run.args.indexOf('--mode') + 1], 'ask');
    assert.match(run.prompt, /`\.cursor\/skills\/skillopt-target\/SKILL\.md`/);
    // The stand-in read the skill from the workspace and answered with its last line.
    assert.equal(res.text, `<answer>${SKILL}</answer>`);
    assert.deepEqual(res.trace!.steps, [{ tool: 'read', input: '.cursor/skills/skillopt-target/SKILL.md', ok: true }]);
    assert.deepEqual(res.usage, { input: 1000, output: 12, cached: 100, reasoning: 0 });
    // Cursor's own key passes; skillopt's keys do not.
    assert.ok(run.env.includes('CURSOR_API_KEY'));
    assert.ok(!run.env.includes('OPENAI_API_KEY'));
    assert.equal(fs.existsSync(run.cwd), false);
  });

  test('allow_writes runs it with --force instead of ask mode', async () => {
    const { settings, log } = setup('rollout', { allowWrites: true });
    await new HarnessChatModel(new CursorHarness(settings), MODEL).complete(REQUEST);
    assert.ok(log().args.includes('--force'));
    assert.ok(!log().args.includes('--mode'));
  });

  test('no login is a fatal error that says how to log in', async () => {
    const { settings } = setup('not-logged-in');
    await assert.rejects(
      new HarnessChatModel(new CursorHarness(settings), MODEL).complete(REQUEST),
      (err: Error) => err instanceof FatalModelError && /cursor-agent login/.test(err.message),
    );
  });

  test('an agent that crashes is retried like a failed call', async () => {
    const { settings } = setup('crash-once');
    const model = new ScheduledModel(
      new HarnessChatModel(new CursorHarness(settings), MODEL),
      new CallPool('target', { concurrency: 1, rpm: 0, tpm: 0 }),
      { maxRetries: 2, timeoutMs: 30_000, backoffMs: 1, backoffMaxMs: 1 },
      'model.target',
    );
    const res = await model.complete(REQUEST);
    assert.equal(res.retries, 1);
    assert.equal(res.text, `<answer>${SKILL}</answer>`);
  });

  test('the timeout ends the agent and a command it started in a session of its own', async () => {
    const sleep = `47.${process.pid}`;
    const { settings } = setup('hang', { env: { FAKE_CURSOR_SCENARIO: 'hang', FAKE_CURSOR_SLEEP: sleep } });
    const run = new HarnessChatModel(new CursorHarness(settings), { ...MODEL, timeoutMs: 3000 }).complete(REQUEST);
    await assert.rejects(run, (err: Error) => err instanceof CallFailure && err.kind === 'timeout');
    assert.equal(processesRunning(`sleep ${sleep}`), 0);
  });

  test('stopping a run ends the agent and the command it started', async () => {
    const sleep = `48.${process.pid}`;
    const { settings } = setup('hang', { env: { FAKE_CURSOR_SCENARIO: 'hang', FAKE_CURSOR_SLEEP: sleep } });
    const stop = new AbortController();
    const run = new HarnessChatModel(new CursorHarness(settings), MODEL).complete({ ...REQUEST, signal: stop.signal });
    await until(() => processesRunning(`sleep ${sleep}`) > 0, 30_000, 'the command to start');
    stop.abort();
    await assert.rejects(run, (err: Error) => err instanceof CallFailure && err.kind === 'timeout');
    assert.equal(processesRunning(`sleep ${sleep}`), 0);
  });

  test('a version older than the oldest supported is refused with the versions that work', async () => {
    const { settings } = setup('rollout', { env: { FAKE_CURSOR_VERSION: '2025.06.02-abc1234' } });
    // The version check runs with the harness's environment: the stand-in reads FAKE_CURSOR_VERSION from it.
    const copy = path.join(tempDir('skillopt-test-cursor-bin'), 'cursor-agent.mjs');
    fs.copyFileSync(FAKE, copy);
    fs.chmodSync(copy, 0o755);
    await assert.rejects(
      new HarnessChatModel(new CursorHarness({ ...settings, path: copy }), MODEL).complete(REQUEST),
      (err: Error) =>
        err instanceof FatalModelError &&
        /version 2025\.6\.2; versions 2026\.8\.11 and later are supported/.test(err.message),
    );
  });
});

describe('the workspace of a rollout', () => {
  test("holds the task, the request's files and images, and the skill, and nothing else", async () => {
    const { settings, log } = setup('rollout');
    const docs = tempDir('skillopt-test-docs');
    fs.writeFileSync(path.join(docs, 'bulletin_1944_01.txt'), 'Receipts: 1,234');
    const png = `data:image/png;base64,${Buffer.from('PNG').toString('base64')}`;
    const req: ChatRequest = {
      ...REQUEST,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What were the receipts?' },
            { type: 'image', image: png },
          ],
        },
      ],
      workspaceFiles: [
        { path: 'bulletins', source: docs },
        { path: 'notes.txt', content: 'use the January issue' },
      ],
    };
    await new HarnessChatModel(new CursorHarness(settings), { ...MODEL, keepWorkspace: true }).complete(req);
    const ws = log().cwd;
    const files = (fs.readdirSync(ws, { recursive: true }) as string[])
      .filter((f) => fs.statSync(path.join(ws, f)).isFile())
      .sort();
    assert.deepEqual(files, [
      '.cursor/skills/skillopt-target/SKILL.md',
      'attachments/image_01.png',
      'bulletins/bulletin_1944_01.txt',
      'notes.txt',
      'task.md',
    ]);
    assert.match(
      fs.readFileSync(path.join(ws, 'task.md'), 'utf8'),
      /What were the receipts\?\n\[image: attachments\/image_01\.png\]/,
    );
    assert.match(log().prompt, /- attachments\/image_01\.png\n- bulletins\n- notes\.txt/);
    fs.rmSync(ws, { recursive: true });
  });
});
