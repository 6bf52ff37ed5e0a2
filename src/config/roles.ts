/**
 * Which backend and model each role uses. `model.backend` is a label that fills the roles that
 * leave `backend` unset (the original's table, reference §4.7): empty, or `openai_chat` (the
 * original's base config pins both roles to it, so it counts as unset). The judge falls back to
 * the optimizer field by field. A role still on the base config's OpenAI model (`gpt-5.4`,
 * `gpt-5.5`) while its backend is not OpenAI's gets that backend's default model, as the original
 * does, unless the role's model was set together with its backend. A backend's own defaults (an
 * agent CLI's concurrency, timeout and retries) fill the settings the config leaves unset. A
 * role on `openai_chat` spelt `azure_openai` (or `azure`) is on Azure. Unknown backends are an
 * error naming the key.
 */
import { ConfigError, NOTHING_REGISTERED } from '../errors.ts';
import { backendEntry, backendNames, canonicalBackend } from './catalog.ts';
import { didYouMean } from '../util/suggest.ts';
import { isOverride, type Sources } from './tree.ts';
import { RoleSchema, type Config } from './schema.ts';

/** For a label: the optimizer's and the target's backend when the role leaves them empty (else both take the label). */
const LABELS: Record<string, { optimizer: string; target: string }> = {
  codex: { optimizer: 'codex_exec', target: 'codex_exec' },
  codex_exec: { optimizer: 'codex_exec', target: 'codex_exec' },
  claude_code_exec: { optimizer: 'openai_chat', target: 'claude_code_exec' },
  cursor_exec: { optimizer: 'openai_chat', target: 'cursor_exec' },
  copilot_exec: { optimizer: 'openai_chat', target: 'copilot_exec' },
  qwen_chat: { optimizer: 'openai_chat', target: 'qwen_chat' },
  minimax_chat: { optimizer: 'openai_chat', target: 'minimax_chat' },
};

/** Spellings of `openai_chat` that name Azure: its roles are on an Azure resource (an unset endpoint is then refused, not taken for OpenAI's). */
const AZURE_SPELLINGS = new Set(['azure', 'azure_openai', 'azure-openai']);

/** The base config's model names, replaced by a non-OpenAI backend's default. */
const OPENAI_SENTINELS = new Set(['gpt-5.4', 'gpt-5.5']);
const KEEPS_OPENAI_MODELS = new Set(['openai_chat', 'openai_compatible']);

type RoleName = 'target' | 'optimizer' | 'judge';

/**
 * The role's model was chosen for its backend: set on the command line, or by the same file
 * that set the backend (not a base file's OpenAI default left under another backend).
 */
function chosenWithBackend(sources: Sources, role: RoleName, backendKey: string): boolean {
  const model = sources.get(`model.${role}.model`)?.source;
  if (!model) return false;
  return isOverride(model) || model === sources.get(backendKey)?.source;
}

/** The canonical backend a role names, refusing unknown names and target-only backends in other roles. */
function checkedBackend(
  requested: string,
  role: RoleName,
  key: string,
  sources: Sources,
  viaLabel: string | undefined,
): string {
  const s = sources.get(key);
  const where = `${s?.source ?? 'config'}: ${s?.written ?? key}`;
  const canonical = canonicalBackend(requested);
  if (backendNames().length === 0) throw new Error(NOTHING_REGISTERED);
  if (!canonical) {
    throw new ConfigError(
      `${where}: unknown backend '${requested}'${didYouMean(requested, backendNames())}; known backends: ${backendNames().join(', ')}`,
      s?.source,
      key,
    );
  }
  const spec = backendEntry(canonical)!;
  const named = viaLabel
    ? `'${viaLabel}' selects '${canonical}' for model.${role}: `
    : requested.trim().toLowerCase() !== canonical
      ? `'${requested}' is the original's name for '${canonical}': `
      : '';
  if (spec.targetOnly && role !== 'target') {
    throw new ConfigError(
      `${where}: ${named}'${canonical}' is an agent harness: it can only be model.target, not model.${role}`,
      s?.source,
      key,
    );
  }
  return canonical;
}

/**
 * Resolves the target's and the optimizer's backend and model in place; returns the roles whose
 * model was left to the backend's default.
 */
export function resolveRoles(config: Config, sources: Sources): { defaulted: Set<'target' | 'optimizer'> } {
  const label = config.model.backend.trim();
  const canonicalLabel = label ? (canonicalBackend(label) ?? label) : 'openai_chat';
  const defaulted = new Set<'target' | 'optimizer'>();
  for (const role of ['target', 'optimizer'] as const) {
    const rc = config.model[role];
    const own = rc.backend && canonicalBackend(rc.backend) !== 'openai_chat' ? rc.backend : '';
    const key = own || (rc.backend && !label) ? `model.${role}.backend` : 'model.backend';
    const fromLabel = !own && Boolean(label);
    const requested = own || (label ? LABELS[canonicalLabel]?.[role] || canonicalLabel : rc.backend || canonicalLabel);
    const canonical = checkedBackend(
      requested,
      role,
      key,
      sources,
      fromLabel && requested !== label ? label : undefined,
    );
    const spelled = (rc.backend || label).trim().toLowerCase();
    if (canonical === 'openai_chat' && AZURE_SPELLINGS.has(spelled) && rc.options.provider === undefined)
      rc.options.provider = 'azure';
    rc.backend = canonical;
    applyBackendDefaults(config, sources, role);
    if (
      !rc.model ||
      (OPENAI_SENTINELS.has(rc.model) && !KEEPS_OPENAI_MODELS.has(canonical) && !chosenWithBackend(sources, role, key))
    ) {
      rc.model = backendEntry(canonical)!.defaultModel;
      defaulted.add(role);
    }
  }
  return { defaulted };
}

/**
 * The backend's defaults for the role settings the config leaves unset. An agent target's timeout
 * is the original's `env.exec_timeout` (its per-call limit of the code agents) when the config sets it.
 */
function applyBackendDefaults(config: Config, sources: Sources, role: 'target' | 'optimizer'): void {
  const rc = config.model[role];
  const defaults = backendEntry(rc.backend)?.roleDefaults;
  if (!defaults) return;
  const unset = (field: string) => !sources.has(`model.${role}.${field}`);
  for (const [field, value] of Object.entries(defaults) as [keyof typeof defaults, number][])
    if (unset(field)) rc[field] = value;
  if (role === 'target' && unset('timeout_s') && sources.has('env.exec_timeout'))
    rc.timeout_s = config.env.exec_timeout;
}

/** The judge: its own fields over the (resolved) optimizer's, field by field. */
export function resolveJudge(config: Config, sources: Sources): void {
  const judge = config.model.judge;
  const merged = RoleSchema.parse({
    ...config.model.optimizer,
    ...Object.fromEntries(Object.entries(judge).filter(([, v]) => v !== undefined && v !== '')),
  });
  merged.backend = checkedBackend(merged.backend, 'judge', 'model.judge.backend', sources, undefined);
  config.model.judge = merged;
}
