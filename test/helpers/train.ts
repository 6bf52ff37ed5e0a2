import '../../src/builtins.ts';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/app/train.ts';
import type { TrainOutcome } from '../../src/engine/trainer.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { ROOT } from './cli.ts';
import { tmpDir } from './tmp.ts';

export const SIM_CONFIG = path.join(ROOT, 'configs/sim/default.yaml');

/** A small sim run: two epochs of two steps, on small splits. */
export const SMALL_SIM = [
  'train.num_epochs=2',
  'env.n_train=20',
  'env.n_val=10',
  'env.n_test=10',
  'train.batch_size=10',
];

/** The audit without its checks of accepted gains: for tests whose call caps stop a run at a chosen step. */
export const NO_GAIN_AUDIT = 'evaluation.audit.checks=[leak,scorer_gaming,sealed_test]';

export interface SimRun {
  out: string;
  outcome: TrainOutcome;
  summary: Record<string, unknown>;
  history: HistoryRecord[];
}

/**
 * Trains on the sim config in this process, quietly. Its test figures are sealed beside the run
 * (each run a measurement of its own) unless the overrides name a seal directory.
 */
export async function trainSim(
  overrides: string[] = [],
  out = path.join(tmpDir('skillopt-sim-'), 'run'),
): Promise<SimRun> {
  const seals = overrides.some((o) => o.startsWith('evaluation.audit.seal_dir='))
    ? []
    : [`evaluation.audit.seal_dir=${path.join(path.dirname(out), 'seals')}`];
  const loaded = loadConfig(SIM_CONFIG, { overrides: [...seals, ...overrides], environment: {} });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: SIM_CONFIG, console: false });
  const summary = outcome.status === 'finished' ? outcome.summary : {};
  const file = path.join(out, 'history.json');
  // A run stopped before its first step has none.
  const history = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as HistoryRecord[]) : [];
  return { out, outcome, summary, history };
}

export function readText(file: string): string {
  return fs.readFileSync(file, 'utf8');
}

/** history.json without what each step paid (tokens, rollouts run): a resumed step pays less. */
export function historyOf(out: string): string {
  return JSON.stringify(
    (JSON.parse(readText(path.join(out, 'history.json'))) as Record<string, unknown>[]).map(
      ({ tokens: _t, gate, ...r }) => {
        const {
          rollouts_used: _u,
          rollouts_saved: _s,
          cache_hits: _c,
          ...decision
        } = (gate ?? {}) as Record<string, unknown>;
        return { ...r, gate: decision };
      },
    ),
    null,
    1,
  );
}

/** Every file under `dir` with its content: a directory a command must leave untouched. */
export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of (fs.readdirSync(dir, { recursive: true }) as string[]).sort()) {
    const file = path.join(dir, f);
    out[f] = fs.statSync(file).isFile() ? fs.readFileSync(file, 'utf8') : '<dir>';
  }
  return out;
}
