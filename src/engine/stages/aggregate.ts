/**
 * Gradient accumulation: patches are merged hierarchically, in groups of `merge_batch_size`.
 * Two strategies:
 * - `staged` (the original's): failure patches and success patches are merged separately, then
 *   one final merge gives failure-driven changes priority; the ranking follows, in the select
 *   stage.
 * - `combined`: each kind is merged level by level only until the patches of both kinds fit in
 *   one group; one call then merges them all, failure-driven changes first, and, when the step's
 *   budget is known, lists them most important first, so that no ranking call follows. When every
 *   patch fits in one group, that is the step's only merge call.
 * In the staged strategy a merge starts as soon as the analyst calls of its group are done; the
 * combined one waits for every analyst, so that its levels are shaped by the patches that came
 * back (the depth is the same: the last group waits for the last analyst either way). A merge
 * call that fails or returns something unusable falls back to concatenation, with a warning.
 */
import { ask, type OptimizerContext } from '../optimizer-model/ask.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import { metaSkillBlock, outputFormat } from '../optimizer-model/prompts.ts';
import { itemsOf, PAYLOAD, patchReplySchema, type OptimizerMeta, type UpdateItem } from '../../protocol/optimizer.ts';

export interface Merged {
  reasoning: string;
  items: UpdateItem[];
  /** The budget the merge ordered the items for, most important first (the combined strategy's top merge). */
  rankedFor?: number;
}

export interface MergeSettings {
  ctx: OptimizerContext;
  skill: string;
  metaSkill: string;
  groupSize: number;
}

type Group = 'failure' | 'success' | 'final';

type MergeMeta = Extract<OptimizerMeta, { kind: 'merge' }>;

/**
 * One merge call: the merge prompt with `guidance`, a user message of the meta skill, the
 * current skill and `body`; the reply's items, or undefined when it gave nothing usable.
 */
async function askMerge(
  s: MergeSettings,
  q: {
    guidance: Group | 'combined';
    body: string[];
    level: MergeMeta['level'];
    patches: MergeMeta['patches'];
    budget?: number;
    during: string;
    fallback: string;
  },
): Promise<{ reasoning: string; items: UpdateItem[] } | undefined> {
  const meta = metaSkillBlock(s.metaSkill);
  const reply = await ask(s.ctx, {
    purpose: 'merge',
    system: fill(loadPrompt('merge'), {
      group_guidance: loadPrompt(`merge_${q.guidance}`).trim(),
      output_format: outputFormat(s.ctx.mode).output_format,
    }),
    user: [...(meta ? [meta] : []), `## Current Skill\n${s.skill}`, ...q.body].join('\n\n'),
    schema: patchReplySchema(s.ctx.mode),
    schemaName: 'merged_patch',
    meta: {
      kind: 'merge',
      level: q.level,
      mode: s.ctx.mode,
      skill: s.skill,
      patches: q.patches,
      ...(q.budget === undefined ? {} : { budget: q.budget }),
    },
    maxTokens: s.ctx.mode === 'full_rewrite_minibatch' ? Math.max(s.ctx.maxTokens, 64000) : undefined,
    during: q.during,
    fallback: q.fallback,
  });
  return reply ? { reasoning: reply.reasoning, items: itemsOf(s.ctx.mode, reply) } : undefined;
}

function withLevel(items: UpdateItem[], level: number, overwrite: boolean): UpdateItem[] {
  return items.map((i) => (overwrite || i.merge_level === undefined ? { ...i, merge_level: level } : i));
}

/** One merge call over a group of patches; concatenation when the call gives nothing usable. */
export async function mergeGroup(s: MergeSettings, patches: Merged[], level: number, group: Group): Promise<Merged> {
  const { key, label } = PAYLOAD[s.ctx.mode];
  const payload = JSON.stringify(
    patches.map((p) => ({ reasoning: p.reasoning, [key]: p.items })),
    null,
    2,
  );
  const [failureGroup, successGroup] = patches;
  const body =
    group === 'final' && failureGroup && successGroup
      ? `## Two merged groups\nGroup 1 (from failed trajectories, high priority): ${failureGroup.items.length} ${label}.\n` +
        `Group 2 (from successful trajectories, lower priority): ${successGroup.items.length} ${label}.\n\n${payload}`
      : `## Patches to merge (${patches.length} total, merge level ${level})\n${payload}`;
  const reply = await askMerge(s, {
    guidance: group,
    body: [body],
    level: group,
    patches: patches.map((p) => ({ reasoning: p.reasoning, items: p.items })),
    during: group === 'final' ? 'final merge' : 'batch merge',
    fallback: 'using concatenation instead',
  });
  if (reply) return { reasoning: reply.reasoning, items: withLevel(reply.items, level, group !== 'final') };
  const all = patches.flatMap((p) => p.items);
  return {
    reasoning: group === 'final' ? 'fallback: failure first, then success' : 'fallback concatenation',
    items: withLevel(all, level, false),
  };
}

const groupSize = (s: MergeSettings) => Math.max(2, s.groupSize);
const usable = (done: (Merged | null)[]) => done.filter((p): p is Merged => p !== null && p.items.length > 0);

/** One level of a hierarchy: the nodes in groups of `groupSize`, a call for each group of two or more present patches. */
function mergeLevel(
  s: MergeSettings,
  nodes: Promise<Merged | null>[],
  level: number,
  group: 'failure' | 'success',
): Promise<Merged | null>[] {
  const size = groupSize(s);
  const next: Promise<Merged | null>[] = [];
  for (let i = 0; i < nodes.length; i += size) {
    next.push(
      Promise.all(nodes.slice(i, i + size)).then((done) => {
        const present = usable(done);
        if (present.length === 0) return null;
        const [only] = present;
        if (only && present.length === 1) return only;
        return mergeGroup(s, present, level, group);
      }),
    );
  }
  return next;
}

/**
 * Merges patches (given as promises, in a fixed order) level by level in groups of
 * `groupSize`. A group of one passes through; an empty result counts as no patch.
 */
export function mergeHierarchy(
  s: MergeSettings,
  patches: Promise<Merged | null>[],
  group: 'failure' | 'success',
): Promise<Merged | null> {
  let level = 0;
  let nodes = patches;
  while (nodes.length > 1) nodes = mergeLevel(s, nodes, ++level, group);
  return nodes[0] ?? Promise.resolve(null);
}

/** The staged strategy: the failure hierarchy, the success hierarchy, then a final merge when both have items. */
export async function aggregate(
  s: MergeSettings,
  failure: Promise<Merged | null>[],
  success: Promise<Merged | null>[],
): Promise<Merged> {
  const [f, su] = await Promise.all([mergeHierarchy(s, failure, 'failure'), mergeHierarchy(s, success, 'success')]);
  const failures = f?.items.length ? f : undefined;
  const successes = su?.items.length ? su : undefined;
  if (failures && successes) return mergeGroup(s, [failures, successes], 0, 'final');
  return failures ?? successes ?? { reasoning: 'no updates from either group', items: [] };
}

/** A patch of the combined merge, with the kind of trajectories it came from. */
interface SourcedPatch {
  source: 'failure' | 'success';
  patch: Merged;
}

/**
 * The combined strategy's top merge: failure and success patches in one call, failure-driven
 * changes first; with a `budget`, the reply lists the changes most important first and the
 * step applies the first `budget`.
 */
export async function mergeTop(
  s: MergeSettings,
  patches: SourcedPatch[],
  level: number,
  budget: number | undefined,
): Promise<Merged> {
  const { key, label } = PAYLOAD[s.ctx.mode];
  const failures = patches.filter((p) => p.source === 'failure');
  const successes = patches.filter((p) => p.source === 'success');
  const ordered = [...failures, ...successes];
  const payload = ordered.map((p) => ({ source_type: p.source, reasoning: p.patch.reasoning, [key]: p.patch.items }));
  const body = [
    `## Patches to merge (${ordered.length} total: ${failures.length} from failed trajectories, ${successes.length} from successful ones; merge level ${level})\n` +
      JSON.stringify(payload, null, 2),
  ];
  const ranks = budget !== undefined && s.ctx.mode !== 'full_rewrite_minibatch';
  if (ranks) body.push(fill(loadPrompt('merge_order'), { budget: String(budget), label }).trim());
  const reply = await askMerge(s, {
    guidance: failures.length === 0 ? 'success' : successes.length === 0 ? 'failure' : 'combined',
    body,
    level: 'top',
    patches: ordered.map((p) => ({ reasoning: p.patch.reasoning, items: p.patch.items, source: p.source })),
    budget: ranks ? budget : undefined,
    during: 'combined merge',
    fallback: 'using concatenation instead, failure first',
  });
  if (reply)
    return {
      reasoning: reply.reasoning,
      items: withLevel(reply.items, level, true),
      ...(ranks ? { rankedFor: budget } : {}),
    };
  return {
    reasoning: 'fallback: failure first, then success',
    items: withLevel(
      ordered.flatMap((p) => p.patch.items),
      level,
      false,
    ),
  };
}

/** One level over patches that are all done: each group of two or more merged by one call, all groups at once. */
async function mergeDone(
  s: MergeSettings,
  patches: Merged[],
  level: number,
  group: 'failure' | 'success',
): Promise<Merged[]> {
  const size = groupSize(s);
  const groups: Merged[][] = [];
  for (let i = 0; i < patches.length; i += size) groups.push(patches.slice(i, i + size));
  return usable(await Promise.all(groups.map((g) => (g.length === 1 ? g[0]! : mergeGroup(s, g, level, group)))));
}

/**
 * The combined strategy. Once every analyst is done, the usable patches of each kind are merged
 * level by level (the larger kind first, both kinds of a level at once) only until both fit in
 * one group, then `mergeTop` merges what is left. `budget`: the step's budget when it is known
 * before the merge (a scheduled learning rate), so that the top merge also ranks.
 */
export async function aggregateCombined(
  s: MergeSettings,
  failure: Promise<Merged | null>[],
  success: Promise<Merged | null>[],
  budget: number | undefined,
): Promise<Merged> {
  const size = groupSize(s);
  const [fDone, sDone] = await Promise.all([Promise.all(failure), Promise.all(success)]);
  let f = usable(fDone);
  let su = usable(sDone);
  let level = 0;
  while (f.length + su.length > size) {
    level += 1;
    const failureFirst = f.length >= su.length;
    const reduceF = f.length > 1 && (failureFirst || Math.ceil(su.length / size) + f.length > size);
    const reduceS = su.length > 1 && (!failureFirst || Math.ceil(f.length / size) + su.length > size);
    [f, su] = await Promise.all([
      reduceF ? mergeDone(s, f, level, 'failure') : f,
      reduceS ? mergeDone(s, su, level, 'success') : su,
    ]);
  }
  const present: SourcedPatch[] = [
    ...f.map((patch) => ({ source: 'failure' as const, patch })),
    ...su.map((patch) => ({ source: 'success' as const, patch })),
  ];
  const [only] = present;
  if (!only) return { reasoning: 'no updates from either group', items: [] };
  if (present.length === 1) return only.patch;
  return mergeTop(s, present, level + 1, budget);
}
