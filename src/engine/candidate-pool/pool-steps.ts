/**
 * What a step does with the candidate pool: the pool starts with the initial skill; before each
 * step the current skill joins it if it is new (a slow update made it) and the step's parent is
 * drawn from the front; the gate's candidate is recorded, and joins when accepted. With
 * `optimizer.pool_merge`, an accepted candidate is then tried with the edits of another member
 * that branched off from a common ancestor (patch mode). A step works on a copy of the pool
 * (`PoolStep`), which its commit takes in.
 */
import path from 'node:path';
import { countTokens } from '../../skill/document.ts';
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';
import { writeSkillFile } from '../../run/skill-files.ts';
import { appliedEdits, type Edit } from '../../skill/edits.ts';
import { originId } from '../../run/origins.ts';
import type { PoolMerge } from '../step/step-record.ts';
import type { RunContext, TrainState } from '../context.ts';
import { round } from '../../util/round.ts';
import { applyDecision, scoredSkill, type GateDecision, type SkillState, type SkillStates } from '../stages/gate.ts';
import { gateCandidate } from '../stages/gate-evaluation.ts';
import type { GateTest } from '../stages/paired-gate.ts';
import type { SelectionScore } from '../stages/selection-eval.ts';
import { applyPatch } from '../stages/update.ts';
import type { StepScope } from '../step/step-scope.ts';
import { CandidatePool, memberFile, type LineageNode, type NodeKind, type PoolMember } from './candidate-pool.ts';

const itemScores = (values: readonly (number | undefined)[]) =>
  values.map((v) => (v === undefined ? null : round(v, 6)));

/** A lineage node for a candidate the gate has decided on. */
function nodeOf(args: {
  id: string;
  parents: string[];
  kind: NodeKind;
  step: number;
  skill: SkillPackage;
  action: string;
  sel?: SelectionScore;
  score?: number;
  test?: GateTest;
  edits?: Edit[];
  member: boolean;
  file: string;
}): LineageNode {
  const complete = args.sel ? args.sel.complete : true;
  return {
    id: args.id,
    parents: args.parents,
    kind: args.kind,
    step: args.step,
    action: args.action,
    score: complete ? (args.sel?.gate ?? args.score ?? null) : null,
    tokens: countTokens(args.skill.skill),
    skill_hash: packageHash(args.skill),
    skill_file: args.member ? memberFile(args.id) : args.file,
    ...(args.member && args.sel ? { item_scores: itemScores(args.sel.itemValues) } : {}),
    ...(args.edits ? { edits: args.edits } : {}),
    ...(args.test ? { test: { effect: round(args.test.effect, 6), p: round(args.test.p, 6) } } : {}),
    in_pool: args.member,
  };
}

const keep = (states: SkillStates) => [states.current.origin, states.best.origin];

/** The pool of a new run: the initial skill, scored in full on selection. */
export function startPool(size: number, initial: PoolMember, sel: SelectionScore): CandidatePool {
  const pool = new CandidatePool(size, [], []);
  pool.add(
    nodeOf({
      id: initial.origin,
      parents: [],
      kind: 'initial',
      step: 0,
      skill: initial,
      action: 'initial',
      sel,
      member: true,
      file: '',
    }),
    initial,
    [initial.origin],
    0,
  );
  return pool;
}

/**
 * The parent of `step`: the current skill joins the pool first when it is new (a slow update
 * changed it); the members that dropped out for it are returned for the step's record.
 */
export async function poolParent(
  ctx: Pick<RunContext, 'selection' | 'settings'>,
  state: TrainState,
  step: number,
): Promise<{ parent: PoolMember; dropped: string[] }> {
  const pool = state.pool!;
  let dropped: string[] = [];
  if (!pool.memberWith(state.current)) {
    const sel = await ctx.selection.score(state.current);
    const parent = pool.members.at(-1)?.origin;
    const member: PoolMember = { ...state.current, values: sel.itemValues };
    dropped = pool.add(
      nodeOf({
        id: state.current.origin,
        parents: parent ? [parent] : [],
        kind: 'slow_update',
        step: state.lastStep,
        skill: state.current,
        action: 'force_accept',
        score: state.current.score,
        sel,
        member: true,
        file: '',
      }),
      member,
      keep(state),
      step,
    );
  }
  return { parent: pool.pick(ctx.settings.seed, step), dropped };
}

/**
 * What a step did with the pool, on a copy of it: the candidates it recorded, the decisions to
 * take into the trainer's state in order (the step's candidate, then a merge's), and the members
 * that dropped out.
 */
export interface PoolStep {
  pool: CandidatePool;
  taken: { candidate: SkillState; decision: GateDecision }[];
  dropped: string[];
  merge?: PoolMerge;
}

/**
 * Records the step's candidate in a copy of the pool; an accepted one joins it. `after`: the
 * current and best skills once the gate's decision is taken (what the pool must keep).
 */
export function recordStepCandidate(
  s: StepScope,
  pool: CandidatePool,
  after: SkillStates,
  candidate: { candidate: SkillPackage; applied?: Edit[] },
  gate: { sel: SelectionScore; decision: GateDecision; test?: GateTest },
): string[] {
  const id = originId({ kind: 'step', step: s.step });
  const member =
    gate.decision.replacesCurrent && gate.sel.complete
      ? { ...scoredSkill(candidate.candidate, gate.sel.gate, id), values: gate.sel.itemValues }
      : undefined;
  const node = nodeOf({
    id,
    parents: [s.reference.origin],
    kind: 'step',
    step: s.step,
    skill: candidate.candidate,
    action: gate.decision.action,
    sel: gate.sel,
    test: gate.test,
    edits: candidate.applied,
    member: member !== undefined,
    file: path.relative(s.ctx.dir.root, path.join(s.files.root, 'candidate_skill.md')),
  });
  return pool.add(node, member, keep(after), s.step);
}

/**
 * A merge partner for `id`: a member that branched off `id`'s line at a common ancestor, whose
 * own line since then is made of edits, not tried with `id` before; the highest-scoring one.
 */
function mergePartner(
  pool: CandidatePool,
  id: string,
): { partner: PoolMember; ancestor: string; edits: Edit[] } | undefined {
  const mine = pool.line(id);
  const tried = new Set(
    pool.nodes.filter((n) => n.kind === 'merge' && n.parents.includes(id)).flatMap((n) => n.parents),
  );
  let found: { partner: PoolMember; ancestor: string; edits: Edit[] } | undefined;
  for (const m of pool.members) {
    if (m.origin === id || tried.has(m.origin)) continue;
    const theirs = pool.line(m.origin);
    const at = theirs.findIndex((n) => mine.includes(n));
    // No common ancestor, or one is the other's ancestor: nothing to merge.
    if (at <= 0 || theirs[at] === id) continue;
    const since = theirs
      .slice(0, at)
      .reverse()
      .map((n) => pool.node(n)!);
    if (since.some((n) => !n.edits?.length)) continue;
    if (!found || m.score > found.partner.score)
      found = { partner: m, ancestor: theirs[at]!, edits: since.flatMap((n) => n.edits!) };
  }
  return found;
}

/**
 * ⑥ with a pool and `optimizer.pool_merge`: the step's accepted candidate with another member's
 * edits, gated against it, on the step's copy of the pool; `after` (the states once the step's
 * decision is taken) takes the merge's decision too.
 */
export async function poolMerge(s: StepScope, step: PoolStep, after: SkillStates): Promise<void> {
  const { settings, dir } = s.ctx;
  const { pool } = step;
  const base = pool.member(originId({ kind: 'step', step: s.step }));
  const plan = base && mergePartner(pool, base.origin);
  if (!base || !plan) return;
  const id = originId({ kind: 'merge', step: s.step });
  const parents = [base.origin, plan.partner.origin];
  const root = path.join(s.files.root, 'merge');
  s.stages.start(
    'pool_merge',
    `${base.origin} with the ${plan.edits.length} edit(s) of ${plan.partner.origin} since ${plan.ancestor}`,
  );
  const { candidate, reports } = applyPatch(base, plan.edits, {
    maxTokens: settings.maxSkillTokens,
    maxPackageTokens: settings.maxPackageTokens,
    singleDocument: !settings.packageSkill,
  });
  const applied = appliedEdits(plan.edits, reports);
  if (applied.length === 0 || packageHash(candidate) === packageHash(base)) {
    s.stages.finish('pool_merge', `nothing to merge: none of ${plan.partner.origin}'s edits applies to ${base.origin}`);
    const node = nodeOf({
      id,
      parents,
      kind: 'merge',
      step: s.step,
      skill: base,
      action: 'skip_no_patches',
      member: false,
      file: '',
    });
    pool.add(node, undefined, keep(after), s.step);
    step.merge = { parents, action: 'skip_no_patches' };
    return;
  }
  writeSkillFile(dir, path.join(root, 'candidate_skill.md'), candidate);
  dir.writeArtifact(path.join(root, 'edit_apply_report.json'), reports);
  const gate = await gateCandidate(s.ctx, candidate, base, after.best, {
    rule: 'gate',
    dir: path.join(root, 'selection_eval'),
    step: s.step,
  });
  const merged = scoredSkill(candidate, gate.sel.gate, id);
  applyDecision(after, merged, gate.decision, s.step);
  step.taken.push({ candidate: merged, decision: gate.decision });
  const member =
    gate.decision.replacesCurrent && gate.sel.complete ? { ...merged, values: gate.sel.itemValues } : undefined;
  const node = nodeOf({
    id,
    parents,
    kind: 'merge',
    step: s.step,
    skill: candidate,
    action: gate.decision.action,
    sel: gate.sel,
    test: gate.test,
    edits: applied,
    member: member !== undefined,
    file: path.relative(dir.root, path.join(root, 'candidate_skill.md')),
  });
  step.dropped.push(...pool.add(node, member, keep(after), s.step));
  step.merge = {
    parents,
    action: gate.decision.action,
    score: gate.sel.complete ? gate.sel.gate : null,
    rollouts_used: gate.sel.used + gate.referenceRollouts,
  };
  s.stages.finish(
    'pool_merge',
    `${gate.decision.action}: merged ${gate.sel.complete ? gate.sel.gate.toFixed(4) : `at most ${gate.sel.gate.toFixed(4)}`} vs ${base.origin} ${base.score.toFixed(4)}`,
  );
}
