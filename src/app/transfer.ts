/**
 * Transfer at the end of training (`evaluation.transfer_targets`): the initial and best skills
 * scored on the test split with each other target, as `skillopt eval` scores them (means with
 * 95% intervals, the best against the initial on the same items), into `<run>/transfer/` and a
 * table for `summary.json`. Its calls are recorded in `transfer/calls.jsonl`, not the run's
 * ledger; a resumed run reuses every finished rollout.
 */
import path from 'node:path';
import type { LoadedConfig } from '../config/load.ts';
import { UserError } from '../errors.ts';
import { runEvaluation, transferRole } from './eval/evaluate.ts';
import type { Cell, EvalSummary } from './eval/summary.ts';
import type { RunDir } from '../run/layout.ts';
import type { Transfer } from '../run/records.ts';

/** Refuses a target whose backend is unknown, or a string that is not `BACKEND:MODEL`, before the run starts. */
export function checkTransferTargets(loaded: LoadedConfig): void {
  loaded.config.evaluation.transfer_targets.forEach((spec, i) => {
    try {
      transferRole(spec, loaded.config.model.target);
    } catch (err) {
      throw new UserError(`evaluation.transfer_targets[${i}]: ${(err as Error).message.replace(/^--target /, '')}`);
    }
  });
}

const cellOf = (c: Cell) => ({
  hard: c.hard,
  soft: c.soft,
  ...(c.hard_ci95 ? { hard_ci95: c.hard_ci95 } : {}),
  n: c.n,
});

export function transferTable(summary: EvalSummary, dir: string): Transfer {
  const rows = summary.comparisons.map((cmp) => {
    const cell = (label: string) => summary.cells.find((c) => c.target === cmp.target && c.skill_label === label)!;
    return {
      target: cmp.target,
      initial: cellOf(cell(cmp.baseline)),
      best: cellOf(cell(cmp.candidate)),
      hard: cmp.hard,
      soft: cmp.soft,
    };
  });
  return { split: summary.split, n_items: summary.n_items, dir, rows };
}

export function transferHook(
  loaded: LoadedConfig,
  configFile: string,
  run: RunDir,
  environment?: Record<string, string | undefined>,
) {
  const targets = loaded.config.evaluation.transfer_targets;
  if (targets.length === 0) return undefined;
  return async (skills: { initial: string; best: string }): Promise<Transfer> => {
    const out = run.path('transfer');
    const summary = await runEvaluation({
      loaded,
      outRoot: out,
      configFile,
      skillFiles: [skills.initial, skills.best],
      split: 'test',
      targets,
      environment,
      out: null,
    });
    return transferTable(summary, path.relative(run.root, out));
  };
}
