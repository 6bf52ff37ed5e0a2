/**
 * The simulated optimizer. It reads the structured payload of each request (`ChatRequest.meta`)
 * and answers in the same JSON format a real optimizer model must use. It is a decent but
 * fallible analyst: it infers from wrong answers which convention was missed and proposes a
 * rule, but sometimes words it too vaguely, over-generalises into a harmful directive, or adds
 * advice that only makes the skill longer; the gate has something to reject. Shown a package's
 * file list (`meta.files` of an analyst request in patch mode), it edits the package file by file
 * (`package-edits.ts`); without one, the document alone (`document-edits.ts`).
 */
import {
  isEdit,
  isSkillCandidate,
  type ComparisonPair,
  type OptimizerMeta,
  type Suggestion,
  type TrajectoryView,
  type UpdateItem,
  type UpdateMode,
} from '../../protocol/optimizer.ts';
import { applyEdits, type Edit } from '../../skill/edits.ts';
import type { Rng } from '../../util/random.ts';
import { conventionOf, diagnose, directiveOf, recognise } from './world.ts';
import { SKILL_FILE } from '../../skill/package/package.ts';
import { isMarkdownPath, pointersIn } from './references.ts';
import { documentRuleEdits, lineMatching } from './document-edits.ts';
import { failedKind, listedFiles, misstep, packageEdits, type KindMisses } from './package-edits.ts';
import { CONFLICTS, CONVENTIONS, HARMFUL, IRRELEVANT } from './rules.ts';
import { descriptionAnalyst, unionDescriptions } from './description-edits.ts';
import { DESCRIPTION_OP } from '../../skill/description.ts';
import { draftTriggers } from './draft-triggers.ts';
import { plantHacks } from './audit-plants.ts';

/** How fallible the simulated optimizer is. */
export interface OptimizerTraits {
  /** Chance that an analyst call adds a harmful directive. */
  harmful: number;
  /** Chance that an analyst call adds advice with no effect. */
  irrelevant: number;
  /** Chance that a proposed rule is worded too vaguely for the target. */
  vague: number;
  /** Chance of seeing that a directive in the skill, not a missing rule, causes a failure. */
  blame: number;
  /** Chance that a failure analyst call memorises a failed item's answer into the skill (what the audit must catch). */
  leak?: number;
  /** Chance that a failure analyst call adds a rule that games a gullible judge (`audit-plants.ts`). */
  game?: number;
  /** Chance that an analyst call words its new rules for one opening of the request only. */
  brittle?: number;
}

export const DEFAULT_TRAITS: OptimizerTraits = { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 };

const LESSON =
  'Avoid blanket style directives (upper case, rounding, digit grouping, spelled-out months, attached units): they caused regressions.';

function contentOf(i: UpdateItem): string {
  return String(i.content ?? i.instruction ?? i.new_skill ?? i.target ?? '');
}

/** What an item changes, for merging: a file made or deleted, a pointer to a file, or a rule or directive (in a file). */
function keyOf(i: UpdateItem): string {
  const file = typeof i.file === 'string' && i.file !== SKILL_FILE ? i.file : undefined;
  if (i.op === 'create_file' || i.op === 'delete_file') return `${i.op}:${file}`;
  if (i.op === DESCRIPTION_OP) return DESCRIPTION_OP;
  const pointer = pointersIn(String(i.content ?? i.instruction ?? ''), isMarkdownPath)[0];
  if (pointer) return `pointer:${pointer.files.join(',')}:${pointer.kinds.join(',')}`;
  const text = `${String(i.content ?? i.instruction ?? '')} ${String(i.target ?? '')}`;
  const id = conventionOf(text)?.id ?? directiveOf(text)?.id ?? text.trim().toLowerCase();
  return `${String(i.op ?? i.type ?? '')}:${file ? `${file}:` : ''}${id}`;
}

function rejectedTexts(meta: Extract<OptimizerMeta, { kind: 'analyst' }>): Set<string> {
  const out = new Set<string>();
  for (const entry of meta.stepBuffer) {
    for (const e of entry.rejected_edits ?? []) out.add(String(e.content ?? e.instruction ?? '').replace(/^- /, ''));
  }
  return out;
}

/**
 * Missed conventions in failed trajectories: counted, split into rules to add, lapses and
 * directives to remove; and the same per kind of task (`byKind`).
 */
function analyseFailures(trajectories: TrajectoryView[], skill: string, rng: Rng, blame: number) {
  const stated = recognise(skill);
  const missing = new Map<string, number>();
  const lapses = new Map<string, number>();
  const remove = new Set<string>();
  const byKind: KindMisses = new Map();
  // Whether this analyst sees through a harmful directive, or takes its effects for lapses.
  const seesDirectives = rng.chance(blame);
  for (const t of trajectories) {
    for (const c of diagnose(t.predicted, t.expected)) {
      const conflict = CONFLICTS[c];
      if (conflict && stated.harmful.has(conflict) && seesDirectives) {
        remove.add(conflict);
        continue;
      }
      const lapse = stated.conventions.has(c);
      if (lapse) lapses.set(c, (lapses.get(c) ?? 0) + 1);
      else missing.set(c, (missing.get(c) ?? 0) + 1);
      const kind = failedKind(t.taskType, c);
      const misses = byKind.get(kind) ?? new Map<string, { count: number; lapse: boolean }>();
      misses.set(c, { count: (misses.get(c)?.count ?? 0) + 1, lapse });
      byKind.set(kind, misses);
    }
  }
  return { missing, lapses, remove, byKind };
}

function analyst(meta: Extract<OptimizerMeta, { kind: 'analyst' }>, rng: Rng, traits: OptimizerTraits): unknown {
  if (meta.target === 'description') return descriptionAnalyst(meta);
  const rejected = rejectedTexts(meta);
  const fresh = (options: string[]) => options.filter((o) => !rejected.has(o));
  const edits: Edit[] = [];
  const summary: { failure_type: string; count: number; description: string }[] = [];
  let notes: string[] = [];
  const careful = meta.metaSkill.includes('Avoid blanket style directives');
  // A package (the request lists its files) is edited file by file; other update modes rewrite SKILL.md alone.
  const files = meta.mode === 'patch' ? listedFiles(meta) : undefined;
  let touched: string[] = [];
  // In a package a misstep lands anywhere within the budget, among the good edits.
  const addMisstep = (content: string, harmful: boolean) => {
    if (!files) return void edits.push({ op: 'append', content });
    const at = rng.int(0, Math.max(0, Math.min(edits.length, meta.budget - 1)));
    edits.splice(at, 0, misstep(content, harmful, { skill: meta.skill, files, touched }, rng));
  };

  if (meta.source === 'failure') {
    const { missing, lapses, remove, byKind } = analyseFailures(meta.trajectories, meta.skill, rng, traits.blame);
    for (const id of remove) {
      const line = lineMatching(meta.skill, HARMFUL.find((h) => h.id === id)!.recognise);
      if (line) edits.push({ op: 'delete', target: line });
      summary.push({
        failure_type: 'rule_wrong',
        count: 1,
        description: `a directive (${id}) breaks the expected format`,
      });
    }
    if (files) {
      const proposal = packageEdits({ skill: meta.skill, files, misses: byKind, rng, vague: traits.vague, fresh });
      edits.push(...proposal.edits);
      summary.push(...proposal.summary);
      touched = proposal.touched;
    } else {
      const added = documentRuleEdits(meta.skill, missing, rng, traits.vague, fresh);
      edits.push(...added.edits);
      summary.push(...added.summary);
    }
    if (meta.skillAware && lapses.size > 0) {
      notes = [...lapses.keys()].map(
        (id) => `Re-check every answer: ${CONVENTIONS.find((c) => c.id === id)!.rules[0]}`,
      );
    } else if (!files) {
      // Without the appendix, a lapse is answered by stating the rule again, in the body.
      for (const id of [...lapses.keys()].sort()) {
        const options = fresh(CONVENTIONS.find((c) => c.id === id)!.rules.map((r) => `Important: ${r}`));
        if (options.length) edits.push({ op: 'append', content: `- ${rng.pick(options)}` });
      }
    }
    plantHacks(edits, meta, rng, traits);
    // Failures it cannot explain tempt the analyst into blanket directives too.
    const harmChance = careful ? traits.harmful / 4 : traits.harmful;
    if (meta.trajectories.length > 0 && rng.chance(harmChance)) {
      const options = fresh(HARMFUL.map((h) => h.text));
      if (options.length) addMisstep(`- ${rng.pick(options)}`, true);
    }
  }
  const irrelevantChance = meta.source === 'failure' ? traits.irrelevant : traits.irrelevant / 2;
  if (rng.chance(careful ? irrelevantChance / 2 : irrelevantChance)) {
    const options = fresh(IRRELEVANT);
    if (options.length) addMisstep(`- ${rng.pick(options)}`, false);
  }

  const chosen = edits.slice(0, Math.max(0, meta.budget));
  const reasoning = chosen.length
    ? `proposed ${chosen.length} change(s) from ${meta.trajectories.length} trajectories`
    : 'nothing general to change';
  const reply: Record<string, unknown> = {
    batch_size: meta.trajectories.length,
    ...(meta.source === 'failure'
      ? { failure_summary: summary }
      : { success_patterns: ['answers that followed a stated convention were right'] }),
    patch: { reasoning, ...asPayload(chosen, meta.mode, meta.skill) },
  };
  if (meta.skillAware) reply.appendix_notes = notes;
  return reply;
}

function toSuggestion(edit: Edit): Suggestion {
  const remove = edit.op === 'delete';
  const text = remove ? (edit.target ?? '') : (edit.content ?? '').replace(/^- /, '');
  return {
    type: remove ? 'remove_rule' : 'add_rule',
    title: remove ? 'remove a harmful directive' : `add: ${text.slice(0, 40)}`,
    motivation: 'seen in the failed trajectories',
    instruction: remove ? `Remove the line: ${text}` : text,
    priority_hint: remove ? 'high' : 'medium',
  };
}

function asPayload(edits: Edit[], mode: UpdateMode, skill: string): Record<string, unknown> {
  if (mode === 'patch') return { edits };
  if (mode === 'rewrite_from_suggestions') return { revise_suggestions: edits.map(toSuggestion) };
  if (edits.length === 0) return { skill_candidates: [] };
  return {
    skill_candidates: [
      {
        title: 'revised skill',
        change_summary: edits.map((e) => `${e.op}: ${(e.content ?? e.target ?? '').slice(0, 60)}`),
        new_skill: applyEdits(skill, edits).skill,
      },
    ],
  };
}

function merge(meta: Extract<OptimizerMeta, { kind: 'merge' }>, rng: Rng): unknown {
  const key =
    meta.mode === 'patch'
      ? 'edits'
      : meta.mode === 'rewrite_from_suggestions'
        ? 'revise_suggestions'
        : 'skill_candidates';
  if (meta.mode === 'full_rewrite_minibatch') {
    const all = meta.patches.flatMap((p) => p.items).filter(isSkillCandidate);
    const best = [...all].sort(
      (a, b) => recognise(b.new_skill).conventions.size - recognise(a.new_skill).conventions.size,
    )[0];
    const support = all.reduce((s, i) => s + (i.support_count ?? 1), 0);
    return {
      reasoning: 'kept the candidate stating the most conventions',
      [key]: best ? [{ ...best, support_count: support }] : [],
    };
  }
  const merged = new Map<string, UpdateItem & { support_count?: number }>();
  for (const patch of meta.patches) {
    for (const item of patch.items) {
      const k = keyOf(item);
      const prev = merged.get(k);
      const support = (item.support_count ?? 1) + (prev?.support_count ?? 0);
      // Two analysts making the same file: one file with the rules of both.
      const content =
        prev && item.op === 'create_file'
          ? { content: unionLines(String(prev.content), String(item.content)) }
          : prev && item.op === DESCRIPTION_OP
            ? {
                content: unionDescriptions(String(prev.content), String(item.content)),
                ...(prev.when_to_use !== undefined && item.when_to_use !== undefined
                  ? { when_to_use: unionDescriptions(String(prev.when_to_use), String(item.when_to_use)) }
                  : {}),
              }
            : {};
      merged.set(k, { ...(prev ?? item), ...content, support_count: support });
    }
  }
  // The merger drops a share of single-support directives, as recurring edits are preferred.
  const items = [...merged.values()].filter(
    (i) => !(directiveOf(contentOf(i)) && (i.support_count ?? 1) <= 1 && rng.chance(0.4)),
  );
  const ordered = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => (b.item.support_count ?? 1) - (a.item.support_count ?? 1) || a.index - b.index)
    .map((x) => x.item);
  // The top merge of the combined strategy lists its items most important first, as a ranking would.
  const listed = meta.level === 'top' ? importanceOrder(ordered).map((i) => ordered[i]!) : ordered;
  return { reasoning: `merged ${meta.patches.length} patches into ${listed.length} items`, [key]: listed };
}

/** The lines of `a`, then those of `b` that state nothing `a` does. */
function unionLines(a: string, b: string): string {
  const have = a.split('\n');
  const said = (line: string) => {
    const id = conventionOf(line)?.id;
    return have.includes(line) || (id !== undefined && have.some((l) => conventionOf(l)?.id === id));
  };
  const extra = b.split('\n').filter((l) => l.trim() && !said(l));
  return extra.length ? `${a.trimEnd()}\n${extra.join('\n')}\n` : a;
}

/** Indices of `items`, most important first: by support, failure-driven first. */
function importanceOrder(items: UpdateItem[]): number[] {
  return items
    .map((item, index) => ({ index, support: item.support_count ?? 1, failure: item.source_type !== 'success' }))
    .sort((a, b) => b.support - a.support || Number(b.failure) - Number(a.failure) || a.index - b.index)
    .map((x) => x.index);
}

function rank(meta: Extract<OptimizerMeta, { kind: 'rank' }>): unknown {
  return {
    reasoning: 'ranked by support, failure-driven first',
    selected_indices: importanceOrder(meta.items).slice(0, meta.budget),
  };
}

function lrAutonomous(meta: Extract<OptimizerMeta, { kind: 'lr_autonomous' }>): unknown {
  const concrete = meta.items.filter((i) => {
    const text = contentOf(i);
    return conventionOf(text) || (isEdit(i) && i.op === 'delete') || pointersIn(text, isMarkdownPath).length > 0;
  }).length;
  return {
    learning_rate: concrete,
    reasoning: 'apply the concrete format rules and removals',
    confidence: 'medium',
    risk_notes: [],
  };
}

function rewrite(meta: Extract<OptimizerMeta, { kind: 'rewrite' }>): unknown {
  const edits: Edit[] = meta.suggestions.map((s) =>
    s.type === 'remove_rule'
      ? { op: 'delete', target: s.instruction.replace(/^Remove the line: /, '') }
      : { op: 'append', content: `- ${s.instruction}` },
  );
  const result = applyEdits(meta.skill, edits);
  return {
    reasoning: 'folded the suggestions into the skill',
    change_summary: meta.suggestions.map((s) => s.title),
    new_skill: result.skill,
  };
}

function missedIn(pairs: ComparisonPair[]): string[] {
  const missed = new Set<string>();
  for (const p of pairs) {
    if (p.category !== 'regressed' && p.category !== 'persistent_fail') continue;
    for (const c of diagnose(p.curr.predicted_answer, p.expected)) missed.add(c);
  }
  return [...missed].sort();
}

function slowUpdate(meta: Extract<OptimizerMeta, { kind: 'slow_update' }>): unknown {
  const missed = missedIn(meta.pairs);
  const kept = meta.guidance
    .split('\n')
    .filter((l) => l.startsWith('- ') && !missed.some((id) => conventionOf(l)?.id === id));
  const lines = [...kept, ...missed.map((id) => `- ${CONVENTIONS.find((c) => c.id === id)!.rules[0]}`)];
  if (lines.length === 0)
    return { reasoning: 'no regressions or persistent failures to address', slow_update_content: '' };
  return {
    reasoning: `guidance for ${missed.length} convention(s) still missed`,
    slow_update_content: `Across epochs, keep to these rules on every answer:\n${lines.join('\n')}`,
  };
}

function metaSkill(meta: Extract<OptimizerMeta, { kind: 'meta_skill' }>): unknown {
  const regressions = meta.pairs.filter((p) => p.category === 'regressed').length;
  const lines = new Set(meta.previous.split('\n').filter(Boolean));
  lines.add('Prefer concrete, checkable format rules over general advice.');
  if (regressions > 0 || recognise(meta.currSkill).harmful.size > 0) lines.add(LESSON);
  return { reasoning: `${regressions} regression(s) between the epochs`, meta_skill_content: [...lines].join('\n') };
}

function consolidate(meta: Extract<OptimizerMeta, { kind: 'appendix_consolidate' }>): unknown {
  const seen = new Set<string>();
  const notes = meta.notes.filter((n) => {
    const k = conventionOf(n)?.id ?? n;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { appendix_notes: notes };
}

export function optimizerReply(meta: OptimizerMeta, rng: Rng, traits: OptimizerTraits = DEFAULT_TRAITS): unknown {
  switch (meta.kind) {
    case 'analyst':
      return analyst(meta, rng, traits);
    case 'merge':
      return merge(meta, rng);
    case 'rank':
      return rank(meta);
    case 'lr_autonomous':
      return lrAutonomous(meta);
    case 'rewrite':
      return rewrite(meta);
    case 'slow_update':
      return slowUpdate(meta);
    case 'meta_skill':
      return metaSkill(meta);
    case 'appendix_consolidate':
      return consolidate(meta);
    case 'draft_triggers':
      return draftTriggers(meta);
  }
}
