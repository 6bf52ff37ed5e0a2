/**
 * Gradient accumulation: patches are merged hierarchically, in groups of `merge_batch_size`,
 * failure patches and success patches separately, then one final merge that gives failure-driven
 * changes priority. A merge starts as soon as the analyst calls of its group are done. A merge
 * call that fails or returns something unusable falls back to concatenation, with a warning.
 */
import { ask, type OptimizerContext } from '../optimizer/ask.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import { metaSkillBlock, outputFormat } from '../optimizer/prompts.ts';
import { itemsOf, PAYLOAD, patchReplySchema, type UpdateItem } from '../../protocol/optimizer.ts';

export interface Merged {
  reasoning: string;
  items: UpdateItem[];
}

export interface MergeSettings {
  ctx: OptimizerContext;
  skill: string;
  metaSkill: string;
  groupSize: number;
}

type Group = 'failure' | 'success' | 'final';

function system(s: MergeSettings, group: Group): string {
  return fill(loadPrompt('merge'), {
    group_guidance: loadPrompt(`merge_${group}`).trim(),
    output_format: outputFormat(s.ctx.mode).output_format,
  });
}

function withLevel(items: UpdateItem[], level: number, overwrite: boolean): UpdateItem[] {
  return items.map((i) => (overwrite || i.merge_level === undefined ? { ...i, merge_level: level } : i));
}

/** One merge call over a group of patches; concatenation when the call gives nothing usable. */
export async function mergeGroup(s: MergeSettings, patches: Merged[], level: number, group: Group): Promise<Merged> {
  const { key, label } = PAYLOAD[s.ctx.mode];
  const payload = patches.map((p) => ({ reasoning: p.reasoning, [key]: p.items }));
  const sections = [];
  const meta = metaSkillBlock(s.metaSkill);
  if (meta) sections.push(meta);
  sections.push(`## Current Skill\n${s.skill}`);
  const [failureGroup, successGroup] = patches;
  if (group === 'final' && failureGroup && successGroup) {
    sections.push(
      `## Two merged groups\nGroup 1 (from failed trajectories, high priority): ${failureGroup.items.length} ${label}.\n` +
        `Group 2 (from successful trajectories, lower priority): ${successGroup.items.length} ${label}.\n\n${JSON.stringify(payload, null, 2)}`,
    );
  } else {
    sections.push(`## Patches to merge (${patches.length} total, merge level ${level})\n${JSON.stringify(payload, null, 2)}`);
  }
  const reply = await ask(s.ctx, {
    purpose: 'merge',
    system: system(s, group),
    user: sections.join('\n\n'),
    schema: patchReplySchema(s.ctx.mode),
    schemaName: 'merged_patch',
    meta: { kind: 'merge', level: group, mode: s.ctx.mode, skill: s.skill, patches: patches.map((p) => ({ reasoning: p.reasoning, items: p.items })) },
    maxTokens: s.ctx.mode === 'full_rewrite_minibatch' ? Math.max(s.ctx.maxTokens, 64000) : undefined,
    during: group === 'final' ? 'final merge' : 'batch merge',
    fallback: 'using concatenation instead',
  });
  if (reply) return { reasoning: reply.reasoning, items: withLevel(itemsOf(s.ctx.mode, reply), level, group !== 'final') };
  const all = patches.flatMap((p) => p.items);
  return { reasoning: group === 'final' ? 'fallback: failure first, then success' : 'fallback concatenation', items: withLevel(all, level, false) };
}

/**
 * Merges patches (given as promises, in a fixed order) level by level in groups of
 * `groupSize`. A group of one passes through; an empty result counts as no patch.
 */
export function mergeHierarchy(s: MergeSettings, patches: Promise<Merged | null>[], group: 'failure' | 'success'): Promise<Merged | null> {
  const size = Math.max(2, s.groupSize);
  let level = 0;
  let nodes = patches;
  while (nodes.length > 1) {
    level += 1;
    const thisLevel = level;
    const next: Promise<Merged | null>[] = [];
    for (let i = 0; i < nodes.length; i += size) {
      const members = nodes.slice(i, i + size);
      next.push(
        Promise.all(members).then((done) => {
          const present = done.filter((p): p is Merged => p !== null && p.items.length > 0);
          if (present.length === 0) return null;
          const [only] = present;
          if (only && present.length === 1) return only;
          return mergeGroup(s, present, thisLevel, group);
        }),
      );
    }
    nodes = next;
  }
  return nodes[0] ?? Promise.resolve(null);
}

/** The failure hierarchy, the success hierarchy, then a final merge when both have items. */
export async function aggregate(s: MergeSettings, failure: Promise<Merged | null>[], success: Promise<Merged | null>[]): Promise<Merged> {
  const [f, su] = await Promise.all([mergeHierarchy(s, failure, 'failure'), mergeHierarchy(s, success, 'success')]);
  const failures = f?.items.length ? f : undefined;
  const successes = su?.items.length ? su : undefined;
  if (failures && successes) return mergeGroup(s, [failures, successes], 0, 'final');
  return failures ?? successes ?? { reasoning: 'no updates from either group', items: [] };
}
