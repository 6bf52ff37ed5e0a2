/**
 * Finding the run to resume: among the run directories under an output root, the latest
 * unfinished one started from a given config file (`config.json` names it).
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

/** The runs directly under `root` started from `configFile`, the most recently active first. */
export function runsOfConfig(root: string, configFile: string): FoundRun[] {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return [];
  }
  const wanted = path.resolve(configFile);
  const runs: FoundRun[] = [];
  for (const name of names) {
    const run = new RunDir(path.join(root, name));
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
