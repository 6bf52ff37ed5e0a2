/**
 * The audit of a skill: checks that a measured gain is one to trust. Each check gives a verdict
 * with its evidence: `pass`, `flag` (worth a second look) or `fail` (the skill must not be
 * trusted as it is). What a flag or a fail does (reject the candidate, or warn) is the caller's
 * setting. The lints here make no model call; they compare a candidate with the skill it came
 * from, so only what the candidate adds is held against it.
 */
import { normalized } from './text.ts';
import { findGaming, type GamingFinding } from './gaming.ts';
import type { GainCheck } from './gain.ts';
import type { AuditItem } from './items.ts';
import { type AuditText, LeakIndex, type LeakFinding } from './leak.ts';
import { SKILL_FILE, type SkillPackage } from '../skill/package/package.ts';
import type { Edit } from '../skill/edit-schema.ts';
import type { AuditCheck } from '../config/audit-schema.ts';
import type { AuditRecord } from '../run/audit-records.ts';

import type { Verdict } from './verdict.ts';

export type { Verdict };

/** Evidence tied to the edit that brought it in, when one did. */
type Attributed<T> = T & { edit?: { index: number; op: string; file: string } };

export type CheckResult =
  | { check: 'leak'; verdict: Verdict; summary: string; findings: Attributed<LeakFinding>[] }
  | { check: 'scorer_gaming'; verdict: Verdict; summary: string; findings: Attributed<GamingFinding>[] }
  | ({ check: 'second_scorer' | 'probes' } & GainCheck);

export interface AuditReport {
  /** The worst verdict of its checks. */
  verdict: Verdict;
  checks: CheckResult[];
}

export interface AuditPolicy {
  checks: readonly AuditCheck[];
  /** What a flag does to a candidate. */
  onFlag: 'warn' | 'reject';
  /** What a fail does to a candidate. */
  onFail: 'warn' | 'reject';
}

/** A package's text files, `SKILL.md` first. */
export function packageTexts(pkg: SkillPackage): AuditText[] {
  const out: AuditText[] = [{ file: SKILL_FILE, text: pkg.skill }];
  for (const [file, f] of [...(pkg.files ?? [])].sort(([a], [b]) => (a < b ? -1 : 1)))
    if (f.kind === 'text') out.push({ file, text: f.text });
  return out;
}

export const worst = (vs: Verdict[]): Verdict => (vs.includes('fail') ? 'fail' : vs.includes('flag') ? 'flag' : 'pass');

export class SkillLint {
  private readonly leaks: LeakIndex;

  constructor(
    items: readonly AuditItem[],
    /** The texts the env's scorer rewards beyond the answer (`Env.scorerChecks`). */
    private readonly scorerChecks: readonly string[],
    private readonly policy: AuditPolicy,
  ) {
    this.leaks = new LeakIndex(items);
  }

  /** What `candidate` adds over `reference` (nothing: the whole candidate), with the edits that made it. */
  lint(candidate: SkillPackage, reference?: SkillPackage, edits: readonly Edit[] = []): AuditReport {
    const now = packageTexts(candidate);
    const before = reference ? packageTexts(reference) : [];
    const checks: CheckResult[] = [];
    if (this.policy.checks.includes('leak')) {
      const old = new Set(this.leaks.find(before).map((f) => `${f.kind}\u0000${f.item}`));
      const findings = this.leaks
        .find(now)
        .filter((f) => !old.has(`${f.kind}\u0000${f.item}`))
        .map((f) => attribute(f, edits));
      const items = new Set(findings.map((f) => f.item)).size;
      checks.push({
        check: 'leak',
        verdict: findings.length ? 'fail' : 'pass',
        summary: findings.length ? `carries ${items} item${items === 1 ? '' : 's'} of the data` : 'no item of the data',
        findings,
      });
    }
    if (this.policy.checks.includes('scorer_gaming') && this.scorerChecks.length) {
      const old = new Set(findGaming(before, this.scorerChecks).map((f) => f.check));
      const findings = findGaming(now, this.scorerChecks)
        .filter((f) => !old.has(f.check))
        .map((f) => attribute(f, edits));
      checks.push({
        check: 'scorer_gaming',
        verdict: findings.length ? 'flag' : 'pass',
        summary: findings.length
          ? `mirrors what the scorer checks: ${findings.map((f) => JSON.stringify(f.check)).join(', ')}`
          : 'mirrors nothing the scorer checks',
        findings,
      });
    }
    return { verdict: worst(checks.map((c) => c.verdict)), checks };
  }

  /** Whether the policy rejects a candidate with this report. */
  rejects(report: AuditReport): boolean {
    const { onFlag, onFail } = this.policy;
    return (report.verdict === 'fail' && onFail === 'reject') || (report.verdict !== 'pass' && onFlag === 'reject');
  }
}

/** The checks of an accept's gain (measured after the gate), as against the lints before it. */
export function isGainCheck(c: CheckResult): boolean {
  return c.check === 'second_scorer' || c.check === 'probes';
}

/** A report with more checks: those of an accept's gain, measured after the gate. */
export function withChecks(report: AuditReport | undefined, checks: CheckResult[]): AuditReport {
  const all = [...(report?.checks ?? []), ...checks];
  return { verdict: worst(all.map((c) => c.verdict)), checks: all };
}

/** The first edit whose content holds the finding's text, in its file. */
function attribute<T extends { file: string; text: string }>(finding: T, edits: readonly Edit[]): Attributed<T> {
  const needle = normalized(finding.text);
  const index = edits.findIndex(
    (e) => (e.file ?? SKILL_FILE) === finding.file && normalized(e.content ?? '').includes(needle),
  );
  if (index < 0) return finding;
  const e = edits[index]!;
  return { ...finding, edit: { index, op: e.op, file: e.file ?? SKILL_FILE } };
}

/** One line per finding, for the console and the step's stage detail. */
export function describeReport(report: AuditReport): string[] {
  const lines: string[] = [];
  for (const c of report.checks) {
    if (c.verdict === 'pass') continue;
    lines.push(`${c.check} ${c.verdict}: ${c.summary}`);
    for (const f of c.findings.slice(0, 5)) {
      if ('note' in f) {
        lines.push(`  item ${f.item}: ${f.note}`);
        continue;
      }
      const by = f.edit ? ` (edit ${f.edit.index + 1}, ${f.edit.op})` : '';
      const what = 'item' in f ? `${f.kind} of ${f.split} item ${f.item}` : `scorer check ${JSON.stringify(f.check)}`;
      lines.push(`  ${what} at ${f.file}:${f.line}${by}: ${JSON.stringify(f.text)}`);
    }
    if (c.findings.length > 5) lines.push(`  … and ${c.findings.length - 5} more`);
  }
  return lines;
}

/** A report as a step record or a summary holds it: the verdicts, and how much evidence each check found. */
export function auditRecord(report: AuditReport): AuditRecord {
  return {
    verdict: report.verdict,
    checks: report.checks.map((c) => ({
      check: c.check,
      verdict: c.verdict,
      summary: c.summary,
      findings: c.findings.length,
    })),
  };
}
