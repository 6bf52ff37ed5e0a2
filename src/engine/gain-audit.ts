/**
 * The audit of an accepted gain, once the gate has scored the candidate: the items that decided
 * the accept scored again by the env's second scorer, and the items it improved recast in another
 * surface form and run under both skills (`src/audit/gain.ts` judges what this measures). Only an
 * accept is looked at, and only its decided items: a rule second scorer costs no call, a judge two
 * per item, a probe two rollouts per item (the current skill's variants come from the score cache
 * when an earlier step ran them).
 */
import path from 'node:path';
import { type AuditReport, type CheckResult, withChecks } from '../audit/audit.ts';
import { probeCheck, type ProbedItem, type RescoredItem, secondScorerCheck } from '../audit/gain.ts';
import type { GainAudit } from '../audit/run-audit.ts';
import type { Item, Trajectory } from '../envs/types.ts';
import { InfraError } from '../model/types.ts';
import type { Skill } from '../skill/package/package.ts';
import { itemMetric } from './scoring/means.ts';
import type { SelectionScore } from './stages/selection-eval.ts';
import type { RunContext } from './context.ts';
import type { StepScope } from './step/step-scope.ts';

/** What the audit of a gain uses of a run. */
type GainRun = Pick<RunContext, 'audit' | 'selection' | 'settings' | 'rollouts' | 'stop'>;

/** A rollout's score on the gate's metric; undefined when it did not run or ended in an error. */
function gateValue(run: GainRun): (t: Trajectory | undefined) => number | undefined {
  const { metric, mixedWeight } = run.settings.gate.scoring;
  return (t) => (t && !t.error ? itemMetric(t.hard, t.soft, metric, mixedWeight) : undefined);
}

/** A selection entry scored under both skills, on the gate's metric. */
interface Decided {
  item: Item;
  current: Trajectory;
  candidate: Trajectory;
  training: { current: number; candidate: number };
}

/** The entries whose score the candidate changed (item by item, every sample). */
function decidedEntries(
  run: GainRun,
  candidates: (Trajectory | undefined)[],
  reference: (Trajectory | undefined)[],
): Decided[] {
  const { items } = run.selection;
  const value = gateValue(run);
  const out: Decided[] = [];
  candidates.forEach((candidate, k) => {
    const current = reference[k];
    const before = value(current);
    const after = value(candidate);
    if (before === undefined || after === undefined || before === after) return;
    out.push({
      item: items[k % items.length]!,
      current: current!,
      candidate: candidate!,
      training: { current: before, candidate: after },
    });
  });
  return out;
}

async function rescore(run: GainRun, second: NonNullable<GainAudit['secondScorer']>, decided: Decided[]) {
  const ctx = { judge: second.judge, signal: run.stop };
  let unscored = 0;
  // A reply the judge cannot give, after its retries, leaves the item out, as in a rollout.
  const scoreAgain = (t: Trajectory, item: Item) =>
    second.scorer.score(t, item, ctx).catch((err: unknown) => {
      if (!(err instanceof InfraError)) throw err;
      unscored++;
      return undefined;
    });
  const scored = await Promise.all(
    decided.slice(0, second.maxItems).map(async (d): Promise<RescoredItem | undefined> => {
      const [current, candidate] = await Promise.all([d.current, d.candidate].map((t) => scoreAgain(t, d.item)));
      if (current === undefined || candidate === undefined) return undefined;
      // The second scorers say right or wrong: they are compared with training's pass or fail, whatever the gate's metric.
      const training = { current: d.current.hard, candidate: d.candidate.hard };
      return { item: d.item.id, training, second: { current, candidate } };
    }),
  );
  const items = scored.filter((r): r is RescoredItem => r !== undefined);
  const name = second.scorer.kind === 'judge' ? 'judge model' : 'rule scorer';
  const check = secondScorerCheck(items, second.minKept, name);
  if (unscored)
    check.summary += ` (${unscored} answer${unscored === 1 ? '' : 's'} the ${name} could not score left out)`;
  return { check: 'second_scorer' as const, ...check };
}

async function probe(
  run: GainRun,
  probes: NonNullable<GainAudit['probes']>,
  decided: Decided[],
  skills: Skill[],
  dir: string,
) {
  const improved = decided.filter((d) => d.training.candidate > d.training.current);
  const seen = new Set<string>();
  const distinct = improved.filter((d) => !seen.has(d.item.id) && seen.add(d.item.id));
  // Round by round, one more form of each improved item, until enough variants: few items get several forms each.
  const variants: { of: Decided; item: Item; form: ProbedItem['form'] }[] = [];
  for (let round = 0; round < probes.forms.length && variants.length < probes.items; round++) {
    for (const [k, d] of distinct.entries()) {
      if (variants.length >= probes.items) break;
      const form = probes.forms[(k + round) % probes.forms.length]!;
      const item = probes.probe(d.item, form);
      if (item) variants.push({ of: d, item, form });
    }
  }
  const value = gateValue(run);
  const [current, candidate] = await Promise.all(
    skills.map((skill, k) =>
      run.rollouts.run(
        skill,
        variants.map((v) => v.item),
        { dir: path.join(dir, k === 0 ? 'current' : 'candidate'), signal: run.stop },
      ),
    ),
  );
  const probed: ProbedItem[] = [];
  variants.forEach((v, k) => {
    const vc = value(current!.trajectories[k]);
    const vn = value(candidate!.trajectories[k]);
    if (vc === undefined || vn === undefined) return;
    probed.push({ item: v.of.item.id, form: v.form, original: v.of.training, variant: { current: vc, candidate: vn } });
  });
  return { check: 'probes' as const, ...probeCheck(probed, probes.margin) };
}

/** A skill's rollouts on the selection split, run where the score cache lacks them (a skill the slow update made was taken without). */
async function onSelection(run: GainRun, skill: Skill, known?: (Trajectory | undefined)[]) {
  const cached = known ?? run.selection.cachedTrajectories(skill);
  return cached.some((t) => t === undefined) ? (await run.selection.score(skill)).trajectories : cached;
}

/**
 * The gain checks of `candidate` over `reference` on the selection split (`dir`: where the probes'
 * rollouts go); none when the audit has no gain check for this env.
 */
export async function measureGain(
  run: GainRun,
  reference: Skill,
  candidate: Skill,
  dir: string,
  candidateTrajectories?: (Trajectory | undefined)[],
): Promise<CheckResult[] | undefined> {
  const gain = run.audit?.gain;
  if (!gain) return undefined;
  const [before, after] = await Promise.all([
    onSelection(run, reference),
    onSelection(run, candidate, candidateTrajectories),
  ]);
  const decided = decidedEntries(run, after, before);
  return Promise.all([
    ...(gain.secondScorer ? [rescore(run, gain.secondScorer, decided)] : []),
    ...(gain.probes ? [probe(run, gain.probes, decided, [reference, candidate], dir)] : []),
  ]);
}

/**
 * The gain checks of a step's accepted candidate, added to the report its lint gave (`audit.json`
 * is rewritten with them); undefined when the audit has no gain check for this env.
 */
export async function auditGain(
  s: StepScope,
  candidate: Skill,
  sel: SelectionScore,
  lint: AuditReport | undefined,
): Promise<AuditReport | undefined> {
  if (!s.ctx.audit?.gain) return undefined;
  s.stages.start('audit', 'the accepted gain under a second scorer and recast items');
  const checks = (await measureGain(
    s.ctx,
    s.reference,
    candidate,
    path.join(s.files.root, 'probes'),
    sel.trajectories,
  ))!;
  const report = withChecks(lint, checks);
  s.files.write('audit.json', report);
  s.stages.finish('audit', checks.map((c) => `${c.check} ${c.verdict}`).join(', '));
  return report;
}
