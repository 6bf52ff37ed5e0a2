import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config/load.ts';
import { runTraining } from '../../src/engine/run.ts';
import type { TrainOutcome } from '../../src/engine/trainer.ts';
import type { HistoryRecord } from '../../src/run/records.ts';
import { ROOT } from './cli.ts';
import { tmpDir } from './tmp.ts';

export const SIM_CONFIG = path.join(ROOT, 'configs/sim/default.yaml');

export interface SimRun {
  out: string;
  outcome: TrainOutcome;
  summary: Record<string, unknown>;
  history: HistoryRecord[];
}

/** Trains on the sim config in this process, quietly. */
export async function trainSim(overrides: string[] = [], out = path.join(tmpDir('skillopt-sim-'), 'run')): Promise<SimRun> {
  const loaded = loadConfig(SIM_CONFIG, { overrides, environment: {} });
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
