/**
 * The four edit operations on a skill, applied in order with a report per edit.
 *
 * Targets are matched exactly first; when that fails, a match that ignores differences in
 * whitespace is tried and reported as such. An edit whose target lies in a protected region
 * (the front matter of a `SKILL.md` included, unless it is made editable), or in text that an
 * earlier edit of the same patch already changed, is skipped with the reason. Appended text goes
 * after the body, before the trailing regions. With a token limit, an edit that would make the
 * skill longer than the limit is skipped.
 */
import { z } from 'zod';
import { countTokens } from './document.ts';
import { frontMatter, inProtectedSpan, protectedSpans, stripMarkers, type Span } from './regions.ts';

export const EDIT_OPS = ['append', 'insert_after', 'replace', 'delete'] as const;
export type EditOp = (typeof EDIT_OPS)[number];

/** An edit in the original's JSON format; extra fields from the optimizer are kept. */
export const EditSchema = z
  .object({
    op: z.string().default('append'),
    target: z.string().optional(),
    content: z.string().optional(),
    // Bookkeeping fields a model may get wrong: a bad value is dropped, not fatal to the reply.
    support_count: z.coerce.number().optional().catch(undefined),
    source_type: z.enum(['failure', 'success']).optional().catch(undefined),
    merge_level: z.coerce.number().optional().catch(undefined),
    reflection_type: z.string().optional().catch(undefined),
  })
  .loose();
export type Edit = z.infer<typeof EditSchema>;

export type EditStatus =
  | 'applied_append'
  | 'applied_append_before_protected_region'
  | 'applied_insert_after'
  | 'applied_insert_after_fallback_append'
  | 'applied_insert_after_fallback_before_protected_region'
  | 'applied_replace'
  | 'applied_delete'
  | 'skipped_protected_region'
  | 'skipped_replace_missing_target'
  | 'skipped_replace_target_not_found'
  | 'skipped_delete_missing_target'
  | 'skipped_delete_target_not_found'
  | 'skipped_empty_content'
  | 'skipped_overlapping_edit'
  | 'skipped_length_limit'
  | 'skipped_unknown_op'
  | 'error';

export interface EditReport {
  /** 1-based position in the patch. */
  index: number;
  op: string;
  target: string;
  content_preview: string;
  status: EditStatus;
  /** How the target was found, when it was. */
  match?: 'exact' | 'whitespace';
  /** Why an edit was skipped or failed, in words. */
  reason?: string;
}

export interface ApplyOptions {
  /** Largest skill allowed, in tokens (0 or undefined = no limit). */
  maxTokens?: number;
  /** Whether edits may change the skill's YAML front matter (default: protected). */
  frontMatter?: 'protected' | 'editable';
}

export interface ApplyResult {
  skill: string;
  reports: EditReport[];
}

export function isApplied(status: EditStatus): boolean {
  return status.startsWith('applied');
}

export function summariseReports(reports: EditReport[]): {
  total: number;
  applied: number;
  skipped: number;
  errors: number;
} {
  return {
    total: reports.length,
    applied: reports.filter((r) => isApplied(r.status)).length,
    skipped: reports.filter((r) => r.status.startsWith('skipped')).length,
    errors: reports.filter((r) => r.status === 'error').length,
  };
}

/** The edits of a patch that applied, in order. */
export function appliedEdits(edits: Edit[], reports: EditReport[]): Edit[] {
  return reports.filter((r) => isApplied(r.status)).map((r) => edits[r.index - 1]!);
}

/** Why edits were skipped, in words, with how many each: "2 target not found, 1 unknown op". */
export function skipReasons(reports: EditReport[]): string {
  const words: Partial<Record<EditStatus, string>> = {
    skipped_protected_region: 'in a protected region',
    skipped_replace_missing_target: 'no target',
    skipped_delete_missing_target: 'no target',
    skipped_replace_target_not_found: 'target not found',
    skipped_delete_target_not_found: 'target not found',
    skipped_empty_content: 'no content',
    skipped_overlapping_edit: 'overlaps an earlier edit',
    skipped_length_limit: 'over the token limit',
    skipped_unknown_op: 'unknown op',
    error: 'failed',
  };
  const counts = new Map<string, number>();
  for (const r of reports) {
    const word = words[r.status];
    if (word) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts].map(([word, n]) => `${n} ${word}`).join(', ');
}

interface Match {
  start: number;
  end: number;
  kind: 'exact' | 'whitespace';
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** All matches of `target`, exact ones if any, else whitespace-tolerant ones. */
function findMatches(skill: string, target: string): Match[] {
  const exact: Match[] = [];
  for (let at = skill.indexOf(target); at >= 0; at = skill.indexOf(target, at + 1)) {
    exact.push({ start: at, end: at + target.length, kind: 'exact' });
  }
  if (exact.length > 0) return exact;
  // The fallback needs two words at least, and whole words at both ends: a lone word, or a
  // fragment inside a longer word, is too likely to match the wrong place.
  const words = target.trim().split(/\s+/).filter(Boolean);
  if (words.length < 2) return [];
  const head = /^\w/.test(words[0]!) ? '(?<![\\w])' : '';
  const tail = /\w$/.test(words.at(-1)!) ? '(?![\\w])' : '';
  const pattern = new RegExp(`${head}${words.map(escapeRegExp).join('\\s+')}${tail}`, 'g');
  return [...skill.matchAll(pattern)].map((m) => ({
    start: m.index,
    end: m.index + m[0].length,
    kind: 'whitespace' as const,
  }));
}

/** Whether a match meets text an earlier edit wrote (a deletion counts where it cut). */
function overlaps(written: Span, match: Span): boolean {
  if (written.start === written.end) return match.start < written.start && written.start < match.end;
  return match.start < written.end && written.start < match.end;
}

type Located = { match: Match } | { status: 'overlap' | 'not_found' } | { status: 'protected'; inFrontMatter: boolean };

/** The first match outside protected regions; overlapping earlier edits makes it unusable. */
function locate(skill: string, target: string, spans: Span[], touched: Span[], headLength: number): Located {
  const matches = findMatches(skill, target);
  if (matches.length === 0) return { status: 'not_found' };
  const usable = matches.find((m) => !inProtectedSpan(spans, m.start, m.end));
  if (!usable) return { status: 'protected', inFrontMatter: matches.some((m) => m.start < headLength) };
  if (touched.some((t) => overlaps(t, usable))) return { status: 'overlap' };
  return { match: usable };
}

/** Index before which appended text goes: the start of the first trailing protected region, if any. */
function appendPoint(skill: string): number | undefined {
  return protectedSpans(skill, { frontMatter: false })[0]?.start;
}

interface Change {
  skill: string;
  /** The span the edit wrote, in the new document. */
  written: Span;
  /** Where the old text was cut, and how much the text after it moved. */
  at: number;
  removed: number;
  status: EditStatus;
  match?: Match['kind'];
}

function appendChange(skill: string, content: string, status: { plain: EditStatus; beforeRegion: EditStatus }): Change {
  const p = appendPoint(skill);
  if (p === undefined) {
    const body = skill.trimEnd();
    const head = `${body}${body ? '\n\n' : ''}`;
    return {
      skill: `${head}${content}\n`,
      written: { start: head.length, end: head.length + content.length },
      at: body.length,
      removed: skill.length - body.length,
      status: status.plain,
    };
  }
  const before = skill.slice(0, p).trimEnd();
  const head = `${before}${before ? '\n\n' : ''}`;
  return {
    skill: `${head}${content}\n\n${skill.slice(p)}`,
    written: { start: head.length, end: head.length + content.length },
    at: before.length,
    removed: p - before.length,
    status: status.beforeRegion,
  };
}

function applyOne(
  skill: string,
  edit: Edit,
  touched: Span[],
  options: ApplyOptions,
): Change | { status: EditStatus; reason: string } {
  const op = edit.op;
  const content = stripMarkers(edit.content ?? '').trim();
  const target = edit.target ?? '';
  const guardHead = options.frontMatter !== 'editable';
  const spans = protectedSpans(skill, { frontMatter: guardHead });
  const headLength = guardHead ? frontMatter(skill).length : 0;

  if (!(EDIT_OPS as readonly string[]).includes(op)) {
    return { status: 'skipped_unknown_op', reason: `unknown op '${op}' (expected one of ${EDIT_OPS.join(', ')})` };
  }
  let located: Located | undefined;
  // `append` has no anchor: whatever target it carries is ignored.
  if (target.trim() && op !== 'append') {
    located = locate(skill, target, spans, touched, headLength);
    if ('status' in located && located.status === 'protected') {
      const reason = located.inFrontMatter
        ? "the target is in the skill's front matter (its name, description and other metadata), which edits cannot change"
        : 'the target is inside a protected region';
      return { status: 'skipped_protected_region', reason };
    }
    if ('status' in located && located.status === 'overlap') {
      return {
        status: 'skipped_overlapping_edit',
        reason: 'the target overlaps text changed by an earlier edit of this patch',
      };
    }
  }
  const found = located && 'match' in located ? located.match : undefined;

  switch (op as EditOp) {
    case 'append':
      if (!content) return { status: 'skipped_empty_content', reason: 'nothing to append' };
      return appendChange(skill, content, {
        plain: 'applied_append',
        beforeRegion: 'applied_append_before_protected_region',
      });
    case 'insert_after': {
      if (!content) return { status: 'skipped_empty_content', reason: 'nothing to insert' };
      if (!found) {
        return appendChange(skill, content, {
          plain: 'applied_insert_after_fallback_append',
          beforeRegion: 'applied_insert_after_fallback_before_protected_region',
        });
      }
      // After the whole line holding the end of the target (or right after it, if it ends a line).
      const nl = skill[found.end - 1] === '\n' ? found.end - 1 : skill.indexOf('\n', found.end);
      const i = nl < 0 ? skill.length : nl + 1;
      if (touched.some((t) => t.start < i && i < t.end)) {
        return {
          status: 'skipped_overlapping_edit',
          reason: 'the insertion point falls inside text changed by an earlier edit of this patch',
        };
      }
      const lead = nl < 0 ? '\n\n' : '\n';
      return {
        skill: `${skill.slice(0, i)}${lead}${content}\n${skill.slice(i)}`,
        written: { start: i + lead.length, end: i + lead.length + content.length },
        at: i,
        removed: 0,
        status: 'applied_insert_after',
        match: found.kind,
      };
    }
    case 'replace':
      if (!target.trim()) return { status: 'skipped_replace_missing_target', reason: 'replace needs a target' };
      if (!found) return { status: 'skipped_replace_target_not_found', reason: 'the target text is not in the skill' };
      return {
        skill: skill.slice(0, found.start) + content + skill.slice(found.end),
        written: { start: found.start, end: found.start + content.length },
        at: found.start,
        removed: found.end - found.start,
        status: 'applied_replace',
        match: found.kind,
      };
    case 'delete':
      if (!target.trim()) return { status: 'skipped_delete_missing_target', reason: 'delete needs a target' };
      if (!found) return { status: 'skipped_delete_target_not_found', reason: 'the target text is not in the skill' };
      return {
        skill: skill.slice(0, found.start) + skill.slice(found.end),
        written: { start: found.start, end: found.start },
        at: found.start,
        removed: found.end - found.start,
        status: 'applied_delete',
        match: found.kind,
      };
  }
}

/** Moves spans after a change so they keep pointing at the same text. */
function shift(spans: Span[], change: Change, delta: number): Span[] {
  return spans.map((s) => (s.start >= change.at + change.removed ? { start: s.start + delta, end: s.end + delta } : s));
}

/** Applies the edits in order, each to the result of the previous one. */
export function applyEdits(skill: string, edits: Edit[], options: ApplyOptions = {}): ApplyResult {
  const reports: EditReport[] = [];
  let touched: Span[] = [];
  let current = skill;
  edits.forEach((edit, i) => {
    const base = {
      index: i + 1,
      op: String(edit.op ?? ''),
      target: (edit.target ?? '').slice(0, 200),
      content_preview: stripMarkers(edit.content ?? '')
        .trim()
        .slice(0, 200),
    };
    try {
      const result = applyOne(current, edit, touched, options);
      if (!('skill' in result)) {
        reports.push({ ...base, status: result.status, reason: result.reason });
        return;
      }
      const limit = options.maxTokens ?? 0;
      if (limit > 0 && result.skill.length > current.length) {
        const tokens = countTokens(result.skill);
        if (tokens > limit) {
          reports.push({
            ...base,
            status: 'skipped_length_limit',
            reason: `the skill would grow to ${tokens} tokens, over the limit of ${limit}`,
          });
          return;
        }
      }
      touched = [...shift(touched, result, result.skill.length - current.length), result.written];
      current = result.skill;
      reports.push({ ...base, status: result.status, ...(result.match ? { match: result.match } : {}) });
    } catch (err) {
      reports.push({ ...base, status: 'error', reason: err instanceof Error ? err.message : String(err) });
    }
  });
  return { skill: current, reports };
}
