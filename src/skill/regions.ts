/**
 * Protected regions of a skill: blocks that edits cannot touch. The slow update owns one
 * (its epoch guidance); skill-aware reflection owns the appendix of execution notes. A skill's
 * YAML front matter (the `---` block that opens a `SKILL.md`, with its `name` and `description`)
 * is protected too: edits cannot reach it and every rewrite keeps it byte for byte.
 */
export const SLOW_UPDATE_START = '<!-- SLOW_UPDATE_START -->';
export const SLOW_UPDATE_END = '<!-- SLOW_UPDATE_END -->';
export const APPENDIX_START = '<!-- APPENDIX_START -->';
export const APPENDIX_END = '<!-- APPENDIX_END -->';
export const APPENDIX_HEADING = '## Execution Notes Appendix';

const PAIRS = [
  [SLOW_UPDATE_START, SLOW_UPDATE_END],
  [APPENDIX_START, APPENDIX_END],
] as const;
const MARKERS = PAIRS.flat();

export interface Span {
  start: number;
  end: number;
}

/**
 * The YAML front matter that opens the skill, from its first `---` line to the closing `---`
 * (or `...`) line and that line's break; '' when there is none. The block counts when it is
 * empty or its first line is a `key:` (not when it is a Markdown rule around a heading or a
 * sentence). Its YAML is not parsed: real files hold values that strict YAML refuses
 * (`description: Use when: ...`), and the block is kept as written anyway.
 */
export function frontMatter(skill: string): string {
  const m = /^(?:\uFEFF)?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)??(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(skill);
  if (!m) return '';
  const first = (m[1] ?? '').split(/\r?\n/).find((line) => line.trim() !== '');
  return first === undefined || /^[A-Za-z_][\w.-]*[ \t]*:(\s|$)/.test(first) ? m[0] : '';
}

/**
 * The protected spans, markers included (a pair counts only when both markers exist), and the
 * front matter unless `frontMatter` is false.
 */
export function protectedSpans(skill: string, options: { frontMatter?: boolean } = {}): Span[] {
  const spans: Span[] = [];
  const head = options.frontMatter === false ? '' : frontMatter(skill);
  if (head) spans.push({ start: 0, end: head.length });
  for (const [open, close] of PAIRS) {
    const start = skill.indexOf(open);
    const endAt = skill.indexOf(close, start + open.length);
    if (start >= 0 && endAt >= 0) spans.push({ start, end: endAt + close.length });
  }
  return spans.sort((a, b) => a.start - b.start);
}

export function inProtectedSpan(spans: Span[], start: number, end: number): boolean {
  return spans.some((s) => start < s.end && s.start < Math.max(end, start + 1));
}

/** Removes every marker string, so that edit content cannot open or close a region. */
export function stripMarkers(text: string): string {
  let out = text;
  for (const m of MARKERS) out = out.split(m).join('');
  return out;
}

function removeRegions(skill: string, open: string, close: string): string {
  const head = frontMatter(skill);
  return head + removeRegionsFrom(skill.slice(head.length), open, close);
}

function removeRegionsFrom(skill: string, open: string, close: string): string {
  let out = skill;
  for (;;) {
    const start = out.indexOf(open);
    if (start < 0) break;
    const end = out.indexOf(close, start + open.length);
    out =
      end < 0
        ? out.slice(0, start) + out.slice(start + open.length)
        : out.slice(0, start) + out.slice(end + close.length);
  }
  out = out.split(close).join('');
  return out.replace(/\n{3,}/g, '\n\n').trimEnd();
}

function between(skill: string, open: string, close: string): string | undefined {
  const start = skill.indexOf(open);
  const end = skill.indexOf(close, start + open.length);
  if (start < 0 || end < 0) return undefined;
  return skill.slice(start + open.length, end);
}

/** A protected region with its markers, as it stands in the skill (undefined when absent). */
export function regionBlock(skill: string, which: 'slow_update' | 'appendix'): string | undefined {
  const [open, close] = which === 'slow_update' ? PAIRS[0] : PAIRS[1];
  const inner = between(skill, open, close);
  return inner === undefined ? undefined : `${open}${inner}${close}`;
}

export function extractSlowUpdateField(skill: string): string {
  return between(skill, SLOW_UPDATE_START, SLOW_UPDATE_END)?.trim() ?? '';
}

export function injectEmptySlowUpdateField(skill: string): string {
  if (between(skill, SLOW_UPDATE_START, SLOW_UPDATE_END) !== undefined) return skill;
  return `${skill.trimEnd()}\n\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`;
}

/** Replaces the slow-update field with `content`: exactly one region results, at the end. */
export function replaceSlowUpdateField(skill: string, content: string): string {
  const base = removeRegions(skill, SLOW_UPDATE_START, SLOW_UPDATE_END);
  return `${base}\n\n${SLOW_UPDATE_START}\n${content.trim()}\n${SLOW_UPDATE_END}\n`;
}

/**
 * `rewritten`'s body with `current`'s protected parts: its front matter, byte for byte, first
 * (whatever front matter the rewrite wrote is dropped), and its regions at the end, in their order.
 */
export function keepProtectedRegions(current: string, rewritten: string): string {
  const regions = [regionBlock(current, 'slow_update'), regionBlock(current, 'appendix')]
    .filter((r): r is string => r !== undefined)
    .sort((a, b) => current.indexOf(a) - current.indexOf(b));
  const head = frontMatter(current);
  let body = stripProtectedRegions(rewritten).trimEnd();
  if (head) body = body.slice(frontMatter(body).length).replace(/^\s*\n/, '');
  const text = regions.length ? `${body}\n\n${regions.join('\n\n')}\n` : `${body}\n`;
  return head ? `${head}${body ? '\n' : ''}${text}` : text;
}

/** The skill without the slow-update field and the appendix (the front matter stays: the target reads it). */
export function stripProtectedRegions(skill: string): string {
  let out = skill;
  for (const [open, close] of PAIRS) out = removeRegions(out, open, close);
  return out;
}

export function injectEmptyAppendix(skill: string): string {
  if (between(skill, APPENDIX_START, APPENDIX_END) !== undefined) return skill;
  return `${skill.trimEnd()}\n\n${APPENDIX_START}\n${APPENDIX_HEADING}\n${APPENDIX_END}\n`;
}

export function extractAppendixNotes(skill: string): string[] {
  const body = between(skill, APPENDIX_START, APPENDIX_END);
  if (body === undefined) return [];
  return body
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && line.replace(/^#+\s*/, '') !== APPENDIX_HEADING.replace(/^#+\s*/, ''))
    .map((line) => line.replace(/^[-*]\s?/, '').trim())
    .filter(Boolean);
}

function noteKey(note: string): string {
  return note
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[ .;:,_-]+$/, '')
    .toLocaleLowerCase();
}

export function dedupeNotes(notes: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of notes) {
    const note = raw.replace(/\s+/g, ' ').trim();
    const key = noteKey(note);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(note);
  }
  return out;
}

/** Adds notes to the appendix (deduplicated, order kept); the appendix moves to the end. */
export function appendToAppendix(skill: string, notes: string[]): string {
  const merged = dedupeNotes([...extractAppendixNotes(skill), ...dedupeNotes(notes)]);
  return replaceAppendix(skill, merged);
}

export function replaceAppendix(skill: string, notes: string[]): string {
  const base = removeRegions(skill, APPENDIX_START, APPENDIX_END);
  const block = [APPENDIX_START, APPENDIX_HEADING, ...notes.map((n) => `- ${n}`), APPENDIX_END].join('\n');
  return `${base}\n\n${block}\n`;
}
