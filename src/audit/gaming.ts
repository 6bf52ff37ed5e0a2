/**
 * The scorer-gaming lint: a skill that tells the target to write what a rule scorer looks for
 * (a heading, a token, a format taken from the scorer's pattern or code) may raise the score
 * without raising the answer's worth. Such text is flagged for a second look, not rejected: a
 * format the task really asks for looks the same. What a scorer checks is the env's to say
 * (`Env.scorerChecks`; the rule scorers' in `src/envs/scoring/scorer-checks.ts`).
 */
import type { AuditText } from './leak.ts';

export interface GamingFinding {
  /** What the scorer checks, as its config or code has it. */
  check: string;
  file: string;
  line: number;
  /** The skill's line that mirrors it. */
  text: string;
}

/** Each check some text contains, case aside: the first line of the first file that has it. */
export function findGaming(texts: readonly AuditText[], checks: readonly string[]): GamingFinding[] {
  const out: GamingFinding[] = [];
  for (const check of checks) {
    const needle = check.toLowerCase();
    for (const { file, text } of texts) {
      const at = text.toLowerCase().indexOf(needle);
      if (at < 0) continue;
      const lines = text.split('\n');
      const line = text.slice(0, at).split('\n').length;
      out.push({ check, file, line, text: lines[line - 1]!.trim().slice(0, 160) });
      break;
    }
  }
  return out;
}
