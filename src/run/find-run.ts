/**
 * Finding the run to resume: among the run directories under the runs root (at its top level,
 * as `--out outputs/<name>` makes them, or one level down, as `outputs/<env>/<timestamp>`), the
 * latest unfinished one started from a given config file (`config.json` names it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJson } from './atomic.ts';
import { RunDir } from './layout.ts';

export interface FoundRun {
  dir: string;
  /** The config the run was started with (`config.json`'s `config`). */
  config: unknown;
  finished: boolean;
  /** Last activity (ms since the epoch). */
  updated: number;
}

function mtime(file: string): number {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function subdirectories(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
}

/** Run directories (those with a `config.json`) under `root`, at its top level or one level down. */
function runDirsUnder(root: string): string[] {
  return subdirectories(root).flatMap((dir) =>
    fs.existsSync(path.join(dir, 'config.json')) ? [dir] : subdirectories(dir),
  );
}

/** The runs under `root` started from `configFile`, the most recently active first. */
export function runsOfConfig(root: string, configFile: string): FoundRun[] {
  const wanted = path.resolve(configFile);
  const runs: FoundRun[] = [];
  for (const runDir of runDirsUnder(root)) {
    const run = new RunDir(runDir);
    let stored: { config?: unknown; config_file?: string; files?: string[] } | undefined;
    try {
      stored = readJson(run.config);
    } catch {
      continue; // not readable: not a run this can resume
    }
    const from = stored?.config_file ?? stored?.files?.at(-1);
    if (!stored?.config || !from || path.resolve(from) !== wanted) continue;
    const finished = run.readRuntimeState()?.status === 'finished' && fs.existsSync(run.summary);
    const updated = Math.max(mtime(run.events), mtime(run.runtimeState), mtime(run.config));
    runs.push({ dir: run.root, config: stored.config, finished, updated });
  }
  return runs.sort((a, b) => b.updated - a.updated);
}
