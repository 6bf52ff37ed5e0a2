/**
 * How a run is run again (resumed, or its skills evaluated): its config file, as its
 * `config.json` names it, and the overrides it was last started with, read back from the
 * command that resumes it (its last `run_started` event). A run whose overrides cannot be
 * told (a secret value was redacted, a run of the original Python SkillOpt) is resumed from a
 * terminal; the reason says so.
 */
import fs from 'node:fs';
import { REDACTED } from '../../config/redact.ts';
import { parseResumeCommand, shownPath, type Invocation } from '../../run/resume-command.ts';
import type { RunReader } from '../run-reader.ts';

export type RunInvocation = { ok: true; inv: Invocation; configFile: string } | { ok: false; reason: string };

export function runInvocation(reader: RunReader, program: string, cwd: string): RunInvocation {
  const configFile = reader.configFile();
  if (!configFile)
    return {
      ok: false,
      reason:
        'its config.json does not name the config file it was started from (a run of the original Python SkillOpt, or one that never started)',
    };
  if (!fs.existsSync(configFile)) return { ok: false, reason: `its config file ${configFile} no longer exists` };
  const { started } = reader.lifecycle();
  let overrides: string[] = [];
  if (started?.resume_command) {
    const parsed = parseResumeCommand(started.resume_command);
    if (!parsed)
      return { ok: false, reason: `its event log's resume command cannot be read back: ${started.resume_command}` };
    const secret = parsed.overrides.find((o) => o.endsWith(`=${REDACTED}`));
    if (secret)
      return {
        ok: false,
        reason: `it was started with a secret value (${secret.slice(0, secret.indexOf('='))}), which is not recorded; resume it from a terminal with that value: ${started.resume_command}`,
      };
    overrides = parsed.overrides;
  }
  return { ok: true, inv: { program, config: shownPath(configFile, cwd), overrides }, configFile };
}

/** The budget limit a run stopped at (`budget.max_calls`, …) and its value, when a budget stopped it last. */
export function budgetStop(reader: RunReader): { key: string; limit: number } | undefined {
  const { ended } = reader.lifecycle();
  if (ended?.type !== 'run_stopped' || ended.reason !== 'budget') return undefined;
  const m = /limit (budget\.max_[a-z]+)=([\d.eE+-]+)/.exec(ended.message);
  return m ? { key: m[1]!, limit: Number(m[2]) } : undefined;
}
