/**
 * The real Codex and Copilot CLIs, with skillopt's MCP server installed by
 * `skillopt sleep install <agent>` in a temporary home, against a fake model server on 127.0.0.1:
 * the model asks for the server's `sleep_dry_run` tool, the CLI calls `skillopt mcp`, and the
 * tool's result (the dry run of the home's transcripts) comes back to the model.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cliPath, missingCli, tempDir } from '../helpers/agent-cli.ts';
import { runCli } from '../helpers/cli.ts';
import { fakeAgentServers, type Turn } from '../helpers/fake-agent-server.ts';
import { writeFiles } from '../helpers/tmp.ts';
import { fixtureHome } from '../sleep/fixture-home.ts';

const fakeServer = fakeAgentServers();

/** The name the CLI gave our tool in the request's tool list (each CLI prefixes MCP tools its own way). */
function toolName(turn: Turn, tool: string): string {
  const tools: any[] = (turn.request.body as any).tools ?? [];
  const names = tools.map((t) => t.name ?? t.function?.name).filter((n): n is string => typeof n === 'string');
  const found = names.find((n) => n.endsWith(tool));
  if (!found) throw new Error(`no tool ending in ${tool} among ${names.join(', ')}`);
  return found;
}

function setup(agent: 'codex' | 'copilot') {
  const project = tempDir('acme');
  const fh = fixtureHome({ agents: ['claude'], edit: (_rel, text) => text.replaceAll('/home/dev/acme', project) });
  fh.close();
  const env = {
    HOME: fh.home,
    SKILLOPT_SLEEP_CONFIG: path.join(fh.home, 'sleep.yaml'),
    CODEX_HOME: '',
    COPILOT_HOME: '',
  };
  writeFiles(fh.home, { 'sleep.yaml': `state_dir: ${JSON.stringify(path.join(fh.home, '.skillopt-sleep'))}\n` });
  const r = runCli(['sleep', 'install', agent], { env });
  assert.equal(r.status, 0, r.stderr);
  return { project, home: fh.home };
}

function run(
  bin: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; stdin: string },
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.stdin.end(options.stdin);
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

const DRY_RUN_INPUT = { sources: ['claude'], since: '2026-11-01' };

function script(calls: string[]) {
  return (turn: Turn) => {
    if (turn.toolOutputs.length === 0) {
      const name = toolName(turn, 'sleep_dry_run');
      calls.push(name);
      return { tool: name, input: DRY_RUN_INPUT };
    }
    return { text: 'The dry run is done.' };
  };
}

/**
 * Codex offers MCP tools through its tool search: the model searches first (a `tool_search_call`),
 * Codex answers with the matching tools (a `tool_search_output`, MCP tools in a namespace), and the
 * model then calls the tool by name in that namespace.
 */
function codexScript(calls: string[], searched: unknown[]) {
  return (turn: Turn) => {
    const input: any[] = (turn.request.body as any).input ?? [];
    const found = input.find((i) => i.type === 'tool_search_output');
    if (!found)
      return {
        item: {
          type: 'tool_search_call',
          call_id: 'search-1',
          execution: 'client',
          arguments: { query: 'skillopt sleep dry run', limit: 8 },
        },
      };
    if (turn.toolOutputs.length === 0) {
      searched.push(found.tools);
      const namespaces: any[] = (found.tools ?? []).filter((t: any) => t.type === 'namespace');
      const ns = namespaces.find((n) => (n.tools ?? []).some((t: any) => t.name === 'sleep_dry_run'));
      if (!ns) throw new Error(`the tool search found no sleep_dry_run: ${JSON.stringify(found.tools).slice(0, 500)}`);
      calls.push(`${ns.name}${'sleep_dry_run'}`);
      return {
        item: {
          type: 'function_call',
          call_id: 'call-1',
          namespace: ns.name,
          name: 'sleep_dry_run',
          arguments: JSON.stringify(DRY_RUN_INPUT),
        },
      };
    }
    return { text: 'The dry run is done.' };
  };
}

function assertDryRunCameBack(turns: Turn[], out: string): void {
  const outputs = turns.flatMap((t) => t.toolOutputs);
  assert.ok(outputs.length > 0, `no tool output reached the model:\n${out}`);
  const report = outputs.at(-1)!;
  assert.match(report, /\\?"sessions\\?":\s*2\b/, report);
}

test("Codex calls skillopt's MCP tool the model asked for, and the result reaches the model", {
  skip: missingCli('codex'),
}, async () => {
  const { project, home } = setup('codex');
  const calls: string[] = [];
  const searched: unknown[] = [];
  const server = await fakeServer(codexScript(calls, searched));
  // `required`: Codex waits for the server before the first model request (on a loaded machine
  // the server takes seconds to start, and a search before that finds nothing).
  const settings = {
    approval_policy: '"never"',
    model_provider: '"fake"',
    'model_providers.fake.name': '"fake"',
    'model_providers.fake.base_url': `"${server.url}/v1"`,
    'model_providers.fake.wire_api': '"responses"',
    'analytics.enabled': 'false',
    check_for_update_on_startup: 'false',
    'mcp_servers.skillopt.required': 'true',
  };
  const args = [
    'exec',
    '--json',
    '--ephemeral',
    '--skip-git-repo-check',
    '-C',
    project,
    '-m',
    'gpt-5.5',
    ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    '-',
  ];
  const r = await run(cliPath('codex'), args, {
    cwd: project,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      SKILLOPT_SLEEP_CONFIG: path.join(home, 'sleep.yaml'),
    },
    stdin: 'What would a Sleep harvest read?',
  });
  assert.equal(calls.length, 1, r.out);
  assert.match(calls[0]!, /skillopt/);
  assertDryRunCameBack(server.turns, r.out);
  assert.equal(r.code, 0, r.out);
});

test("the Copilot CLI calls skillopt's MCP tool the model asked for, and the result reaches the model", {
  skip: missingCli('copilot'),
}, async () => {
  const { project, home } = setup('copilot');
  const calls: string[] = [];
  const server = await fakeServer(script(calls));
  const cache = path.join(path.dirname(home), 'skillopt-test-cli-cache');
  fs.mkdirSync(cache, { recursive: true });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CACHE_HOME: cache,
    SKILLOPT_SLEEP_CONFIG: path.join(home, 'sleep.yaml'),
    COPILOT_PROVIDER_BASE_URL: `${server.url}/v1`,
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_WIRE_API: 'responses',
    COPILOT_OFFLINE: 'true',
    COPILOT_MODEL: 'gpt-5.5',
    COPILOT_AUTO_UPDATE: 'false',
  };
  const args = [
    '-p',
    'What would a Sleep harvest read?',
    '--output-format',
    'json',
    '--no-color',
    '--no-auto-update',
    '--disable-builtin-mcps',
    '--no-ask-user',
    '--allow-all-tools',
  ];
  const r = await run(cliPath('copilot'), args, { cwd: project, env, stdin: '' });
  assert.equal(calls.length, 1, r.out);
  assert.match(calls[0]!, /skillopt/);
  assertDryRunCameBack(server.turns, r.out);
  assert.equal(r.code, 0, r.out);
});
