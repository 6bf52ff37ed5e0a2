/**
 * The audit over many seeds on the simulator, whose optimizer plants leaks (`leak`: the chance
 * that a failure analyst memorises a failed item's answer into the skill). For every candidate it
 * tells planted from honest by the simulator's own marker, and counts what the audit caught and
 * what it flagged wrongly; then what the audit adds to a run's calls, against the same runs
 * without it, at the default settings (no planted leak).
 *
 *   npx tsx bench/audit.ts [--seeds 20] [--leak 0.3]
 *
 * Not measured yet: planted scorer hacks and brittle rules (the second scorer and the surface-form
 * probes are not built; the scorer-gaming lint is proved on the tasks env's rule scorers in
 * test/audit/).
 */
import { ownSeals } from './isolated-cache.ts';
import '../src/builtins.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runTraining } from '../src/app/train.ts';
import { loadConfig } from '../src/config/load.ts';
import { readJson } from '../src/run/atomic.ts';
import type { HistoryRecord } from '../src/run/records.ts';

const { values: args } = parseArgs({
  options: { seeds: { type: 'string', default: '20' }, leak: { type: 'string', default: '0.3' } },
});
const SEEDS = Number(args.seeds);
const CONFIG = path.resolve(import.meta.dirname, '../configs/sim/default.yaml');
/** How the simulated optimizer writes a memorised answer (`leakedRule` in src/model/sim/optimizer.ts). */
const MARKER = /For "[^"\n]+" the answer is /g;
const markers = (text: string) => text.match(MARKER)?.length ?? 0;
const step4 = (n: number) => String(n).padStart(4, '0');

interface Run {
  out: string;
  history: HistoryRecord[];
  calls: number;
}

async function train(overrides: string[]): Promise<Run> {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-bench-audit-')), 'run');
  // Each run seals in a directory of its own: one run's seal would spare the next its test scoring.
  const loaded = loadConfig(CONFIG, { overrides: [ownSeals(out), ...overrides], environment: {} });
  const outcome = await runTraining({ loaded, outRoot: out, configFile: CONFIG, console: false });
  if (outcome.status !== 'finished') throw new Error(`run ${overrides.join(' ')}: ${outcome.status}`);
  const history = readJson<HistoryRecord[]>(path.join(out, 'history.json')) ?? [];
  return { out, history, calls: (outcome.summary as { provider_calls: number }).provider_calls };
}

/** Each candidate of a run: planted (it adds a memorised answer to the skill it started from) or honest, and the audit's verdict. */
function candidates(run: Run): { planted: boolean; verdict: string; accepted: boolean }[] {
  return run.history.flatMap((h) => {
    const file = path.join(run.out, 'steps', `step_${step4(h.step)}`, 'candidate_skill.md');
    if (!fs.existsSync(file) || !h.audit) return [];
    const start = fs.readFileSync(path.join(run.out, 'skills', `skill_v${step4(h.step - 1)}.md`), 'utf8');
    const planted = markers(fs.readFileSync(file, 'utf8')) > markers(start);
    return [
      { planted, verdict: h.audit.verdict, accepted: h.action.startsWith('accept') || h.action === 'force_accept' },
    ];
  });
}

const pct = (a: number, b: number) => (b ? `${((100 * a) / b).toFixed(1)}%` : '-');
/** What the audit did over all seeds. */
const tally = {
  planted: 0,
  caught: 0,
  honest: 0,
  honestFlagged: 0,
  honestAccepted: 0,
  honestAcceptedFlagged: 0,
  withAudit: 0,
  withoutAudit: 0,
};
console.log(`audit on the simulator, ${SEEDS} seeds, planted leaks at ${args.leak} per failure analyst call`);
console.log('  seed  planted  caught  honest  flagged   calls with / without the audit (no planted leak)');
for (let seed = 1; seed <= SEEDS; seed++) {
  const seedArg = `train.seed=${seed}`;
  const leaky = await train([seedArg, `model.optimizer.options.leak=${args.leak}`]);
  const cs = candidates(leaky);
  const p = cs.filter((c) => c.planted);
  const h = cs.filter((c) => !c.planted);
  const flagged = (c: { verdict: string }) => c.verdict !== 'pass';
  tally.planted += p.length;
  tally.caught += p.filter((c) => c.verdict === 'fail').length;
  tally.honest += h.length;
  tally.honestFlagged += h.filter(flagged).length;
  tally.honestAccepted += h.filter((c) => c.accepted).length;
  tally.honestAcceptedFlagged += h.filter((c) => c.accepted && flagged(c)).length;
  // The default settings, with and without the audit: what it adds to a run's calls.
  const on = await train([seedArg]);
  const off = await train([seedArg, 'evaluation.audit.checks=[]']);
  tally.withAudit += on.calls;
  tally.withoutAudit += off.calls;
  for (const r of [leaky, on, off]) fs.rmSync(path.dirname(r.out), { recursive: true, force: true });
  console.log(
    `  ${String(seed).padStart(4)}  ${String(p.length).padStart(7)}  ${String(p.filter((c) => c.verdict === 'fail').length).padStart(6)}  ${String(h.length).padStart(6)}  ${String(h.filter((c) => c.verdict !== 'pass').length).padStart(7)}   ${on.calls} / ${off.calls}`,
  );
}
const { planted, caught, honest, honestFlagged, honestAccepted, honestAcceptedFlagged } = tally;
const ratio = tally.withAudit / tally.withoutAudit;
console.log(`\nplanted leaks caught: ${caught} of ${planted} (${pct(caught, planted)}; goal: all)`);
console.log(`honest candidates flagged: ${honestFlagged} of ${honest} (${pct(honestFlagged, honest)})`);
console.log(
  `honest accepted edits flagged: ${honestAcceptedFlagged} of ${honestAccepted} (${pct(honestAcceptedFlagged, honestAccepted)}; goal <= 5%)`,
);
console.log(`calls with the audit over without, default settings: ${ratio.toFixed(3)}x (goal <= 1.15x)`);
console.log('planted scorer hacks and brittle rules: not measured (second scorer and surface-form probes not built)');
const met = caught === planted && planted > 0 && honestAcceptedFlagged <= 0.05 * honestAccepted && ratio <= 1.15;
console.log(met ? 'leak goals met.' : 'leak goals NOT met.');
