/**
 * The training settings, read once from the config: the original's spellings of modes and
 * policies normalised, and each stage's settings grouped. The engine reads these, never the
 * raw config.
 */
import type { Config, Price } from '../config/schema.ts';
import { UserError } from '../errors.ts';
import { listsWhenToUse } from '../model/harness/backends.ts';
import { rolePrice } from '../model/prices.ts';
import type { ReasoningEffort } from '../model/types.ts';
import type { UpdateMode } from '../protocol/optimizer.ts';
import type { CostObjective, GateScoring } from './scoring/means.ts';

export function updateMode(raw: string): UpdateMode {
  const v = raw.trim().toLowerCase();
  if (['rewrite', 'rewrite_from_suggestions', 'suggestions', 'rewrite_suggestions'].includes(v))
    return 'rewrite_from_suggestions';
  if (['full_rewrite', 'full_rewrite_minibatch', 'minibatch_full_rewrite', 'skill_rewrite_minibatch'].includes(v))
    return 'full_rewrite_minibatch';
  return 'patch';
}

export type LrControl = 'fixed' | 'autonomous' | 'none';

/** What a step edits: the skill's body and files, or the description it is chosen by. */
export type StepTarget = 'body' | 'description';

/** The target of step `step` (1-based): the targets take turns. */
export function stepTarget(targets: readonly StepTarget[], step: number): StepTarget {
  return targets[(step - 1) % targets.length] ?? 'body';
}

export function lrControl(raw: string, mode: UpdateMode): LrControl {
  if (mode === 'full_rewrite_minibatch') return 'none';
  const v = raw.trim().toLowerCase();
  if (['autonomous', 'auto', 'optimizer'].includes(v)) return 'autonomous';
  if (['none', 'off', 'no_lr'].includes(v)) return 'none';
  return 'fixed';
}

export type PairPolicy = 'mixed' | 'changed' | 'unchanged';

export function pairPolicy(raw: string): PairPolicy {
  const v = raw.trim().toLowerCase();
  if (['changed', 'change', 'delta', '10_01', '01_10'].includes(v)) return 'changed';
  if (['unchanged', 'stable', 'same', '00_11'].includes(v)) return 'unchanged';
  return 'mixed';
}

export interface TrainSettings {
  epochs: number;
  batchSize: number;
  accumulation: number;
  seed: number;
  mode: UpdateMode;
  lr: { control: LrControl; scheduler: Config['optimizer']['lr_scheduler']; max: number; min: number };
  reflect: {
    /** Most changes one analyst may propose (the configured learning rate; not the schedule). */
    perPatch: number;
    minibatchSize: number;
    failureOnly: boolean;
    mergeGroupSize: number;
    mergeStrategy: Config['gradient']['merge_strategy'];
    /** An agent target's traces go to the analysts. */
    traces: boolean;
  };
  skillAware: { on: boolean; appendixSource: 'both' | 'failure_only'; consolidateThreshold: number };
  /** Largest skill allowed, in tokens (0 = none). */
  maxSkillTokens: number;
  /** Largest text of a whole package, in tokens (0 = none). */
  maxPackageTokens: number;
  /** The skill is a package (a folder, an archive, an installed skill): edits may create and delete its files. A single document stays one. */
  packageSkill: boolean;
  /** What the steps edit, in turn (`train.targets`, resolved): step N edits `targets[(N - 1) % length]`. */
  targets: StepTarget[];
  /** Description edits a description step may apply (`optimizer.description_edits`). */
  descriptionEdits: number;
  /** The target lists a skill's `when_to_use` after its description (Claude Code): a description step may set it too. */
  whenToUse: boolean;
  rewrite: { reasoningEffort?: ReasoningEffort; outputTokens: number };
  gate: {
    on: boolean;
    earlyStop: boolean;
    /** Hand an accept on as soon as it is certain; the rest of the items are scored off the critical path (`evaluation.gate_early_accept`). */
    earlyAccept: boolean;
    /** Start the next step's rollouts while the gate scores (`evaluation.gate_overlap`). */
    overlap: boolean;
    scoring: GateScoring;
    /** `exact`: beat the current score; `paired`: a paired test must find the candidate better. */
    kind: 'exact' | 'paired';
    /** Selection samples per item and skill. */
    repeats: number;
    alpha: number;
    minDelta: number;
    /** Prefer the shorter skill when scores are within this much (undefined: off). */
    shorterWithin?: number;
  };
  /** Candidates kept (the Pareto front over selection items); 0 = one current skill. */
  pool: { size: number; merge: boolean };
  epoch: {
    slowUpdate: boolean;
    slowUpdateGated: boolean;
    samples: number;
    pairPolicy: PairPolicy;
    metaSkill: boolean;
    topUpChunk: number;
  };
  evalTest: boolean;
  /** `evaluation.transfer_targets` as `BACKEND:MODEL`: other targets the final evaluation scores the initial and best skills on. */
  transferTargets: string[];
  /** The target's prices (its own, else the table's; undefined: unknown), for the cost of a task. */
  targetPrice?: Price;
  budget: Config['budget'];
}

/** Whether steps overlap their gate: as set, else on unless a candidate pool is trained (which refuses it). */
export function gateOverlapOn(config: Pick<Config, 'evaluation' | 'optimizer'>): boolean {
  return config.evaluation.gate_overlap ?? config.optimizer.pool_size <= 1;
}

export function trainSettings(config: Config, options: { packageSkill?: boolean } = {}): TrainSettings {
  const mode = updateMode(config.optimizer.skill_update_mode);
  const targets: StepTarget[] = config.train.targets.length
    ? config.train.targets
    : [config.env.name === 'triggers' ? 'description' : 'body'];
  if (targets.includes('description') && mode !== 'patch')
    throw new UserError(
      `train.targets: a description step edits with set_description, a patch: it needs optimizer.skill_update_mode: patch (not ${config.optimizer.skill_update_mode})`,
    );
  const { optimizer: o, evaluation: e } = config;
  return {
    epochs: config.train.num_epochs,
    batchSize: config.train.batch_size,
    accumulation: config.train.accumulation,
    seed: config.train.seed,
    mode,
    lr: {
      control: lrControl(o.lr_control_mode, mode),
      scheduler: o.lr_scheduler,
      max: o.learning_rate,
      min: o.min_learning_rate,
    },
    reflect: {
      perPatch: o.learning_rate,
      minibatchSize: config.gradient.minibatch_size,
      failureOnly: config.gradient.failure_only,
      mergeGroupSize: config.gradient.merge_batch_size,
      mergeStrategy: config.gradient.merge_strategy,
      traces: config.model.trace_to_optimizer,
    },
    skillAware: {
      on: o.use_skill_aware_reflection,
      appendixSource: o.skill_aware_appendix_source,
      consolidateThreshold: o.skill_aware_consolidate_threshold,
    },
    maxSkillTokens: o.max_skill_tokens,
    maxPackageTokens: o.max_package_tokens,
    packageSkill: options.packageSkill ?? false,
    targets,
    descriptionEdits: o.description_edits,
    whenToUse: listsWhenToUse(config.model.target.backend),
    rewrite: {
      reasoningEffort: (config.model.rewrite_reasoning_effort || undefined) as ReasoningEffort | undefined,
      outputTokens: config.model.rewrite_max_completion_tokens,
    },
    gate: {
      on: e.use_gate,
      earlyStop: e.gate_early_stop,
      earlyAccept: e.gate_early_accept,
      overlap: gateOverlapOn(config),
      scoring: {
        metric: e.gate_metric,
        mixedWeight: e.gate_mixed_weight,
        density: e.use_semantic_density
          ? {
              weight: e.semantic_density_weight,
              words:
                typeof e.leading_words === 'string' ? e.leading_words.split(',').map((w) => w.trim()) : e.leading_words,
            }
          : undefined,
        ...(e.cost_weight > 0 ? { cost: costObjective(config) } : {}),
      },
      kind: e.gate,
      repeats: e.gate_repeats,
      alpha: e.gate_alpha,
      minDelta: e.gate_min_delta,
      shorterWithin: e.prefer_shorter_within,
    },
    pool: { size: o.pool_size > 1 ? o.pool_size : 0, merge: o.pool_merge },
    epoch: {
      slowUpdate: o.use_slow_update,
      // As in the original, this switch gates the slow update even when the step gate is off.
      slowUpdateGated: o.slow_update_gate_with_selection,
      samples: o.slow_update_samples,
      pairPolicy: pairPolicy(o.longitudinal_pair_policy),
      metaSkill: o.use_meta_skill,
      topUpChunk: Math.max(1, config.env.workers),
    },
    evalTest: e.eval_test,
    ...(rolePrice(config.model.target) ? { targetPrice: rolePrice(config.model.target) } : {}),
    transferTargets: e.transfer_targets.map((t) =>
      typeof t === 'string' ? t : t.model ? `${t.backend}:${t.model}` : t.backend,
    ),
    budget: config.budget,
  };
}

function costObjective(config: Config): CostObjective {
  const e = config.evaluation;
  const price = rolePrice(config.model.target);
  if (e.cost_unit === 'usd' && !price)
    throw new UserError(
      `evaluation.cost_unit is usd: the price of model.target (${config.model.target.model}) is unknown; set model.target.price: {input: …, output: …} in USD per 1M tokens, or use cost_unit: ktokens`,
    );
  return { weight: e.cost_weight, unit: e.cost_unit, ...(price ? { price } : {}) };
}
