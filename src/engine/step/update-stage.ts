/**
 * ⑤ Update: the kept changes make a candidate skill. The step is skipped when no candidate came
 * out, or when the candidate is the skill it started from (every edit was skipped): nothing is
 * then spent gating it.
 */
import path from 'node:path';
import { changesOf, type UpdateItem } from '../../protocol/optimizer.ts';
import type { StepAction, StepRecord } from '../../run/records.ts';
import { writeSkillFile } from '../../run/skill-files.ts';
import { brokenByEdits } from '../stages/package-check.ts';
import { countTokens } from '../../skill/document.ts';
import { packageHash, withSkill, type SkillPackage } from '../../skill/package/package.ts';
import { appliedEdits, type Edit, skipReasons, summariseReports } from '../../skill/edits.ts';
import { applyPatch, rewriteFromSuggestions, takeFullRewrite, type UpdateResult } from '../stages/update.ts';
import type { StepScope } from './step-scope.ts';
import { listedText, skillListing } from '../../skill/agent-skill.ts';
import { type AuditReport, auditRecord, describeReport } from '../../audit/audit.ts';

export type Updated =
  | {
      candidate: SkillPackage;
      /** The edits that applied, in order (patch mode): what a pool merge can carry over. */
      applied?: Edit[];
      /** The audit's lint of it, which the audit of an accepted gain adds to. */
      audit?: AuditReport;
    }
  | { skip: Extract<StepAction, 'skip_no_rewrite' | 'skip_no_change' | 'skip_invalid_package' | 'skip_audit'> };

type Update = Omit<UpdateResult, 'candidate'> & { candidate?: SkillPackage; applied?: Edit[] };

async function update(s: StepScope, selected: UpdateItem[]): Promise<Update> {
  const { settings, opt } = s.ctx;
  const changes = changesOf(settings.mode, selected);
  if (changes.mode === 'patch') {
    const result = applyPatch(s.package, changes.items, {
      maxTokens: settings.maxSkillTokens,
      maxPackageTokens: settings.maxPackageTokens,
      singleDocument: !settings.packageSkill,
      description: s.target === 'description' ? 'editable' : 'protected',
    });
    return { ...result, applied: appliedEdits(changes.items, result.reports) };
  }
  const rewritten =
    changes.mode === 'rewrite_from_suggestions'
      ? await rewriteFromSuggestions(opt, {
          skill: s.skill,
          suggestions: changes.items,
          stepBufferText: s.memory.text,
          maxTokens: settings.maxSkillTokens,
          ...settings.rewrite,
        })
      : takeFullRewrite(s.skill, changes.items, settings.maxSkillTokens);
  const { candidate, ...rest } = rewritten;
  return candidate === undefined ? rest : { ...rest, candidate: withSkill(s.package, candidate) };
}

export async function updateStage(s: StepScope, selected: UpdateItem[]): Promise<Updated> {
  const { settings, events } = s.ctx;
  s.stages.start('update', `mode=${settings.mode}`);
  const result = await update(s, selected);
  const reports = result.reports ?? [];
  if (reports.length) s.files.write('edit_apply_report.json', reports);
  const summary = reports.length ? summariseReports(reports) : undefined;
  const notApplied = summary ? summary.skipped + summary.errors : 0;
  if (summary && notApplied)
    events.emit({
      type: 'edits_skipped',
      step: s.step,
      epoch: s.epoch,
      total: reports.length,
      skipped: notApplied,
      reasons: skipReasons(reports),
    });
  const candidate = result.candidate;
  if (candidate === undefined) {
    s.stages.finish('update', `no candidate: ${result.reason}`);
    events.info(`[skip] no usable rewrite (${result.reason}): skill unchanged`);
    s.record.skipped(result.reason ?? '');
    return { skip: 'skip_no_rewrite' };
  }
  if (packageHash(candidate) === packageHash(s.package)) {
    const reason = !summary
      ? selected.length === 0
        ? 'no change was selected'
        : 'the candidate is the current skill'
      : notApplied === reports.length
        ? `every edit was skipped (${skipReasons(reports)})`
        : 'the edits that applied leave the skill as it was';
    s.stages.finish('update', 'no change');
    events.info(`[skip] ${reason}: skill unchanged, nothing to evaluate`);
    s.record.skipped(reason);
    if (summary) s.record.update({ edit_apply_summary: summary });
    return { skip: 'skip_no_change' };
  }
  const broken = await checkPackage(s, candidate);
  const audit = auditCandidate(s, candidate, result.applied);
  writeSkillFile(s.ctx.dir, path.join(s.files.root, 'candidate_skill.md'), candidate);
  if (result.changeSummary) s.files.write('rewrite_result.json', { change_summary: result.changeSummary });
  s.record.update({
    candidate_hash: packageHash(candidate),
    candidate_skill_len: candidate.skill.length,
    candidate_skill_tokens: countTokens(candidate.skill),
    rewrite_change_summary: result.changeSummary,
    edit_apply_summary: summary,
    ...(broken ? { package_checks: broken.record } : {}),
    ...(audit ? { audit: auditRecord(audit.report) } : {}),
    ...descriptionChange(s, candidate),
  });
  if (broken?.record.broken.length) {
    const reason = `the edits broke the package: ${broken.record.broken.map((c) => c.message).join('; ')}`;
    s.stages.finish('update', 'broken package: not scored');
    events.info(`[skip] ${reason}`);
    s.record.skipped(reason);
    return { skip: 'skip_invalid_package' };
  }
  if (audit?.rejects) {
    const reason = `the audit rejected the candidate: ${audit.lines[0]}`;
    s.stages.finish('update', 'rejected by the audit: not scored');
    for (const line of audit.lines) events.info(`[audit] ${line}`);
    s.record.skipped(reason);
    return { skip: 'skip_audit' };
  }
  for (const line of audit?.lines ?? []) events.warn(`[audit] step ${s.step}: ${line}`);
  s.stages.finish('update', `skill ${s.skill.length} -> ${candidate.skill.length} characters`, {
    skill_len: s.skill.length,
    candidate_skill_len: candidate.skill.length,
  });
  return {
    candidate,
    ...(result.applied ? { applied: result.applied } : {}),
    ...(audit ? { audit: audit.report } : {}),
  };
}

/** A description step's change of what the target lists the skill by (the description, and `when_to_use` where it is read). */
function descriptionChange(
  s: StepScope,
  candidate: SkillPackage,
): { description_change?: { before: string; after: string } } {
  if (s.target !== 'description') return {};
  const listed = (skill: string) => listedText(skillListing(skill), s.ctx.settings.whenToUse);
  const before = listed(s.skill);
  const after = listed(candidate.skill);
  return before === after ? {} : { description_change: { before, after } };
}

/** A package candidate's checks (written to `package_checks.json`), and those its edits broke; none for a single document. */
async function checkPackage(
  s: StepScope,
  candidate: SkillPackage,
): Promise<{ record: NonNullable<StepRecord['package_checks']> } | undefined> {
  const checker = s.ctx.packageChecks;
  if (!checker) return undefined;
  const [parent, checked] = await Promise.all([
    checker.validate(s.package, s.ctx.stop),
    checker.validate(candidate, s.ctx.stop),
  ]);
  s.files.write('package_checks.json', checked);
  const broken = brokenByEdits(parent, checked).map(({ check, file, message }) => ({
    check,
    ...(file ? { file } : {}),
    message,
  }));
  return { record: { checks: checked.checks.length, broken } };
}

/** The audit's lint of the candidate against the skill the step started from (`audit.json`); none when the audit is off. */
function auditCandidate(
  s: StepScope,
  candidate: SkillPackage,
  applied: Edit[] | undefined,
): { report: AuditReport; rejects: boolean; lines: string[] } | undefined {
  const lint = s.ctx.audit?.lint;
  if (!lint) return undefined;
  const report = lint.lint(candidate, s.package, applied);
  s.files.write('audit.json', report);
  return { report, rejects: lint.rejects(report), lines: describeReport(report) };
}
