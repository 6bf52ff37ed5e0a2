/**
 * How a run is run again (resumed, or its skills evaluated): its config file, as its
 * `config.json` names it, and the overrides it was last started with, read back from the
 * command that resumes it (its last `run_started` event). A run whose overrides cannot be
 * told (a secret value was redacted, a run of the original Python SkillOpt) is resumed from a
 * terminal; the reason says so.
 *
 * A run directory is data, never code: the config file it names, the `_base_` files that config
 * reads and every module the config names (a custom scorer's) must lie under the dashboard's
 * config roots, or the run is not run again from the page. A run copied in from elsewhere could
 * otherwise make the dashboard import code that came with it.
 */
import fs from 'node:fs';
import { REDACTED } from '../../config/redact.ts';
import { errorMessage } from '../../errors.ts';
import { parseResumeCommand, shownPath, type Invocation } from '../../run/resume-command.ts';
import { resolveConfigPath } from '../../util/paths.ts';
import type { RunReader } from '../runs/run-reader.ts';
import type { ConfigRoots } from './config-roots.ts';
import { loadWithOverrides } from './request.ts';

export type RunInvocation = { ok: true; inv: Invocation; configFile: string } | { ok: false; reason: string };

export function runInvocation(reader: RunReader, program: string, cwd: string, configs: ConfigRoots): RunInvocation {
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
  const outside = codeOutsideRoots(configFile, overrides, configs);
  if (outside) return { ok: false, reason: outside };
  return { ok: true, inv: { program, config: shownPath(configFile, cwd), overrides }, configFile };
}

/** Every `module` a config names (custom code), with its key. */
function modulesOf(tree: unknown, at: string[] = []): { key: string; value: string }[] {
  if (!tree || typeof tree !== 'object') return [];
  return Object.entries(tree).flatMap(([k, v]) =>
    k === 'module' && typeof v === 'string' && v
      ? [{ key: [...at, k].join('.'), value: v }]
      : modulesOf(v, Array.isArray(tree) ? [...at, `[${k}]`] : [...at, k]),
  );
}

/** Why the run's config or the code it names is not taken (outside the config roots), or undefined. */
function codeOutsideRoots(configFile: string, overrides: string[], configs: ConfigRoots): string | undefined {
  const roots = `the dashboard's config roots (${configs.describe()})`;
  const terminal = 'the dashboard runs only configs and code from those; resume or evaluate it from a terminal';
  if (!configs.rootOf(configFile))
    return `its config file ${configFile} is not under ${roots}: a run directory is data, and ${terminal}`;
  let read: ReturnType<typeof loadWithOverrides>;
  try {
    read = loadWithOverrides(configFile, overrides);
  } catch (err) {
    // The page asks what it may do with every run it shows: a run whose config cannot be read is one it cannot run again.
    return `its config does not load: ${errorMessage(err)}`;
  }
  const { loaded, error } = read;
  if (!loaded) return `its config does not load: ${error}`;
  const base = loaded.files.find((f) => !configs.rootOf(f));
  if (base) return `its config reads ${base}, which is not under ${roots}; ${terminal}`;
  for (const m of modulesOf(loaded.config)) {
    const file = resolveConfigPath(m.value, loaded.baseDirOf(m.key));
    if (!configs.rootOf(file))
      return `its config's ${m.key} names ${file}, which is not under ${roots}: code is imported only from there; ${terminal}`;
  }
  return undefined;
}

/** The budget limit a run stopped at (`budget.max_calls`, …) and its value, when a budget stopped it last. */
export function budgetStop(reader: RunReader): { key: string; limit: number } | undefined {
  const { ended } = reader.lifecycle();
  if (ended?.type !== 'run_stopped' || ended.reason !== 'budget') return undefined;
  const m = /limit (budget\.max_[a-z]+)=([\d.eE+-]+)/.exec(ended.message);
  return m ? { key: m[1]!, limit: Number(m[2]) } : undefined;
}
