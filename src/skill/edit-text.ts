/**
 * One of the four text ops on one text document: where its target is, whether it may change
 * it, and the text that results. Patches, files and limits are the caller's (`package/edits.ts`).
 *
 * Targets are matched exactly first; when that fails, a match that ignores differences in
 * whitespace is tried and reported as such. A target in a protected region (the front matter
 * too, when it is guarded), or in text an earlier edit of the same patch wrote, is refused.
 * Appended text goes after the body, before the trailing protected regions.
 */
import type { Edit, EditStatus } from './edit-schema.ts';
import { frontMatter, inProtectedSpan, protectedSpans, stripMarkers, type Span } from './regions.ts';

/** The ops that change the text of one file. */
export const TEXT_OPS = ['append', 'insert_after', 'replace', 'delete'] as const;
export type TextOp = (typeof TEXT_OPS)[number];

export function isTextOp(op: string): op is TextOp {
  return (TEXT_OPS as readonly string[]).includes(op);
}

export interface TextEditOptions {
  /** Whether the YAML front matter that opens the text is protected (a `SKILL.md`'s is, by default). */
  guardFrontMatter: boolean;
  /** How reasons name the document: "the skill" for `SKILL.md`, else its path. */
  name: string;
}

/** An edit that applies: the new text and where it wrote. */
export interface TextChange {
  text: string;
  /** The span the edit wrote, in the new text. */
  written: Span;
  /** Where the old text was cut, and how much was cut there. */
  at: number;
  removed: number;
  status: EditStatus;
  match?: Match['kind'];
}

/** An edit that does not apply, and why. */
export interface TextSkip {
  status: EditStatus;
  reason: string;
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
function findMatches(text: string, target: string): Match[] {
  const exact: Match[] = [];
  for (let at = text.indexOf(target); at >= 0; at = text.indexOf(target, at + 1)) {
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
  return [...text.matchAll(pattern)].map((m) => ({
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
function locate(text: string, target: string, spans: Span[], touched: Span[], headLength: number): Located {
  const matches = findMatches(text, target);
  if (matches.length === 0) return { status: 'not_found' };
  const usable = matches.find((m) => !inProtectedSpan(spans, m.start, m.end));
  if (!usable) return { status: 'protected', inFrontMatter: matches.some((m) => m.start < headLength) };
  if (touched.some((t) => overlaps(t, usable))) return { status: 'overlap' };
  return { match: usable };
}

/** Index before which appended text goes: the start of the first trailing protected region, if any. */
function appendPoint(text: string): number | undefined {
  return protectedSpans(text, { frontMatter: false })[0]?.start;
}

function appendChange(
  text: string,
  content: string,
  status: { plain: EditStatus; beforeRegion: EditStatus },
): TextChange {
  const p = appendPoint(text);
  if (p === undefined) {
    const body = text.trimEnd();
    const head = `${body}${body ? '\n\n' : ''}`;
    return {
      text: `${head}${content}\n`,
      written: { start: head.length, end: head.length + content.length },
      at: body.length,
      removed: text.length - body.length,
      status: status.plain,
    };
  }
  const before = text.slice(0, p).trimEnd();
  const head = `${before}${before ? '\n\n' : ''}`;
  return {
    text: `${head}${content}\n\n${text.slice(p)}`,
    written: { start: head.length, end: head.length + content.length },
    at: before.length,
    removed: p - before.length,
    status: status.beforeRegion,
  };
}

/** `edit` (one of the text ops) applied to `text`, given the spans earlier edits of the patch wrote. */
export function editText(
  text: string,
  op: TextOp,
  edit: Edit,
  touched: Span[],
  options: TextEditOptions,
): TextChange | TextSkip {
  const content = stripMarkers(edit.content ?? '').trim();
  const target = edit.target ?? '';
  const spans = protectedSpans(text, { frontMatter: options.guardFrontMatter });
  const headLength = options.guardFrontMatter ? frontMatter(text).length : 0;

  let located: Located | undefined;
  // `append` has no anchor: whatever target it carries is ignored.
  if (target.trim() && op !== 'append') {
    located = locate(text, target, spans, touched, headLength);
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
  const notFound = `the target text is not in ${options.name}`;

  switch (op) {
    case 'append':
      if (!content) return { status: 'skipped_empty_content', reason: 'nothing to append' };
      return appendChange(text, content, {
        plain: 'applied_append',
        beforeRegion: 'applied_append_before_protected_region',
      });
    case 'insert_after': {
      if (!content) return { status: 'skipped_empty_content', reason: 'nothing to insert' };
      if (!found) {
        return appendChange(text, content, {
          plain: 'applied_insert_after_fallback_append',
          beforeRegion: 'applied_insert_after_fallback_before_protected_region',
        });
      }
      // After the whole line holding the end of the target (or right after it, if it ends a line).
      const nl = text[found.end - 1] === '\n' ? found.end - 1 : text.indexOf('\n', found.end);
      const i = nl < 0 ? text.length : nl + 1;
      if (touched.some((t) => t.start < i && i < t.end)) {
        return {
          status: 'skipped_overlapping_edit',
          reason: 'the insertion point falls inside text changed by an earlier edit of this patch',
        };
      }
      const lead = nl < 0 ? '\n\n' : '\n';
      return {
        text: `${text.slice(0, i)}${lead}${content}\n${text.slice(i)}`,
        written: { start: i + lead.length, end: i + lead.length + content.length },
        at: i,
        removed: 0,
        status: 'applied_insert_after',
        match: found.kind,
      };
    }
    case 'replace':
      if (!target.trim()) return { status: 'skipped_replace_missing_target', reason: 'replace needs a target' };
      if (!found) return { status: 'skipped_replace_target_not_found', reason: notFound };
      return {
        text: text.slice(0, found.start) + content + text.slice(found.end),
        written: { start: found.start, end: found.start + content.length },
        at: found.start,
        removed: found.end - found.start,
        status: 'applied_replace',
        match: found.kind,
      };
    case 'delete':
      if (!target.trim()) return { status: 'skipped_delete_missing_target', reason: 'delete needs a target' };
      if (!found) return { status: 'skipped_delete_target_not_found', reason: notFound };
      return {
        text: text.slice(0, found.start) + text.slice(found.end),
        written: { start: found.start, end: found.start },
        at: found.start,
        removed: found.end - found.start,
        status: 'applied_delete',
        match: found.kind,
      };
  }
}

/** The spans earlier edits wrote, moved past `change` so they keep pointing at the same text, plus the span it wrote. */
export function afterChange(touched: Span[], change: TextChange, delta: number): Span[] {
  const moved = touched.map((s) =>
    s.start >= change.at + change.removed ? { start: s.start + delta, end: s.end + delta } : s,
  );
  return [...moved, change.written];
}
