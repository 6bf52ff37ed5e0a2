/**
 * One night's consolidation of one document, as one step of the engine: the target replays the
 * train tasks under the document (rollout), the optimizer reads the failures and successes
 * (reflect), its patches are merged (aggregate), cut to the edit budget (select) and applied to
 * the document's learned block (update); the gate then scores the candidate on the val tasks
 * and takes it only if it beats the document as it is (and, with `noRegression`, loses on no
 * task). Each stage is the engine's own module; only the learned block is editable.
 *
 * Val tasks that are also train tasks (or a night whose val is its train, having too few tasks
 * to hold any out) cannot certify anything: such a night's candidate is `reject_unverified`,
 * shown as a suggestion and never staged for adoption.
 */
import path from 'node:path';
import pLimit from 'p-limit';
import type { Trajectory } from '../../envs/types.ts';
import type { ChatModel } from '../../model/types.ts';
import { changesOf } from '../../protocol/optimizer.ts';
import { EventLog } from '../../run/events.ts';
import { isApplied } from '../../skill/edits.ts';
import { Rng } from '../../util/random.ts';
import type { OptimizerContext } from '../../engine/optimizer-model/ask.ts';
import { aggregate, type Merged } from '../../engine/stages/aggregate.ts';
import { decide } from '../../engine/stages/gate.ts';
import { Reflector, type AnalystResult } from '../../engine/stages/reflect.ts';
import { Rollouts } from '../../engine/stages/rollout.ts';
import { rankAndSelect } from '../../engine/stages/select.ts';
import { FULL_EVALUATION, SelectionEvaluator, type SelectionScore } from '../../engine/stages/selection-eval.ts';
import { computeScore, itemMetric, type GateScoring } from '../../engine/scoring/means.ts';
import { ScoreCache } from '../../engine/scoring/score-cache.ts';
import type { Evidence } from './evidence.ts';
import { applyToBlock } from '../documents/learned-block.ts';
import type { ReplayDocument } from '../replay/documents.ts';
import { ReplayEnv, taskItem } from '../replay/env.ts';
import type { TaskRecord } from '../tasks/task.ts';
import { brokenProposal, type LivePackage } from '../documents/package-skill.ts';
import type { Skill } from '../../skill/package/package.ts';

export type SleepGateAction =
  | 'accept_new_best'
  | 'reject'
  | 'reject_unverified'
  | 'greedy_applied'
  | 'no_edits'
  | 'no_tasks'
  /** The edits broke the skill's package (a link, the front matter): not scored, not staged. */
  | 'reject_invalid_package';

export interface ConsolidateSettings {
  editBudget: number;
  samples: number;
  gate: boolean;
  scoring: GateScoring;
  noRegression: boolean;
  minibatchSize: number;
  /** Replays at once. */
  workers: number;
  seed: number;
}

export interface ConsolidateModels {
  target: ChatModel;
  judge: ChatModel;
  opt: OptimizerContext;
}

export interface TaskDelta {
  task_id: string;
  baseline: number | null;
  candidate: number | null;
  status: 'improved' | 'regressed' | 'unchanged';
}

export interface SplitScore {
  hard: number;
  soft: number;
  gate: number;
  n: number;
  errors: number;
}

export interface EditOutcome {
  op: string;
  target: string;
  content: string;
  status: string;
  reason?: string;
}

export interface Consolidation {
  document: string;
  accepted: boolean;
  action: SleepGateAction;
  /** Val and train overlapped (or val was the train set): the gate could certify nothing. */
  leaked: boolean;
  blockedByRegression: boolean;
  nTrain: number;
  nVal: number;
  train?: SplitScore;
  baseline?: SplitScore;
  candidate?: SplitScore;
  /** The held-out test score of the document as it was and as proposed (measured only; it decides nothing). */
  test?: { before: SplitScore; after: SplitScore };
  deltas: TaskDelta[];
  edits: EditOutcome[];
  /** The candidate document (whether accepted or not). */
  candidateText: string;
  /** The document this night proposes: the candidate when accepted, else the document as it was. */
  proposedText: string;
  reason: string;
}

export interface ConsolidateInput {
  /** The document's name (a skill's name, or the memory file's). */
  name: string;
  kind: ReplayDocument['kind'];
  /** The document as trained tonight (the live text, or a new skill's scaffold). */
  text: string;
  /** The documents beside it, unchanged by this consolidation. */
  others: ReplayDocument[];
  /** A skill package: its live folder and files. Tasks replay under the whole package; a candidate that breaks it is not taken. */
  package?: LivePackage;
  tasks: TaskRecord[];
  models: ConsolidateModels;
  settings: ConsolidateSettings;
  evidence: Evidence;
  /** Where the analysts' patches go (evidence), if anywhere. */
  dir?: string;
  /** Called between stages: throws to stop there (a handoff night waiting for answers). */
  checkpoint?: () => void;
}

/** Train and val as the gate uses them, and whether val can certify anything. */
export function splitTasks(tasks: TaskRecord[]): { train: TaskRecord[]; val: TaskRecord[]; leaked: boolean } {
  let train = tasks.filter((t) => t.split === 'train');
  let val = tasks.filter((t) => t.split === 'val');
  let leaked = false;
  if (val.length === 0) {
    val = train;
    leaked = train.length > 0;
  }
  if (train.length === 0) {
    train = val;
    leaked = leaked || val.length > 0;
  }
  const trainIds = new Set(train.map((t) => t.id));
  if (val.some((t) => trainIds.has(t.id))) leaked = true;
  return { train, val, leaked };
}

function analystGuide(name: string): string {
  return [
    `The tasks are requests a developer made to their coding agent, replayed under the guidance the agent reads (the skill "${name}" and the project's notes).`,
    "You may change only the learned rules: the bullet list between the SKILLOPT-SLEEP:LEARNED markers. Add rules with `append`; `replace` or `delete` only lines of that list. Text outside the block is the developer's own and edits to it are refused, so when a hand-written instruction causes failures, add a learned rule that overrides it, saying so.",
    'Write each rule as one short, general line starting with "- ": the convention, format or procedure, with exact values (formats, names, limits). Never write the answer to one task, and never tell the agent to ask the developer questions.',
  ].join('\n');
}

function scoreOf(sel: Pick<SelectionScore, 'trajectories' | 'gate'>): SplitScore {
  const done = sel.trajectories.filter((t): t is Trajectory => t !== undefined);
  const s = computeScore(done);
  return { hard: s.hard, soft: s.soft, gate: sel.gate, n: s.n, errors: s.errors };
}

/** Per val task, the gate metric before and after, and whether it moved. */
export function taskDeltas(
  items: { id: string }[],
  before: (Trajectory | undefined)[],
  after: (Trajectory | undefined)[],
  scoring: GateScoring,
): TaskDelta[] {
  const metric = (t: Trajectory | undefined) =>
    t && !t.error ? itemMetric(t.hard, t.soft, scoring.metric, scoring.mixedWeight) : null;
  return items.map((item, i) => {
    const b = metric(before[i]);
    const c = metric(after[i]);
    const status =
      b === null || c === null
        ? c === null && b !== null
          ? 'regressed'
          : 'unchanged'
        : c > b + 1e-12
          ? 'improved'
          : c < b - 1e-12
            ? 'regressed'
            : 'unchanged';
    return { task_id: item.id, baseline: b, candidate: c, status };
  });
}

export async function consolidate(input: ConsolidateInput): Promise<Consolidation> {
  const { settings: s, models, evidence } = input;
  const where = input.name;
  const { train, val, leaked } = splitTasks(input.tasks);
  const result: Consolidation = {
    document: input.name,
    accepted: false,
    action: 'no_tasks',
    leaked,
    blockedByRegression: false,
    nTrain: train.length,
    nVal: val.length,
    deltas: [],
    edits: [],
    candidateText: input.text,
    proposedText: input.text,
    reason: '',
  };
  if (train.length === 0) {
    result.reason = 'no train or val task';
    return result;
  }
  // A package's files go with every replay of its SKILL.md text (the rollout's package target).
  const skillOf = (text: string): Skill => (input.package ? { skill: text, files: input.package.files } : text);
  const env = new ReplayEnv(input.tasks, {
    packaged: Boolean(input.package),
    samples: s.samples,
    documents: (trained) => [{ name: input.name, kind: input.kind, text: trained }, ...input.others],
    analystGuide: analystGuide(input.name),
  });
  const limit = pLimit(Math.max(1, s.workers));
  const rollouts = new Rollouts(
    { env, target: models.target, judge: models.judge, limit, cache: new ScoreCache() },
    s.seed,
  );
  const valItems = val.map(taskItem);
  const trainItems = train.map(taskItem);
  const selection = new SelectionEvaluator(rollouts, valItems, s.scoring, new EventLog());

  // ① rollout on train, with ② reflection fed as results arrive; the gate's baseline alongside.
  const reflector = new Reflector(
    {
      ctx: models.opt,
      skill: input.text,
      budget: s.editBudget,
      minibatchSize: s.minibatchSize,
      failureOnly: false,
      stepBuffer: [],
      stepBufferText: '',
      metaSkill: '',
      skillAware: false,
      appendixSource: 'both',
      analystGuide: env.analystGuide,
      // An agent target's traces, when it leaves any, go to the analysts (as model.trace_to_optimizer's default).
      traces: true,
      limit: pLimit(4),
      patchesDir: input.dir ? path.join(input.dir, 'patches') : undefined,
    },
    new Rng(s.seed).shuffle(trainItems.map((_, i) => i)),
  );
  const [rolled, base] = await Promise.all([
    rollouts.run(skillOf(input.text), trainItems, { training: true, onResult: (t, i) => reflector.add(i, t) }),
    s.gate ? selection.score(skillOf(input.text), { policy: FULL_EVALUATION }) : Promise.resolve(undefined),
  ]);
  input.checkpoint?.();
  const trainTrajectories = rolled.trajectories.filter((t): t is Trajectory => t !== undefined);
  const trainScore = computeScore(trainTrajectories);
  result.train = { hard: trainScore.hard, soft: trainScore.soft, gate: 0, n: trainScore.n, errors: trainScore.errors };
  for (const t of trainTrajectories)
    evidence.log('replay', 'result', {
      document: input.name,
      phase: 'train',
      task_id: t.id,
      hard: t.hard,
      soft: t.soft,
      why: t.failReason ?? '',
      response_head: String(t.predicted ?? '').slice(0, 400),
      error: t.error?.message,
    });
  if (trainScore.n === 0)
    throw new Error(
      `every replay of ${input.name}'s train tasks failed (${trainTrajectories[0]?.error?.kind}: ${trainTrajectories[0]?.error?.message}); check the target model and its endpoint`,
    );
  if (base) {
    result.baseline = scoreOf(base);
    evidence.log('gate', 'baseline', { document: input.name, ...result.baseline });
  }

  // ② reflect, ③ aggregate
  const calls = reflector.close();
  const asPatch = (p: Promise<AnalystResult>): Promise<Merged | null> =>
    p.then((r) => (r.patch ? { reasoning: r.patch.reasoning, items: r.patch.items } : null));
  const merged = await aggregate(
    { ctx: models.opt, skill: input.text, metaSkill: '', groupSize: 8 },
    calls.failure.map(asPatch),
    calls.success.map(asPatch),
  );
  const analysts = await Promise.all([...calls.failure, ...calls.success]);
  input.checkpoint?.();
  if (analysts.length > 0 && analysts.every((a) => a.failed))
    throw new Error(`every optimizer call about ${input.name} failed; check the optimizer model and its endpoint`);
  evidence.log('reflect', 'edits_returned', { document: input.name, analysts: analysts.length, merged: merged.items });
  if (merged.items.length === 0) {
    result.action = 'no_edits';
    result.reason =
      trainScore.hard >= 1 ? 'every train task passed: nothing to learn' : 'the optimizer proposed no change';
    return result;
  }

  // ④ select, ⑤ update (the learned block only)
  const { items: selected } = await rankAndSelect(models.opt, input.text, merged.items, s.editBudget, '');
  input.checkpoint?.();
  const changes = changesOf('patch', selected);
  const applied = applyToBlock(input.text, changes.mode === 'patch' ? changes.items : [], where);
  result.edits = applied.reports.map((r, i) => {
    const edit = changes.items[i];
    return {
      op: r.op,
      target: String(edit?.target ?? ''),
      content: String(edit?.content ?? ''),
      status: r.status,
      ...(r.reason ? { reason: r.reason } : {}),
    };
  });
  evidence.log('update', 'edits_applied', { document: input.name, reports: applied.reports });
  if (!applied.reports.some((r) => isApplied(r.status)) || applied.text === input.text) {
    result.action = 'no_edits';
    result.reason = 'no proposed edit could be applied to the learned block';
    return result;
  }
  result.candidateText = applied.text;
  const broken = input.package ? await brokenProposal(input.package, input.text, applied.text) : undefined;
  if (broken) {
    result.action = 'reject_invalid_package';
    result.reason = broken;
    evidence.log('gate', 'decision', { document: input.name, action: result.action, accepted: false, reason: broken });
    return result;
  }

  // ⑥ the gate
  if (!s.gate) {
    result.accepted = true;
    result.action = 'greedy_applied';
    result.proposedText = applied.text;
    result.reason = 'the gate is off: the edits are taken unchecked';
    evidence.log('gate', 'decision', { document: input.name, mode: 'greedy', accepted: true });
    return result;
  }
  const cand = await selection.score(skillOf(applied.text), { policy: FULL_EVALUATION });
  input.checkpoint?.();
  result.candidate = scoreOf(cand);
  result.deltas = taskDeltas(valItems, base!.trajectories, cand.trajectories, s.scoring);
  const decision = decide(cand.gate, { current: base!.gate, best: base!.gate }, 'gate');
  result.blockedByRegression = s.noRegression && result.deltas.some((d) => d.status === 'regressed');
  let accepted = decision.replacesCurrent && !result.blockedByRegression;
  let action: SleepGateAction = accepted ? 'accept_new_best' : 'reject';
  if (accepted && leaked) {
    accepted = false;
    action = 'reject_unverified';
  }
  result.accepted = accepted;
  result.action = action;
  result.proposedText = accepted ? applied.text : input.text;
  const arithmetic = `${s.scoring.metric} ${base!.gate.toFixed(4)} → ${cand.gate.toFixed(4)}`;
  result.reason = accepted
    ? `better on the val tasks (${arithmetic})`
    : action === 'reject_unverified'
      ? `better (${arithmetic}), but the val tasks were also train tasks: not validated`
      : result.blockedByRegression && decision.replacesCurrent
        ? `better on the whole (${arithmetic}) but worse on ${result.deltas.filter((d) => d.status === 'regressed').length} val task(s), and no regression is allowed`
        : `not better on the val tasks (${arithmetic})`;
  evidence.log('gate', 'decision', {
    document: input.name,
    action,
    accepted,
    leaked,
    blocked_by_regression: result.blockedByRegression,
    baseline: base!.gate,
    candidate: cand.gate,
    deltas: result.deltas,
  });

  const test = input.tasks.filter((t) => t.split === 'test').map(taskItem);
  if (test.length) {
    const measure = new SelectionEvaluator(rollouts, test, s.scoring, new EventLog());
    const [before, after] = await Promise.all([
      measure.score(skillOf(input.text)),
      measure.score(skillOf(result.proposedText)),
    ]);
    result.test = { before: scoreOf(before), after: scoreOf(after) };
    evidence.log('test', 'held_out_score', { document: input.name, ...result.test });
  }
  return result;
}
