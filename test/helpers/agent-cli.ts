/**
 * What the tests of the agent CLIs share: the real CLIs installed from npm (node_modules/.bin),
 * an environment of their own (a temporary HOME, so the user's ~/.codex, ~/.claude and
 * ~/.copilot are never touched; a shared cache folder for the Copilot CLI's unpacked package),
 * harness settings pointed at a fake server, a file of answers planted outside the workspace,
 * and a look at which processes are still alive.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { HarnessSettings } from '../../src/model/harness/cli-harness.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export function cliPath(name: 'codex' | 'claude' | 'copilot'): string {
  return path.join(ROOT, 'node_modules', '.bin', name);
}

/** A skip reason when the CLI is not installed (node:test's `skip`), else false. */
export function missingCli(name: 'codex' | 'claude' | 'copilot'): string | false {
  return fs.existsSync(cliPath(name)) ? false : `${name} is not installed (npm ci installs it)`;
}

const made: string[] = [];
process.once('exit', () => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder under the temp directory, removed when the test process exits. */
export function tempDir(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)));
  made.push(dir);
  return dir;
}

/** The environment a test runs a CLI with: PATH, a HOME of its own, and the shared cache. */
export function testEnvironment(): Record<string, string> {
  const cache = path.join(os.tmpdir(), 'skillopt-test-cli-cache');
  fs.mkdirSync(cache, { recursive: true });
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tempDir('skillopt-test-home'),
    XDG_CACHE_HOME: cache,
    LANG: 'C.UTF-8',
  };
}

export function harnessSettings(
  over: Partial<HarnessSettings> & Pick<HarnessSettings, 'path' | 'baseUrl'>,
): HarnessSettings {
  return {
    model: 'gpt-5.5',
    reasoningEffort: '',
    environment: testEnvironment(),
    home: '',
    env: {},
    passEnv: [],
    allowWrites: false,
    extraArgs: [],
    apiKeyEnv: '',
    ...over,
  };
}

/** A file of answers outside any workspace, the way a split file with gold answers sits on disk. */
export function plantAnswers(): { dir: string; file: string; secret: string } {
  const dir = tempDir('skillopt-test-split');
  const secret = `GOLD-ANSWER-${Math.random().toString(36).slice(2, 10)}`;
  const file = path.join(dir, 'answers.jsonl');
  fs.writeFileSync(file, `${JSON.stringify({ id: 'q1', answer: secret })}\n`);
  return { dir, file, secret };
}

/** How many live processes have exactly this command line (ps). */
export function processesRunning(commandLine: string): number {
  const out = execFileSync('ps', ['-eo', 'args='], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.trim() === commandLine).length;
}

/** Resolves when `check` holds (polled), or rejects after `ms`. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
