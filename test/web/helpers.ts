import type { RunningDashboard } from '../../src/web/server/server.ts';
import { createDashboardApp } from '../../src/web/server/app.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

export const FIXTURES = path.join(ROOT, 'test/fixtures/runs');

/** A copy of a fixture run under a fresh run root; returns the root and the run directory. */
export function copyFixture(name: string, as = name, root = tmpDir('skillopt-web-')): { root: string; dir: string } {
  const dir = path.join(root, as);
  fs.cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return { root, dir };
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));
const writeJson = (file: string, v: unknown) => fs.writeFileSync(file, `${JSON.stringify(v, null, 2)}\n`);

/**
 * Turns a copy of the finished fixture run into one still running after `steps` steps: later
 * records, events and final files removed, the status `running`, and a run lock held by this
 * process (so the dashboard sees a live trainer).
 */
export function rewindToRunning(dir: string, steps: number): void {
  const history = readJson(path.join(dir, 'history.json')) as { step: number }[];
  writeJson(
    path.join(dir, 'history.json'),
    history.filter((r) => r.step <= steps),
  );
  const rs = readJson(path.join(dir, 'runtime_state.json'));
  writeJson(path.join(dir, 'runtime_state.json'), { ...rs, last_completed_step: steps, status: 'running' });
  for (const f of ['summary.json', 'test_eval', 'test_eval_baseline', 'test_eval_final', 'final_selection_eval'])
    fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  for (let s = steps + 1; s <= 6; s++) {
    fs.rmSync(path.join(dir, 'skills', `skill_v${pad(s, 4)}.md`), { force: true });
    if (s > steps + 1) fs.rmSync(path.join(dir, 'steps', `step_${pad(s, 4)}`), { recursive: true, force: true });
  }
  for (let e = Math.floor(steps / 3) + 1; e <= 2; e++) {
    fs.rmSync(path.join(dir, 'slow_update', `epoch_${pad(e, 2)}`), { recursive: true, force: true });
    fs.rmSync(path.join(dir, 'meta_skill', `epoch_${pad(e, 2)}`), { recursive: true, force: true });
  }
  const events = fs
    .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; step?: number; epoch?: number })
    .filter(
      (e) =>
        e.type !== 'run_finished' &&
        (e.step === undefined || e.step <= steps) &&
        !(e.type === 'epoch_boundary' && (e.epoch ?? 0) * 3 > steps),
    );
  fs.writeFileSync(path.join(dir, 'events.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
  fs.writeFileSync(
    path.join(dir, 'run.lock'),
    JSON.stringify({ pid: process.pid, host: os.hostname(), started: new Date().toISOString() }),
  );
}

/** Adds the fixture's record of `step` to a rewound copy, as the trainer does after a step. */
export function finishStep(dir: string, step: number): void {
  const full = (readJson(path.join(FIXTURES, 'finished-run', 'history.json')) as { step: number }[]).find(
    (r) => r.step === step,
  );
  if (!full) throw new Error(`the fixture has no step ${step}`);
  const history = readJson(path.join(dir, 'history.json')) as unknown[];
  const tmp = path.join(dir, 'history.json.tmp-test');
  writeJson(tmp, [...history, full]);
  const skill = `skill_v${String(step).padStart(4, '0')}.md`;
  fs.copyFileSync(path.join(FIXTURES, 'finished-run', 'skills', skill), path.join(dir, 'skills', skill));
  fs.renameSync(tmp, path.join(dir, 'history.json'));
  fs.appendFileSync(
    path.join(dir, 'events.jsonl'),
    `${JSON.stringify({ time: new Date().toISOString(), type: 'step_finished', step, epoch: 2, action: 'accept_new_best', current_score: 0.8333, best_score: 0.8333, seconds: 6.5 })}\n`,
  );
}

export interface UiProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process printed. */
  output(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL if it is still there after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * `skillopt ui` in a process of its own, as a user starts it (a server that blocks cannot stall
 * the test); resolves once it prints its address. `program`: another copy of the command (an
 * installed package's); `env`: variables besides this process's.
 */
export async function startUiProcess(
  args: string[],
  program: { bin: string; cwd: string } = { bin: BIN, cwd: ROOT },
  env: Record<string, string> = {},
): Promise<UiProcess> {
  const child = spawn(process.execPath, [program.bin, 'ui', '--port', '0', ...args], {
    cwd: program.cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /skillopt dashboard: (http:\/\/\S+\/)/.exec(out);
      if (m) {
        child.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((code) => reject(new Error(`skillopt ui exited (${code}) before serving:\n${out}`)));
  });
  return {
    url,
    child,
    output: () => out,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** A client of the dashboard's read API, in this process (no socket), over these run roots. */
export function apiClient(roots: string[]) {
  const { app } = createDashboardApp({ roots });
  return async (url: string): Promise<{ status: number; body: any }> => {
    const res = await app.request(url);
    return { status: res.status, body: await res.json() };
  };
}

/** URL query parameters from an object. */
export const queryString = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();

/** Calls the actions API of a running dashboard (the getter: it starts in a `before`) with its token. */
export function actionCaller(dashboard: () => RunningDashboard) {
  return async (method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const dash = dashboard();
    const res = await fetch(`${dash.url}${url.slice(1)}`, {
      method,
      headers: { 'x-skillopt-token': dash.access.token, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
}
