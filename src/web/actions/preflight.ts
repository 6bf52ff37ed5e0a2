/**
 * The checks before a launch: the data loads (the env's splits), the training settings pass
 * the same preflight as `train`'s, and each role's endpoint answers a tiny call (the key is
 * present and accepted, the model exists). Each role's model is built by its backend exactly
 * as training builds it and called once through the same scheduler, with no retry, no response
 * cache and no ledger on disk: a failure is reported per role, with what to do about it.
 */
import type { LoadedConfig } from '../../config/load.ts';
import { preflight } from '../../config/preflight.ts';
import type { Config, RoleConfig } from '../../config/schema.ts';
import { errorMessage } from '../../errors.ts';
import type { Role } from '../../model/types.ts';

export interface RoleCheck {
  role: Role;
  backend: string;
  model: string;
  endpoint?: string;
  ok: boolean;
  /** What happened, in words (a failure's message says what to do). */
  message: string;
  /** The settings to look at when it failed. */
  fix?: string;
  ms: number;
}

export interface PreflightReport {
  ok: boolean;
  data: { ok: boolean; message: string; sizes?: { train: number; val: number; test: number } };
  settings: { ok: boolean; message?: string; warnings: string[] };
  roles: RoleCheck[];
}

export interface PreflightOptions {
  environment?: Record<string, string | undefined>;
  /** Longest wait for one role's answer, ms. */
  timeoutMs?: number;
}

/** Output tokens asked of the check call: the least every API accepts (the Responses API wants 16). */
const CHECK_TOKENS = 16;

/** Where to look when a role fails, from what the config says about it. */
function fixFor(role: Role, rc: RoleConfig, endpoint: string | undefined, kind: string | undefined): string {
  const key = rc.api_key_env
    ? `the key in the environment variable ${rc.api_key_env} (model.${role}.api_key_env)`
    : `the key the ${rc.backend} backend reads from the environment or .env (or name its variable in model.${role}.api_key_env)`;
  if (kind === 'network' || kind === 'timeout')
    return `check that the server${endpoint ? ` at ${endpoint}` : ''} runs and can be reached from this machine (model.${role}.base_url)`;
  if (kind === 'server') return 'the provider failed: try again later, or check its status';
  return `check model.${role}.backend (${rc.backend}), model.${role}.model (${rc.model || 'the backend default'}), ${endpoint ? `model.${role}.base_url (${endpoint}), ` : ''}and ${key}`;
}

async function checkRole(role: Role, rc: RoleConfig, config: Config, options: PreflightOptions): Promise<RoleCheck> {
  const started = performance.now();
  const { ModelStack, buildBackendModel } = await import('../../model/stack.ts');
  const { InfraError } = await import('../../model/types.ts');
  const environment = options.environment ?? process.env;
  const base = { role, backend: rc.backend, model: rc.model };
  const ms = () => Math.round(performance.now() - started);
  let inner;
  try {
    inner = await buildBackendModel(role, rc, config, environment);
  } catch (err) {
    return {
      ...base,
      ok: false,
      message: errorMessage(err),
      fix: fixFor(role, rc, rc.base_url || undefined, undefined),
      ms: ms(),
    };
  }
  const endpoint = (inner as { url?: string }).url;
  if (inner.id.startsWith('sim:'))
    return { ...base, ok: true, message: 'the offline simulator: nothing to reach, nothing to pay', ms: ms() };
  const quick: RoleConfig = {
    ...rc,
    max_retries: 0,
    timeout_s: Math.min(rc.timeout_s, (options.timeoutMs ?? 20_000) / 1000),
  };
  const stack = new ModelStack({ ...config, cache: { ...config.cache, mode: 'off' } }, { environment });
  try {
    const model = stack.wrap(role, inner, quick, { cached: false });
    await model.complete({
      purpose: 'preflight',
      messages: [{ role: 'user', content: 'Reply with the word OK.' }],
      maxOutputTokens: CHECK_TOKENS,
    });
    return { ...base, endpoint, ok: true, message: `answered in ${ms()} ms`, ms: ms() };
  } catch (err) {
    // It answered: a rate limit, or a reply cut off or left empty by the tiny token cap (a model that reasons first), still proves the endpoint, the key and the model.
    if (
      err instanceof InfraError &&
      (err.kind === 'rate_limit' || err.kind === 'bad_response' || err.kind === 'truncated')
    ) {
      return { ...base, endpoint, ok: true, message: `reachable (${errorMessage(err)})`, ms: ms() };
    }
    const kind = err instanceof InfraError ? err.kind : undefined;
    return {
      ...base,
      endpoint,
      ok: false,
      message: errorMessage(err),
      fix: fixFor(role, rc, endpoint, kind),
      ms: ms(),
    };
  } finally {
    stack.close();
  }
}

/** The data, the settings and every role the run calls, checked; nothing is written. */
export async function preflightRun(loaded: LoadedConfig, options: PreflightOptions = {}): Promise<PreflightReport> {
  const { config } = loaded;
  const { buildEnv } = await import('../../envs/build.ts');
  const data: PreflightReport['data'] = { ok: false, message: '' };
  const settings: PreflightReport['settings'] = { ok: false, warnings: [] };
  const loadData = buildEnv(loaded).then(
    ({ env, splits }) => {
      const sizes = { train: splits.train.length, val: splits.val.length, test: splits.test.length };
      Object.assign(data, {
        ok: true,
        message: `env ${env.name}: ${sizes.train} train, ${sizes.val} val, ${sizes.test} test items`,
        sizes,
      });
      settings.warnings.push(...(splits.warnings ?? []));
      try {
        settings.warnings.push(...preflight(config, sizes));
        settings.ok = true;
      } catch (err) {
        settings.message = errorMessage(err);
      }
      return env;
    },
    (err: unknown) => {
      data.message = errorMessage(err);
      settings.message = 'not checked: the data did not load';
      return undefined;
    },
  );
  const roles = await Promise.all([
    checkRole('target', config.model.target, config, options),
    checkRole('optimizer', config.model.optimizer, config, options),
  ]);
  const env = await loadData;
  // The judge is called only by envs that score with it; it is checked when it is a model of its own.
  const judge = config.model.judge as RoleConfig;
  if (
    env?.usesJudge &&
    (judge.backend !== config.model.optimizer.backend ||
      judge.model !== config.model.optimizer.model ||
      judge.base_url !== config.model.optimizer.base_url)
  ) {
    roles.push(await checkRole('judge', judge, config, options));
  }
  return { ok: data.ok && settings.ok && roles.every((r) => r.ok), data, settings, roles };
}
