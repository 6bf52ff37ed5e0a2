/**
 * What a rule scorer looks for beyond the answer, as text an answer could carry: the literal
 * parts of a regex scorer's pattern, the string literals of a custom scorer's code. The audit
 * flags a skill that tells the target to write them (`src/audit/gaming.ts`).
 */
import fs from 'node:fs';
import type { ScorerConfig } from './scorer.ts';

/** Literal text shorter than this is too common to tell anything (a bracket, a short word). */
const MIN_LITERAL = 4;

/** The runs of literal characters in a regular expression's source, long enough to mean something. */
export function regexLiterals(pattern: string): string[] {
  const out: string[] = [];
  let run = '';
  const flush = () => {
    if (run.trim().length >= MIN_LITERAL) out.push(run.trim());
    run = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      i++;
      // An escaped punctuation mark is itself; \d, \s, \w and the like are classes.
      if (/[^\p{L}\p{N}]/u.test(next)) run += next;
      else flush();
    } else if ('[](){}|?*+.^$'.includes(c)) {
      // A quantifier after a run makes its last character optional or repeated: it is not literal.
      if ('?*+{'.includes(c)) run = run.slice(0, -1);
      flush();
      if (c === '[') i = skipClass(pattern, i);
      if (c === '{') i = pattern.indexOf('}', i) >= 0 ? pattern.indexOf('}', i) : i;
    } else run += c;
  }
  flush();
  return [...new Set(out)];
}

function skipClass(pattern: string, i: number): number {
  for (let j = i + 1; j < pattern.length; j++) {
    if (pattern[j] === '\\') j++;
    else if (pattern[j] === ']') return j;
  }
  return pattern.length;
}

/** The string literals of a scorer's source code that look like text an answer could carry. */
export function codeLiterals(source: string): string[] {
  const out = new Set<string>();
  for (const m of source.matchAll(/(["'`])((?:\\.|(?!\1)[^\\\n])*)\1/g)) {
    const s = m[2]!.replace(/\\(.)/g, '$1').trim();
    // Module paths, identifiers and format strings are the code's own, not the answer's.
    if (s.length < MIN_LITERAL || /^[./@]|^node:/.test(s) || /^[A-Za-z_$][\w$]*$/.test(s) || s.includes('${')) continue;
    out.add(s);
  }
  return [...out];
}

/** The texts `config` rewards beyond the answer; `file`: a custom scorer's module, made absolute. */
export function scorerChecks(config: ScorerConfig, file?: string): string[] {
  if (config.type === 'regex') return config.pattern ? regexLiterals(config.pattern) : [];
  if (config.type === 'custom' && file && fs.existsSync(file)) return codeLiterals(fs.readFileSync(file, 'utf8'));
  return [];
}
