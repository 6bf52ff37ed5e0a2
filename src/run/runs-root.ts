/**
 * Where runs go unless a command is told otherwise: one root, `outputs/` under the working
 * directory, for every command. `train` starts a run in `outputs/<env>/<timestamp>`, `eval`
 * writes to `outputs/eval_<env>_<model>_<timestamp>`, `ui` shows the root, and `train --resume`
 * looks for the run to continue anywhere under it (`--out outputs/<name>` included).
 */
import path from 'node:path';

export const RUNS_ROOT = 'outputs';

/** A sortable time stamp for a directory name: `20250301_142233` (UTC). */
export function runStamp(now = new Date()): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '_').slice(0, 15);
}

/** A new training run's directory: `outputs/<env>/<timestamp>`. */
export function defaultOutRoot(env: string, now = new Date()): string {
  return path.join(RUNS_ROOT, env || 'run', runStamp(now));
}

/** A new evaluation's directory: `outputs/eval_<env>_<target model>_<timestamp>`. */
export function defaultEvalDir(env: string, model: string, now = new Date()): string {
  const name = (model || 'target').replace(/[^A-Za-z0-9_.-]+/g, '_');
  return path.join(RUNS_ROOT, `eval_${env || 'run'}_${name}_${runStamp(now)}`);
}
