/**
 * What the trainer asks the optimizer model, and what it expects back: the JSON reply shapes
 * (zod schemas, in the original's field names) and the structured payload each prompt is
 * rendered from (`ChatRequest.meta`).
 */
import { z } from 'zod';
import type { StepAction } from '../run/records.ts';
import { EditSchema, type Edit } from '../skill/edits.ts';

export type UpdateMode = 'patch' | 'rewrite_from_suggestions' | 'full_rewrite_minibatch';

export const SuggestionSchema = z
  .object({
    type: z.string().default('add_rule'),
    title: z.string().default(''),
    motivation: z.string().optional(),
    instruction: z.string().default(''),
    priority_hint: z.string().optional().catch(undefined),
    support_count: z.coerce.number().optional().catch(undefined),
    source_type: z.string().optional().catch(undefined),
    merge_level: z.coerce.number().optional().catch(undefined),
  })
  .loose();
export type Suggestion = z.infer<typeof SuggestionSchema>;

export const SkillCandidateSchema = z
  .object({
    title: z.string().default(''),
    change_summary: z.union([z.array(z.string()), z.string()]).default([]),
    new_skill: z.string().default(''),
    support_count: z.coerce.number().optional().catch(undefined),
    source_type: z.string().optional().catch(undefined),
    merge_level: z.coerce.number().optional().catch(undefined),
  })
  .loose();
export type SkillCandidate = z.infer<typeof SkillCandidateSchema>;

export type UpdateItem = Edit | Suggestion | SkillCandidate;

/**
 * The changes of one patch, tagged by their update mode: every item of a patch has its mode's
 * shape (the mode's reply schema parsed it).
 */
export type Changes =
  | { mode: 'patch'; items: Edit[] }
  | { mode: 'rewrite_from_suggestions'; items: Suggestion[] }
  | { mode: 'full_rewrite_minibatch'; items: SkillCandidate[] };

/** Each guard tests the field its schema always fills. */
export const isEdit = (item: UpdateItem): item is Edit => typeof item.op === 'string';
export const isSuggestion = (item: UpdateItem): item is Suggestion => typeof item.instruction === 'string';
export const isSkillCandidate = (item: UpdateItem): item is SkillCandidate => typeof item.new_skill === 'string';

/** `items` proposed in `mode`, tagged; an item without its mode's shape is left out. */
export function changesOf(mode: UpdateMode, items: UpdateItem[]): Changes {
  switch (mode) {
    case 'patch':
      return { mode, items: items.filter(isEdit) };
    case 'rewrite_from_suggestions':
      return { mode, items: items.filter(isSuggestion) };
    case 'full_rewrite_minibatch':
      return { mode, items: items.filter(isSkillCandidate) };
  }
}

/** The list key of a patch in each update mode, and how items are called in messages. */
export const PAYLOAD: Record<UpdateMode, { key: 'edits' | 'revise_suggestions' | 'skill_candidates'; label: string }> =
  {
    patch: { key: 'edits', label: 'edits' },
    rewrite_from_suggestions: { key: 'revise_suggestions', label: 'suggestions' },
    full_rewrite_minibatch: { key: 'skill_candidates', label: 'skill candidates' },
  };

/** A patch: reasoning plus the mode's list of items. */
export interface Patch {
  reasoning: string;
  items: UpdateItem[];
  source: 'failure' | 'success';
}

/** A patch as the optimizer writes it: reasoning, and the items under its mode's key. */
export interface PatchReply {
  reasoning: string;
  edits?: Edit[];
  revise_suggestions?: Suggestion[];
  skill_candidates?: SkillCandidate[];
  [field: string]: unknown;
}

const reasoning = z.string().default('');
const PATCH_REPLIES: Record<UpdateMode, z.ZodType<PatchReply>> = {
  patch: z.object({ reasoning, edits: z.array(EditSchema) }).loose(),
  rewrite_from_suggestions: z.object({ reasoning, revise_suggestions: z.array(SuggestionSchema) }).loose(),
  full_rewrite_minibatch: z.object({ reasoning, skill_candidates: z.array(SkillCandidateSchema) }).loose(),
};

export function patchReplySchema(mode: UpdateMode): z.ZodType<PatchReply> {
  return PATCH_REPLIES[mode];
}

/** The items of a patch of `mode` (none when it has no patch). */
export function itemsOf(mode: UpdateMode, patch: PatchReply | undefined): UpdateItem[] {
  return patch?.[PAYLOAD[mode].key] ?? [];
}

export function analystReplySchema(mode: UpdateMode, source: 'failure' | 'success') {
  return z
    .object({
      batch_size: z.coerce.number().optional(),
      ...(source === 'failure'
        ? {
            failure_summary: z
              .array(
                z
                  .object({
                    failure_type: z.string().default(''),
                    count: z.coerce.number().optional(),
                    description: z.string().default(''),
                  })
                  .loose(),
              )
              .default([]),
          }
        : { success_patterns: z.array(z.string()).default([]) }),
      patch: patchReplySchema(mode).optional(),
      /** Read tolerantly (see extractNotes): strings, {note} or {content} objects, or one string. */
      appendix_notes: z.unknown().optional(),
    })
    .loose();
}

export const RankReplySchema = z
  .object({ reasoning: z.string().default(''), selected_indices: z.array(z.unknown()).default([]) })
  .loose();

export const LrReplySchema = z
  .object({
    learning_rate: z.unknown(),
    reasoning: z.string().default(''),
    confidence: z.string().default(''),
    risk_notes: z.array(z.string()).default([]),
  })
  .loose();

export const RewriteReplySchema = z
  .object({
    reasoning: z.string().default(''),
    change_summary: z.union([z.array(z.string()), z.string()]).default([]),
    new_skill: z.string().default(''),
  })
  .loose();

/** Drafted trigger queries: what a person would type, and whether the skill should load for it. */
export const DraftTriggersReplySchema = z.object({
  queries: z.array(z.object({ query: z.string().min(1), should_trigger: z.boolean() }).loose()).min(1),
});

export const ConsolidateReplySchema = z.object({ appendix_notes: z.array(z.string()).default([]) }).loose();

/** What the optimizer reads of one trajectory. */
export interface TrajectoryView {
  id: string;
  task: string;
  taskType: string;
  predicted: string;
  expected: string;
  hard: number;
  soft: number;
  failReason: string;
  /** The rendered trajectory, as it appears in the prompt. */
  text: string;
}

/** A step of this epoch, as remembered for later reflections (reference §3.8). */
export interface StepBufferEntry {
  step: number;
  action: StepAction;
  n_total: number;
  n_fail: number;
  failure_patterns: { pattern: string; count: number; task_ids: string[] }[];
  score_before?: number;
  score_after?: number;
  /** When the gate stopped early: the most the rejected candidate could have scored. */
  score_after_at_most?: number;
  /** The optimizer's view of an entry with `score_after_at_most`: only that the gate stopped early. */
  stopped_early?: boolean;
  rejected_edits?: Record<string, unknown>[];
}

export type PairCategory = 'improved' | 'regressed' | 'persistent_fail' | 'stable_success';

export interface PairSide {
  hard: number;
  soft: number;
  predicted_answer: string;
  fail_reason: string;
}

export interface ComparisonPair {
  id: string;
  task: string;
  category: PairCategory;
  expected: string;
  prev: PairSide;
  curr: PairSide;
  prev_trajectory?: string;
  curr_trajectory?: string;
}

/** The kinds of optimizer request, each answered by its own reply schema. */
export const OPTIMIZER_REQUESTS = [
  'analyst',
  'merge',
  'rank',
  'lr_autonomous',
  'rewrite',
  'slow_update',
  'meta_skill',
  'appendix_consolidate',
  'draft_triggers',
] as const;

/** The payload of an optimizer request (`ChatRequest.meta`), or undefined for another kind of request. */
export function optimizerRequest(meta: unknown): OptimizerMeta | undefined {
  if (meta === null || typeof meta !== 'object' || !('kind' in meta)) return undefined;
  const kinds: readonly unknown[] = OPTIMIZER_REQUESTS;
  return kinds.includes(meta.kind) ? (meta as OptimizerMeta) : undefined;
}

export type OptimizerMeta =
  | {
      kind: 'analyst';
      source: 'failure' | 'success';
      mode: UpdateMode;
      skill: string;
      budget: number;
      trajectories: TrajectoryView[];
      stepBuffer: StepBufferEntry[];
      metaSkill: string;
      skillAware: boolean;
      analystGuide: string;
      /** Set when the step trains the description: the analyst proposes a `set_description`. */
      target?: 'description';
      /** A description step may set `when_to_use` too (the target lists it). */
      whenToUse?: boolean;
    }
  | {
      kind: 'merge';
      /** `top`: the combined strategy's one merge of both kinds, ranked within `budget` when that is given. */
      level: 'failure' | 'success' | 'final' | 'top';
      mode: UpdateMode;
      skill: string;
      patches: { reasoning: string; items: UpdateItem[]; source?: 'failure' | 'success' }[];
      budget?: number;
    }
  | { kind: 'rank'; mode: UpdateMode; skill: string; items: UpdateItem[]; budget: number }
  | {
      kind: 'lr_autonomous';
      mode: UpdateMode;
      skill: string;
      items: UpdateItem[];
      rolloutHard: number;
      rolloutN: number;
    }
  | { kind: 'rewrite'; skill: string; suggestions: Suggestion[] }
  | { kind: 'slow_update'; prevSkill: string; currSkill: string; guidance: string; pairs: ComparisonPair[] }
  | { kind: 'meta_skill'; prevSkill: string; currSkill: string; previous: string; pairs: ComparisonPair[] }
  | { kind: 'appendix_consolidate'; notes: string[] }
  | {
      kind: 'draft_triggers';
      /** The skill's `SKILL.md`. */
      skill: string;
      /** Queries wanted of each kind. */
      count: number;
      /** The other skills an agent would see beside it, where near misses come from. */
      others: { name: string; description: string }[];
    };
