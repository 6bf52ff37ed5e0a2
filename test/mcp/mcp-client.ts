/** A project for `skillopt mcp` (the sim configs, real transcripts of it, a crontab of its own) and SDK clients of the server. */
import fs from 'node:fs';
import path from 'node:path';
import { after } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BIN, ROOT } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { fixtureHome } from '../sleep/fixture-home.ts';

export interface Setup {
  project: string;
  home: string;
  env: Record<string, string>;
}

export function setup(sleepYaml = ''): Setup {
  const project = fs.realpathSync(tmpDir('acme-project-'));
  fs.cpSync(path.join(ROOT, 'configs', '_base_'), path.join(project, 'configs', '_base_'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'configs', 'sim'), path.join(project, 'configs', 'sim'), { recursive: true });
  // The transcripts' sessions were held in /home/dev/acme: here, in the project.
  const fh = fixtureHome({ agents: ['claude'], edit: (_rel, text) => text.replaceAll('/home/dev/acme', project) });
  fh.close();
  const dir = tmpDir();
  const crontab = path.join(dir, 'crontab');
  fs.writeFileSync(
    crontab,
    `#!/bin/sh\nT='${dir}/table'\nif [ "$1" = "-l" ]; then\n  if [ -f "$T" ]; then cat "$T"; else echo "no crontab for tester" >&2; exit 1; fi\nelse cat > "$T"; fi\n`,
    { mode: 0o755 },
  );
  writeFiles(dir, { 'sleep.yaml': `state_dir: ${JSON.stringify(path.join(dir, 'state'))}\n${sleepYaml}` });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: fh.home,
    SKILLOPT_SLEEP_CONFIG: path.join(dir, 'sleep.yaml'),
    SKILLOPT_CRONTAB: crontab,
  };
  return { project, home: fh.home, env };
}

const clients: Client[] = [];
after(() => Promise.all(clients.map((c) => c.close())));

export async function connect(s: Setup, capabilities: { elicitation?: Record<string, unknown> } = {}): Promise<Client> {
  const client = new Client({ name: 'skillopt-test', version: '1.0.0' }, { capabilities });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--project', s.project],
      env: s.env,
      cwd: s.project,
      stderr: 'pipe',
    }),
  );
  clients.push(client);
  return client;
}

/** A client that can ask its user (elicitation); the user answers `user.answer`, and the questions are kept in `asked`. */
export async function connectAsking(s: Setup) {
  const client = await connect(s, { elicitation: {} });
  const asked: string[] = [];
  const user = { answer: 'decline' as 'decline' | 'accept' };
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return user.answer === 'accept' ? { action: 'accept', content: { confirm: true } } : { action: 'decline' };
  });
  return { client, user, asked };
}

export const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
