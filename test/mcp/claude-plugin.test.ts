import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cliPath, missingCli, ROOT, testEnvironment, tempDir } from '../helpers/agent-cli.ts';

const PLUGIN = path.join(ROOT, 'plugins', 'claude-code');

function validate(target: string) {
  return spawnSync(cliPath('claude'), ['plugin', 'validate', '--strict', target], {
    env: testEnvironment(),
    encoding: 'utf8',
    timeout: 60_000,
  });
}

test("the Claude Code plugin and the repository marketplace pass the real CLI's strict validation", {
  skip: missingCli('claude'),
}, () => {
  for (const target of [PLUGIN, ROOT]) {
    const r = validate(target);
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /Validation passed/);
  }
});

test("the validator reads the plugin's hooks (a broken hooks file fails it)", { skip: missingCli('claude') }, () => {
  const copy = path.join(tempDir('skillopt-test-plugin'), 'claude-code');
  fs.cpSync(PLUGIN, copy, { recursive: true });
  fs.writeFileSync(path.join(copy, 'hooks', 'hooks.json'), JSON.stringify({ hooks: { SessionEnd: 'not a list' } }));
  const r = validate(copy);
  assert.equal(r.status, 1);
  assert.match(r.stdout + r.stderr, /hooks\.SessionEnd/);
});

test('the plugin declares the MCP server, the slash command and a SessionEnd hook', () => {
  const mcp = JSON.parse(fs.readFileSync(path.join(PLUGIN, '.mcp.json'), 'utf8'));
  assert.deepEqual(mcp.mcpServers.skillopt, { command: 'skillopt', args: ['mcp'] });
  assert.ok(fs.existsSync(path.join(PLUGIN, 'commands', 'skillopt-sleep.md')));
  const hooks = JSON.parse(fs.readFileSync(path.join(PLUGIN, 'hooks', 'hooks.json'), 'utf8'));
  assert.equal(hooks.hooks.SessionEnd[0].hooks[0].type, 'command');
});

test('the SessionEnd hook only appends an activity line, and never fails (even on input it cannot read)', () => {
  const state = tempDir('skillopt-test-state');
  const hook = path.join(PLUGIN, 'hooks', 'on-session-end.mjs');
  const input = JSON.stringify({
    session_id: 'abc-123',
    transcript_path: '/x/y.jsonl',
    cwd: '/home/me/proj',
    hook_event_name: 'SessionEnd',
    reason: 'exit',
  });
  let r = spawnSync(process.execPath, [hook], {
    input,
    env: { ...process.env, SKILLOPT_SLEEP_STATE: state },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  r = spawnSync(process.execPath, [hook], {
    input: 'not json',
    env: { ...process.env, SKILLOPT_SLEEP_STATE: state },
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(state), ['session-end.log']);
  const lines = fs
    .readFileSync(path.join(state, 'session-end.log'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.deepEqual(
    { ...lines[0], at: undefined },
    { at: undefined, agent: 'claude', session_id: 'abc-123', cwd: '/home/me/proj', reason: 'exit' },
  );
});

test('Claude Code installs the plugin from the repository marketplace with its own commands, with its hook and MCP server', {
  skip: missingCli('claude'),
}, () => {
  const env = testEnvironment();
  const claude = (...args: string[]) =>
    spawnSync(cliPath('claude'), ['plugin', ...args], { env, encoding: 'utf8', timeout: 90_000 });
  let r = claude('marketplace', 'add', ROOT);
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  r = claude('install', 'skillopt-sleep@skillopt');
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  r = claude('details', 'skillopt-sleep@skillopt');
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /Hooks \(1\)\s+SessionEnd/);
  assert.match(r.stdout, /MCP servers \(1\)\s+skillopt/);
});
