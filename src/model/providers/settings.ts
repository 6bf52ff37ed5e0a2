/**
 * Settings a backend reads from the environment: keys (only ever from variables, never from
 * files we write) and endpoints. A role-specific variable (`TARGET_…`, `OPTIMIZER_…`) wins over
 * the shared one, as in the original's `.env.example`. Every key resolved here is registered as a
 * secret, so that no file or message of the run shows it, whatever variable it came from.
 */
import { REDACTED, registerSecret, registerUrlSecrets } from '../../config/redact.ts';
import type { RoleConfig } from '../../config/schema.ts';
import type { BackendContext } from '../registry.ts';
import { ModelConfigError } from '../types.ts';

/** The value of the first set variable among `names`, each tried role-specific first. */
export function fromEnvironment(ctx: BackendContext, names: string[]): { name: string; value: string } | undefined {
  const prefix = ctx.role.toUpperCase();
  for (const name of names) {
    for (const candidate of [`${prefix}_${name}`, name]) {
      const value = ctx.environment[candidate];
      if (value !== undefined && value.trim() !== '') return { name: candidate, value: value.trim() };
    }
  }
  return undefined;
}

/**
 * The role's API key: from `api_key_env` when the config names a variable, else from the
 * backend's default variables. `required` makes a missing key a fatal error that names the
 * variable to set.
 */
export function apiKey(
  rc: RoleConfig,
  ctx: BackendContext,
  defaults: string[],
  required: boolean,
  what: string,
): string | undefined {
  const key = findKey(rc, ctx, defaults, required, what);
  registerSecret(key);
  return key;
}

function findKey(
  rc: RoleConfig,
  ctx: BackendContext,
  defaults: string[],
  required: boolean,
  what: string,
): string | undefined {
  if (rc.api_key_env) {
    const value = ctx.environment[rc.api_key_env];
    if (value?.trim()) return value.trim();
    if (!required) {
      // Named, so meant: a key left out in silence would surface only as the server's 401.
      ctx.notice?.(
        `model.${ctx.role}.api_key_env names ${rc.api_key_env}, which is not set: calls to the ${what} server go without a key (set ${rc.api_key_env} in the shell or in .env if the server wants one)`,
      );
      return undefined;
    }
    throw new ModelConfigError(
      `model.${ctx.role}: the ${what} key is missing: set the environment variable ${rc.api_key_env} (named by model.${ctx.role}.api_key_env) in the shell or in .env`,
    );
  }
  const found = fromEnvironment(ctx, defaults);
  if (found) return found.value;
  if (!required) return undefined;
  throw new ModelConfigError(
    `model.${ctx.role}: the ${what} key is missing: set the environment variable ${defaults[0]} (or ${ctx.role.toUpperCase()}_${defaults[0]} for this role only) in the shell or in .env, or name another variable in model.${ctx.role}.api_key_env`,
  );
}

/** A base URL from the config, else the environment, else the default; checked for form. */
export function baseUrl(
  rc: RoleConfig,
  ctx: BackendContext,
  envNames: string[],
  fallback: string | undefined,
  what: string,
): string {
  const raw = rc.base_url || fromEnvironment(ctx, envNames)?.value || fallback;
  // A gateway's key in the query (`?api-key=…`) is sent with every call, and written nowhere.
  registerUrlSecrets(raw);
  if (!raw) {
    throw new ModelConfigError(
      `model.${ctx.role}: the ${what} endpoint is not set: set model.${ctx.role}.base_url, or the environment variable ${envNames[0]}`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ModelConfigError(
      `model.${ctx.role}.base_url: '${raw}' is not a URL (expected e.g. http://127.0.0.1:8000/v1)`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ModelConfigError(`model.${ctx.role}.base_url: '${raw}' must start with http:// or https://`);
  if (url.username || url.password) {
    // Requests cannot carry credentials in their URL: every call would fail.
    registerSecret(decodeURIComponent(url.password));
    const shown = `${url.protocol}//${REDACTED}@${url.host}${url.pathname}`;
    throw new ModelConfigError(
      `model.${ctx.role}.base_url holds credentials (${shown}): a request cannot send them from the URL. ` +
        `Remove them from the URL and put the key in an environment variable: model.${ctx.role}.api_key_env names it, and it is sent as the API key`,
    );
  }
  return raw.replace(/\/+$/, '');
}

/** Says once per option that it is not sent to this role's model, and why. */
export function droppedOptionNotice(
  rc: RoleConfig,
  ctx: BackendContext,
): (option: 'reasoning_effort' | 'thinking', value: string) => void {
  const said = new Set<string>();
  return (option, value) => {
    if (said.has(option) || !ctx.notice) return;
    said.add(option);
    const what =
      option === 'reasoning_effort'
        ? `a reasoning effort ('${value}')`
        : `extended thinking (options.thinking_budget: ${value})`;
    ctx.notice(
      `model.${ctx.role} (${rc.model}) does not take ${what}: it is not sent, since the provider would reject the request. ` +
        `If the model does take it, set model.${ctx.role}.capabilities.${option}: true`,
    );
  };
}

/** The reasoning effort of a role: its own, else the run's ('' = none). */
export function effortOf(rc: RoleConfig, ctx: BackendContext): string {
  const e = rc.reasoning_effort || ctx.reasoningEffort;
  return e === '' ? '' : e;
}

/** Options of a backend, validated, with errors naming the key. */
export function parseOptions<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  rc: RoleConfig,
  ctx: BackendContext,
  backend: string,
): T {
  const r = schema.safeParse(rc.options);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new ModelConfigError(
    `model.${ctx.role}.options.${issue.path.map(String).join('.')}: ${issue.message} (backend ${backend})`,
  );
}
