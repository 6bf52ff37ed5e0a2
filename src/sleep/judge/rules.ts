/**
 * Rule judges: a task's answer checked by operators, with no model. `hard` is 1 when every check
 * passes, `soft` the share that pass. The operators are the original's:
 *
 * | op | passes when |
 * |---|---|
 * | `section_present` | a heading ends with the name, a bold line holds it, or a line starts with `Name:` |
 * | `section_contains` | a Markdown heading's text contains the name |
 * | `max_chars` / `min_chars` | the answer is at most / at least that many characters |
 * | `contains` / `not_contains` | the text is in / not in the answer (ignoring case) |
 * | `regex` | the pattern matches somewhere (a pattern that does not compile fails, saying so) |
 * | `no_refusal` | the answer is not a bare refusal |
 * | `tool_called` | the agent called that tool (or wrote `TOOL_CALL: <name>`) |
 *
 * An unknown operator passes (and `validateChecks` warns of it). The first four are "shape"
 * checks: a judge of shape checks only says nothing about whether the task was done.
 */
import type { Judge } from '../tasks/task.ts';

export const STRING_OPS = [
  'section_present',
  'section_contains',
  'regex',
  'contains',
  'not_contains',
  'tool_called',
] as const;
export const BOUND_OPS = ['max_chars', 'min_chars'] as const;
export const KNOWN_OPS = [...STRING_OPS, ...BOUND_OPS, 'no_refusal'] as const;
/** Checks of form rather than substance. */
export const SHAPE_OPS: ReadonlySet<string> = new Set([
  'section_present',
  'section_contains',
  'max_chars',
  'min_chars',
]);

export interface RuleScore {
  hard: number;
  soft: number;
  rationale: string;
}

/** Characters as the user counts them (code points, not UTF-16 units). */
const length = (s: string) => [...s].length;

/** A character bound: an integer, an integral number or an integer string; anything else (booleans, fractions, NaN) is undefined. */
export function charBound(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) ? value : undefined;
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number.parseInt(value, 10);
  return undefined;
}

/** Unicode case folding as far as JS offers it: NFC, then lower case. */
const fold = (s: string) => s.normalize('NFC').toLocaleLowerCase('und');

/**
 * A pattern written for Python's `re` (leading `(?i)`, `(?m)`, `(?s)` groups) as a JS regex; an
 * error when it does not compile.
 */
export function compilePattern(pattern: string): RegExp {
  let flags = 'u';
  let body = pattern;
  for (let m = /^\(\?([imsx]+)\)/.exec(body); m; m = /^\(\?([imsx]+)\)/.exec(body)) {
    for (const f of m[1]!) if (f !== 'x' && !flags.includes(f)) flags += f;
    body = body.slice(m[0].length);
  }
  try {
    return new RegExp(body, flags);
  } catch {
    // Patterns valid for Python but not under the `u` flag (a lone `\-`) are tried without it.
    return new RegExp(body, flags.replace('u', ''));
  }
}

const HEADING = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?[ \t#]*$/;

function sectionContains(response: string, name: string): boolean {
  const want = fold(name);
  return response.split('\n').some((line) => {
    const m = HEADING.exec(line);
    return m !== null && fold(m[1] ?? '').includes(want);
  });
}

function sectionPresent(response: string, name: string): boolean {
  const want = fold(name.trim());
  return response.split('\n').some((raw) => {
    if (/^ {4}/.test(raw)) return false;
    const line = fold(raw.trim());
    const heading = /^#{1,6}\s+(.*?)[\s#]*$/.exec(line);
    if (heading && heading[1]!.replace(/:$/, '').trimEnd().endsWith(want)) return true;
    const bold = /^(?:\*\*|__)(.+?)(?:\*\*|__):?$/.exec(line);
    if (bold && bold[1]!.includes(want)) return true;
    return line.startsWith(`${want}:`);
  });
}

const REFUSAL_PREFIXES = [
  'cannot complete',
  'i cannot',
  "i can't",
  "i'm unable",
  'i am unable',
  'unable to complete',
  "sorry, i can't",
  'sorry, i cannot',
  'no can do',
];

/** An empty answer, or one that opens with a refusal and says little else. */
export function isRefusal(response: string): boolean {
  const stripped = response.replace(/^(?:\s|[>*_#-]|\d+[.)])+/u, '').trim();
  if (!stripped) return true;
  const head = stripped.slice(0, 160).toLowerCase().replace(/[’]/g, "'");
  return REFUSAL_PREFIXES.some((p) => head.startsWith(p)) && length(stripped) < 600;
}

function checkPasses(op: string, arg: unknown, response: string, tools: string[]): { pass: boolean; note?: string } {
  const text = typeof arg === 'string' ? arg : arg === null || arg === undefined ? '' : String(arg);
  switch (op) {
    case 'section_present':
      return { pass: sectionPresent(response, text) };
    case 'section_contains':
      return { pass: sectionContains(response, text) };
    case 'max_chars':
    case 'min_chars': {
      const bound = charBound(arg);
      if (bound === undefined) return { pass: false, note: 'invalid bound' };
      return { pass: op === 'max_chars' ? length(response) <= bound : length(response) >= bound };
    }
    case 'contains':
      return { pass: fold(response).includes(fold(text)) };
    case 'not_contains':
      return { pass: !fold(response).includes(fold(text)) };
    case 'regex':
      try {
        return { pass: compilePattern(text).test(response) };
      } catch (err) {
        return { pass: false, note: `invalid regex (${(err as Error).message})` };
      }
    case 'no_refusal':
      return { pass: !isRefusal(response) };
    case 'tool_called': {
      const want = fold(text.trim());
      return {
        pass: tools.some((t) => fold(t) === want) || fold(response).includes(fold(`TOOL_CALL: ${text.trim()}`)),
      };
    }
    default:
      return { pass: true };
  }
}

function describe(check: unknown): { op: string; arg: unknown } {
  if (check && typeof check === 'object') {
    const c = check as { op?: unknown; arg?: unknown };
    return { op: typeof c.op === 'string' ? c.op : String(c.op), arg: c.arg };
  }
  return { op: String(check), arg: undefined };
}

/** A rule judge's score of one answer. */
export function scoreRuleJudge(judge: Judge, response: string, toolsCalled: string[] = []): RuleScore {
  const checks = Array.isArray(judge.checks) ? judge.checks : [];
  if (checks.length === 0) return { hard: 0, soft: 0, rationale: 'no checks' };
  const failed: string[] = [];
  for (const check of checks) {
    const { op, arg } = describe(check);
    const { pass, note } =
      check && typeof check === 'object'
        ? checkPasses(op, arg, response, toolsCalled)
        : { pass: false, note: 'not a check' };
    if (!pass) failed.push(`${op}=${arg ?? ''}${note ? ` [${note}]` : ''}`);
  }
  const passed = checks.length - failed.length;
  return {
    hard: failed.length === 0 ? 1 : 0,
    soft: passed / checks.length,
    rationale: failed.length === 0 ? 'all checks passed' : `failed: ${failed.join(', ')}`,
  };
}

/** Whether every check is a shape check (a judge with none is not). */
export function isShapeOnly(judge: unknown): boolean {
  if (!judge || typeof judge !== 'object') return false;
  const checks = (judge as Judge).checks;
  if (!Array.isArray(checks) || checks.length === 0) return false;
  return checks.every((c) => c && typeof c === 'object' && SHAPE_OPS.has(String((c as { op?: unknown }).op)));
}

/** What is wrong with a rule judge (errors refuse it) and what is doubtful (warnings). */
export function validateChecks(judge: unknown): { errors: string[]; warnings: string[] } {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!judge || typeof judge !== 'object' || Array.isArray(judge))
    return { errors: ['the judge is not an object'], warnings };
  const checks = (judge as Judge).checks;
  if (!Array.isArray(checks)) return { errors: ['judge.checks is not a list'], warnings };
  checks.forEach((check, i) => {
    const where = `check ${i + 1}`;
    if (!check || typeof check !== 'object' || Array.isArray(check)) {
      errors.push(`${where} is not an object`);
      return;
    }
    const { op, arg } = check as { op?: unknown; arg?: unknown };
    if (typeof op !== 'string') {
      errors.push(`${where}: op is not a string`);
      return;
    }
    if ((STRING_OPS as readonly string[]).includes(op)) {
      if (typeof arg !== 'string' || !arg.trim()) errors.push(`${where} (${op}): needs a non-blank text argument`);
      else if (op === 'regex') {
        try {
          compilePattern(arg);
        } catch (err) {
          errors.push(`${where} (regex): the pattern does not compile: ${(err as Error).message}`);
        }
      }
    } else if ((BOUND_OPS as readonly string[]).includes(op)) {
      const bound = charBound(arg);
      if (bound === undefined)
        errors.push(`${where} (${op}): needs a whole number of characters, got ${JSON.stringify(arg)}`);
      else if (bound < 0) errors.push(`${where} (${op}): the bound is negative`);
      else if (op === 'min_chars' && bound === 0) warnings.push(`${where}: min_chars=0 always passes`);
    } else if (op !== 'no_refusal') warnings.push(`${where}: unknown op '${op}' always passes`);
  });
  if (isShapeOnly(judge))
    warnings.push(
      'every check is about the shape of the answer (sections, length): it cannot tell whether the task was done',
    );
  return { errors, warnings };
}
