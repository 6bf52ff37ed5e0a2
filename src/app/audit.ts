/**
 * `skillopt audit RUN_DIR | SKILL`: the audit of a run's best skill (against its initial skill)
 * or of any skill (whole, or against another), over the data of a config, with the test figures
 * sealed for it. It makes no model call: a run's second scorer and probes are read from the run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type AuditReport, type CheckResult, describeReport, isGainCheck, withChecks } from '../audit/audit.ts';
import { buildRunAudit, sealIdentity } from '../audit/run-audit.ts';
import { type Seal, sealKey } from '../audit/seal.ts';
import type { LoadedConfig } from '../config/load.ts';
import { firstN } from '../engine/batches.ts';
import { buildEnv } from '../envs/build.ts';
import { UserError } from '../errors.ts';
import { readJson } from '../run/atomic.ts';
import { RunDir } from '../run/layout.ts';
import { readSkillFile } from '../run/skill-files.ts';
import { packageHash, type SkillPackage } from '../skill/package/package.ts';

export interface AuditOutcome {
  report: AuditReport;
  /** Whether `evaluation.audit` rejects a candidate with this report. */
  rejects: boolean;
  /** One line per finding. */
  lines: string[];
  /** The seal of the skill's test figure on this config's target, when there is one. */
  seal?: Seal;
}

/**
 * A run directory: its best and initial skills, the config file (with the overrides) it was
 * started with, and the checks of the best skill's gain measured when the run ended (they need
 * the run's rollouts: the audit on demand reads them rather than paying for them again).
 */
export function runSkills(runDir: string): {
  skill: SkillPackage;
  against: SkillPackage;
  configFile?: string;
  overrides: string[];
  measured: CheckResult[];
} {
  const dir = new RunDir(runDir);
  const skill = readSkillFile(dir, dir.bestSkill);
  const against = readSkillFile(dir, dir.skill(0));
  if (!skill || !against)
    throw new UserError(`${runDir}: not a run directory with a best skill (best_skill.md and skills/ are missing)`);
  const stored = readJson<{ config_file?: string; overrides?: string[] }>(dir.config);
  const overrides = Array.isArray(stored?.overrides) ? stored.overrides.filter((o) => typeof o === 'string') : [];
  const ended = readJson<AuditReport>(dir.path('best_skill_audit.json'));
  const measured = (ended?.checks ?? [])
    .filter(isGainCheck)
    .map((c) => ({ ...c, summary: `${c.summary} (measured when the run ended)` }) as CheckResult);
  return { skill, against, overrides, measured, ...(stored?.config_file ? { configFile: stored.config_file } : {}) };
}

export function isRunDir(p: string): boolean {
  return fs.existsSync(path.join(p, 'config.json')) && fs.existsSync(path.join(p, 'best_skill.md'));
}

export async function auditSkill(o: {
  loaded: LoadedConfig;
  skill: SkillPackage;
  against?: SkillPackage;
  /** A run directory whose generated splits the config's data comes from. */
  outRoot?: string;
  /** Checks measured already (a run's, `runSkills`), reported with the lint's. */
  measured?: CheckResult[];
}): Promise<AuditOutcome> {
  const { config } = o.loaded;
  const { env, splits } = await buildEnv(o.loaded, o.outRoot);
  const identity = sealIdentity(config);
  const audit = buildRunAudit(config, env, splits);
  if (!audit) throw new UserError('evaluation.audit.checks is empty: there is nothing to audit');
  const report = withChecks(audit.lint.lint(o.skill, o.against), o.measured ?? []);
  const test = firstN(splits.test, config.evaluation.test_env_num);
  const seal = audit.seals?.store.read(
    sealKey({ split: test, skillHash: packageHash(o.skill), target: identity.target, scorer: identity.scorer }).key,
  );
  return { report, rejects: audit.lint.rejects(report), lines: describeReport(report), ...(seal ? { seal } : {}) };
}
