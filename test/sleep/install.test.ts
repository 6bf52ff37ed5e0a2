/**
 * `skillopt sleep install|uninstall <agent>` on temporary homes holding the agents' own
 * configuration files (as `codex mcp add` and `copilot mcp add` write them): the entry merged in,
 * read back by the real Codex and Copilot CLIs; the user's servers kept; uninstall restoring the
 * file, or taking out only skillopt's entry when the user changed the file since.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cliPath, missingCli } from '../helpers/agent-cli.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

function home(files: Record<string, string> = {}) {
  const h = fs.realpathSync(tmpDir());
  writeFiles(h, files);
  writeFiles(h, { 'sleep.yaml': `state_dir: ${JSON.stringify(path.join(h, '.skillopt-sleep'))}\n` });
  const env = {
    HOME: h,
    SKILLOPT_SLEEP_CONFIG: path.join(h, 'sleep.yaml'),
    CODEX_HOME: '',
    COPILOT_HOME: '',
    XDG_CONFIG_HOME: '',
  };
  return { h, env };
}

function agentCli(name: 'codex' | 'copilot', h: string, args: string[]) {
  return spawnSync(cliPath(name), args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: h },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

// As `codex mcp add` writes it, after the user's own settings.
const CODEX_CONFIG = `model = "gpt-5.5"\napproval_policy = "on-request"\n\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n`;

test('codex: the MCP entry merged into config.toml (read back by codex mcp get) and the skill installed; uninstall restores both', {
  skip: missingCli('codex'),
}, () => {
  const { h, env } = home({ '.codex/config.toml': CODEX_CONFIG });
  let r = runCli(['sleep', 'install', 'codex'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(h, '.codex/config.toml.skillopt-backup'), 'utf8'), CODEX_CONFIG);
  const got = agentCli('codex', h, ['mcp', 'get', 'skillopt', '--json']);
  assert.equal(got.status, 0, got.stderr);
  const transport = JSON.parse(got.stdout).transport;
  assert.deepEqual([transport.type, transport.command, transport.args], ['stdio', process.execPath, [BIN, 'mcp']]);
  assert.equal(JSON.parse(agentCli('codex', h, ['mcp', 'get', 'docs', '--json']).stdout).transport.command, 'npx');
  assert.match(
    fs.readFileSync(path.join(h, '.agents/skills/skillopt-sleep/SKILL.md'), 'utf8'),
    /^---\nname: skillopt-sleep\n/,
  );
  // Installing again changes nothing more (one entry, the first backup kept).
  r = runCli(['sleep', 'install', 'codex'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    fs.readFileSync(path.join(h, '.codex/config.toml'), 'utf8').match(/\[mcp_servers\.skillopt\]/g)!.length,
    1,
  );
  r = runCli(['sleep', 'uninstall', 'codex'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(h, '.codex/config.toml'), 'utf8'), CODEX_CONFIG);
  assert.equal(fs.existsSync(path.join(h, '.codex/config.toml.skillopt-backup')), false);
  assert.equal(fs.existsSync(path.join(h, '.agents/skills/skillopt-sleep/SKILL.md')), false);
});

test('codex: a skillopt server the user wrote, in any spelling, is not overwritten', () => {
  for (const mine of [
    `[mcp_servers.skillopt]\ncommand = "my-own"\n`,
    `# my servers\n[mcp_servers]\nskillopt = { command = "my-own", args = ["mcp"] }\ndocs = { command = "npx" }\n`,
    `mcp_servers.skillopt.command = "my-own"\n`,
    `mcp_servers = { skillopt = { command = "my-own" } }\n`,
  ]) {
    const { h, env } = home({ '.codex/config.toml': mine });
    const r = runCli(['sleep', 'install', 'codex'], { env });
    assert.equal(r.status, 2, `${mine}\n${r.stdout}`);
    assert.match(r.stderr, /config\.toml: it already has an mcp_servers\.skillopt entry that skillopt did not write/);
    assert.equal(fs.readFileSync(path.join(h, '.codex/config.toml'), 'utf8'), mine);
    assert.deepEqual(fs.readdirSync(path.join(h, '.codex')), ['config.toml'], 'no backup either');
    assert.equal(fs.existsSync(path.join(h, '.agents')), false);
  }
});

test('codex: a config.toml that is not valid TOML, or whose mcp_servers is inline, is refused untouched', () => {
  const cases: [string, RegExp][] = [
    [`model = "gpt-5.5"\napproval_policy =\n`, /config\.toml:2:\d+: it is not valid TOML \(.+\); fix it/],
    [`[tui]\nx = 1\n[tui]\ny = 2\n`, /config\.toml:3:\d+: it is not valid TOML/],
    [
      `mcp_servers = { docs = { command = "npx" } }\n`,
      /cannot add its \[mcp_servers\.skillopt\] table without rewriting your mcp_servers/,
    ],
  ];
  for (const [text, expected] of cases) {
    const { h, env } = home({ '.codex/config.toml': text });
    const r = runCli(['sleep', 'install', 'codex'], { env });
    assert.equal(r.status, 2, `${text}\n${r.stdout}`);
    assert.match(r.stderr, expected);
    assert.match(r.stderr, /Nothing was changed/);
    assert.equal(fs.readFileSync(path.join(h, '.codex/config.toml'), 'utf8'), text);
    assert.deepEqual(fs.readdirSync(path.join(h, '.codex')), ['config.toml']);
  }
});

test('codex: merged beside servers written inline under [mcp_servers] (read back by codex), comments kept; a later change of the user stays on uninstall', {
  skip: missingCli('codex'),
}, () => {
  const mine = `# my codex settings\nmodel = "gpt-5.5" # the default\n\n[mcp_servers]\n# the docs server\ndocs = { command = "npx", args = ["-y", "docs-mcp"] }\n`;
  const { h, env } = home({ '.codex/config.toml': mine });
  const file = path.join(h, '.codex/config.toml');
  let r = runCli(['sleep', 'install', 'codex'], { env });
  assert.equal(r.status, 0, r.stderr);
  const installed = fs.readFileSync(file, 'utf8');
  assert.ok(installed.startsWith(mine), installed);
  const got = agentCli('codex', h, ['mcp', 'get', 'skillopt', '--json']);
  assert.equal(got.status, 0, got.stderr);
  assert.equal(JSON.parse(got.stdout).transport.command, process.execPath);
  assert.equal(JSON.parse(agentCli('codex', h, ['mcp', 'get', 'docs', '--json']).stdout).transport.command, 'npx');
  fs.writeFileSync(file, `${installed}\n[tui]\nnotifications = true\n`);
  r = runCli(['sleep', 'uninstall', 'codex'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /was changed since; took out only the skillopt entry/);
  const after = fs.readFileSync(file, 'utf8');
  assert.ok(
    after.startsWith(mine) && after.endsWith('[tui]\nnotifications = true\n') && !after.includes('skillopt'),
    after,
  );
});

test('a config file that is a link stays a link: install writes through it, uninstall restores its target', () => {
  const dotfiles = `# shared between machines\nmodel = "gpt-5.5"\n\n[mcp_servers.docs]\ncommand = "npx" # the docs server\n`;
  const cursor = `{\n  // mine\n  "mcpServers": { "docs": { "command": "npx" } }\n}\n`;
  const { h, env } = home({ 'dotfiles/codex.toml': dotfiles, 'dotfiles/cursor.json': cursor });
  fs.mkdirSync(path.join(h, '.codex'));
  fs.mkdirSync(path.join(h, '.cursor'));
  fs.chmodSync(path.join(h, 'dotfiles/codex.toml'), 0o600);
  fs.symlinkSync('../dotfiles/codex.toml', path.join(h, '.codex/config.toml'));
  fs.symlinkSync(path.join(h, 'dotfiles/cursor.json'), path.join(h, '.cursor/mcp.json'));
  for (const [agent, link, target, before] of [
    ['codex', '.codex/config.toml', 'dotfiles/codex.toml', dotfiles],
    ['cursor', '.cursor/mcp.json', 'dotfiles/cursor.json', cursor],
  ] as const) {
    let r = runCli(['sleep', 'install', agent], { env });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(fs.lstatSync(path.join(h, link)).isSymbolicLink(), `${link} is still a link after install`);
    const installed = fs.readFileSync(path.join(h, target), 'utf8');
    assert.ok(installed.startsWith(before.replace(/\n$/, '').split('\n').slice(0, 2).join('\n')), installed);
    assert.match(installed, /skillopt/);
    r = runCli(['sleep', 'uninstall', agent], { env });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /as it was before/);
    assert.ok(fs.lstatSync(path.join(h, link)).isSymbolicLink(), `${link} is still a link after uninstall`);
    assert.equal(fs.readFileSync(path.join(h, target), 'utf8'), before);
  }
  assert.equal(fs.statSync(path.join(h, 'dotfiles/codex.toml')).mode & 0o777, 0o600, 'the permissions are kept');
});

// As `copilot mcp add` writes it.
const COPILOT_CONFIG = `${JSON.stringify({ mcpServers: { docs: { tools: ['*'], type: 'local', command: 'npx', args: ['-y', 'docs-mcp'] } } }, null, 2)}\n`;

test("copilot: the server merged into mcp-config.json beside the user's (read back by copilot mcp get); uninstall restores the file", {
  skip: missingCli('copilot'),
}, () => {
  const { h, env } = home({ '.copilot/mcp-config.json': COPILOT_CONFIG });
  let r = runCli(['sleep', 'install', 'copilot'], { env });
  assert.equal(r.status, 0, r.stderr);
  const got = agentCli('copilot', h, ['mcp', 'get', 'skillopt']);
  assert.equal(got.status, 0, got.stderr);
  assert.match(got.stdout, new RegExp(`Command: ${process.execPath} ${BIN} mcp`));
  assert.match(agentCli('copilot', h, ['mcp', 'list']).stdout, /docs/);
  r = runCli(['sleep', 'uninstall', 'copilot'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.readFileSync(path.join(h, '.copilot/mcp-config.json'), 'utf8'), COPILOT_CONFIG);
});

test('vscode: merged into the user mcp.json keeping its comments; a file the user changed since keeps their change on uninstall', () => {
  const original = `// my servers\n{\n  "servers": {\n    "github": { "type": "http", "url": "https://api.githubcopilot.com/mcp/" }\n  },\n  "inputs": []\n}\n`;
  const { h, env } = home({ '.config/Code/User/mcp.json': original });
  const file = path.join(h, '.config/Code/User/mcp.json');
  let r = runCli(['sleep', 'install', 'vscode'], { env });
  assert.equal(r.status, 0, r.stderr);
  const installed = fs.readFileSync(file, 'utf8');
  assert.ok(installed.startsWith('// my servers\n'));
  const parsed = JSON.parse(installed.replace(/^\/\/.*\n/, ''));
  assert.deepEqual(parsed.servers.skillopt, {
    type: 'stdio',
    command: process.execPath,
    args: [BIN, 'mcp', '--project', '${workspaceFolder}'],
  });
  assert.equal(parsed.servers.github.type, 'http');
  fs.writeFileSync(file, installed.replace('"inputs": []', '"inputs": [{ "id": "token", "type": "promptString" }]'));
  r = runCli(['sleep', 'uninstall', 'vscode'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /was changed since; took out only the skillopt entry/);
  const after = JSON.parse(fs.readFileSync(file, 'utf8').replace(/^\/\/.*\n/, ''));
  assert.deepEqual(Object.keys(after.servers), ['github']);
  assert.equal(after.inputs[0].id, 'token');
  assert.equal(fs.readFileSync(`${file}.skillopt-backup`, 'utf8'), original);
});

test('cursor: a malformed mcp.json is refused with its name, nothing written; a missing one is created and removed again', () => {
  const { h, env } = home({ '.cursor/mcp.json': '{ "mcpServers": { "x": ' });
  let r = runCli(['sleep', 'install', 'cursor'], { env });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /\.cursor\/mcp\.json: not valid JSON .*Nothing was changed/);
  assert.deepEqual(fs.readdirSync(path.join(h, '.cursor')), ['mcp.json']);
  fs.rmSync(path.join(h, '.cursor'), { recursive: true });
  r = runCli(['sleep', 'install', 'cursor'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(fs.readFileSync(path.join(h, '.cursor/mcp.json'), 'utf8')), {
    mcpServers: { skillopt: { command: process.execPath, args: [BIN, 'mcp'] } },
  });
  r = runCli(['sleep', 'uninstall', 'cursor'], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(path.join(h, '.cursor')), []);
});
