/**
 * The learned block: the one part of a managed document (a skill's `SKILL.md`, a project's
 * `CLAUDE.md` or `AGENTS.md`) that Sleep writes. It sits between two HTML comments (the
 * original's markers, so documents move between the two), under a heading and a one-line note;
 * its body is the learned rules. Everything outside it is the user's and stays byte for byte:
 * a block already in the document is rewritten in place, a new one goes at the end.
 */
import { UserError } from '../../errors.ts';
import { applyEdits, type EditReport } from '../../skill/edits.ts';

export const LEARNED_START = '<!-- SKILLOPT-SLEEP:LEARNED START -->';
export const LEARNED_END = '<!-- SKILLOPT-SLEEP:LEARNED END -->';
export const LEARNED_HEADING = '## Learned preferences & procedures';
export const LEARNED_NOTE =
  '_Maintained by SkillOpt-Sleep: rules learned from your sessions, checked offline, changed only when you adopt them. Text outside this block is never touched._';

export interface DocumentParts {
  /** The text before the block (all of it when there is none). */
  before: string;
  /** The rules: the block's body without its heading and note ('' when there is no block). */
  rules: string;
  /** The text after the block. */
  after: string;
  hasBlock: boolean;
}

/** The parts of a document; `where` names it in the error about a block that is not closed. */
export function splitDocument(text: string, where = 'the document'): DocumentParts {
  const start = text.indexOf(LEARNED_START);
  if (start < 0) return { before: text, rules: '', after: '', hasBlock: false };
  const end = text.indexOf(LEARNED_END, start + LEARNED_START.length);
  if (end < 0)
    throw new UserError(
      `${where}: the learned block opens (${LEARNED_START}) but does not close (${LEARNED_END}); close it or remove the marker`,
    );
  if (text.indexOf(LEARNED_START, end) >= 0)
    throw new UserError(`${where}: holds more than one learned block; keep one`);
  const inner = text.slice(start + LEARNED_START.length, end);
  const rules = inner
    .split('\n')
    .filter((line) => line.trim() !== LEARNED_HEADING && line.trim() !== LEARNED_NOTE)
    .join('\n')
    .trim();
  return { before: text.slice(0, start), rules, after: text.slice(end + LEARNED_END.length), hasBlock: true };
}

/** Markers written into a rule would open or close a block: they are taken out. */
export function withoutMarkers(rules: string): string {
  return rules.split(LEARNED_START).join('').split(LEARNED_END).join('');
}

function block(rules: string): string {
  return `${LEARNED_START}\n${LEARNED_HEADING}\n\n${LEARNED_NOTE}\n\n${withoutMarkers(rules).trim()}\n${LEARNED_END}`;
}

/**
 * `text` with its learned rules replaced by `rules`. A document without a block gets one at
 * its end (none when there are no rules: the document is returned as it is).
 */
export function withRules(text: string, rules: string, where?: string): string {
  const parts = splitDocument(text, where);
  if (parts.hasBlock) return `${parts.before}${block(rules)}${parts.after}`;
  if (!withoutMarkers(rules).trim()) return text;
  if (!text.trim()) return `${block(rules)}\n`;
  const gap = text.endsWith('\n\n') ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${gap}${block(rules)}\n`;
}

/** The learned rules of a document. */
export function rulesOf(text: string, where?: string): string {
  return splitDocument(text, where).rules;
}

/**
 * The edits applied to the learned rules only. An edit whose target is not in the block but is
 * elsewhere in the document aims at the user's own text: it is refused as protected.
 */
export function applyToBlock(
  documentText: string,
  edits: Parameters<typeof applyEdits>[1],
  where: string,
): { text: string; reports: EditReport[] } {
  const rules = rulesOf(documentText, where);
  const { skill: edited, reports } = applyEdits(rules, edits);
  // Appends come as paragraphs; the rules read as one list.
  const newRules = edited.replace(/\n{2,}(?=- )/g, '\n');
  const outside = (() => {
    const p = splitDocument(documentText, where);
    return `${p.before}\n${p.after}`;
  })();
  const fixed = reports.map((r): EditReport => {
    const notFound = r.status === 'skipped_replace_target_not_found' || r.status === 'skipped_delete_target_not_found';
    return notFound && r.target && outside.includes(r.target)
      ? {
          ...r,
          status: 'skipped_protected_region',
          reason: 'the target is in the hand-written text outside the learned block, which Sleep never changes',
        }
      : r;
  });
  return { text: withRules(documentText, newRules, where), reports: fixed };
}
