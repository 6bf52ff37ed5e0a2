/** A training run's state, as the MCP tools report it: read from its run directory like the dashboard does. */
import path from 'node:path';
import { isRunDir } from '../web/files/roots.ts';
import { RunReader, type RunOverview } from '../web/runs/run-reader.ts';

export function runReader(dir: string): RunReader {
  return new RunReader({ id: path.basename(dir), root: { index: 0, given: dir, real: dir }, rel: '', dir });
}

export function readRun(dir: string): RunOverview | undefined {
  return isRunDir(dir) ? runReader(dir).overview() : undefined;
}

const score = (s: number | null | undefined) => (s === null || s === undefined ? '—' : s.toFixed(3));

/** One line a person reads: status, steps, stage, scores. */
export function describeRun(o: RunOverview): string {
  const p = o.progress;
  const steps = `step ${p.completedSteps}${p.totalSteps ? `/${p.totalSteps}` : ''}`;
  const epoch = p.epoch !== undefined ? `, epoch ${p.epoch}${p.epochs ? `/${p.epochs}` : ''}` : '';
  const stage = p.stage ? `, ${p.stage.stage}` : '';
  const test = o.test.best !== null ? `; test: baseline ${score(o.test.baseline)}, best ${score(o.test.best)}` : '';
  return `${o.status}${o.statusDetail ? ` (${o.statusDetail})` : ''}: ${steps}${epoch}${stage}; best val ${score(o.bestScore)}${o.bestStep !== undefined ? ` at step ${o.bestStep}` : ''}${test}`;
}
