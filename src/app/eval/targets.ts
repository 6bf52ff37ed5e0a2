/**
 * The target models of an evaluation: the config's `model.target`, or each `--target
 * BACKEND:MODEL` (a transfer target, possibly an object of role settings), as role configs and
 * then as models built through the run's model stack.
 */
import { backendEntry, backendNames, canonicalBackend } from '../../config/catalog.ts';
import type { Config, Price, RoleConfig, TransferTarget } from '../../config/schema.ts';
import { rolePrice } from '../../model/prices.ts';
import { UserError } from '../../errors.ts';
import type { ModelStack } from '../../model/stack.ts';
import type { ChatModel } from '../../model/types.ts';
import { didYouMean } from '../../util/suggest.ts';

/** A role config for `BACKEND:MODEL`, keeping the config target's settings when the backend is the same. */
export function targetRole(spec: string, base: RoleConfig): RoleConfig {
  const colon = spec.indexOf(':');
  if (colon <= 0 || colon === spec.length - 1)
    throw new UserError(`--target ${spec}: expected BACKEND:MODEL, for example openai_compatible:qwen3-8b`);
  return roleOn(spec.slice(0, colon).trim(), spec.slice(colon + 1).trim(), base, `--target ${spec}`);
}

function roleOn(backendName: string, model: string, base: RoleConfig, label: string): RoleConfig {
  const backend = canonicalBackend(backendName);
  if (!backend)
    throw new UserError(
      `${label}: unknown backend '${backendName}'${didYouMean(backendName, backendNames())}; known backends: ${backendNames().join(', ')}`,
    );
  if (backend === base.backend) return { ...base, model };
  // Another backend: endpoint, key variable, options, price and batch API of the config's target do
  // not apply, nor its limits where the backend has its own (an agent CLI runs fewer calls at once, for longer).
  return {
    ...base,
    ...backendEntry(backend)?.roleDefaults,
    backend,
    model,
    base_url: '',
    api_key_env: '',
    options: {},
    price: undefined,
    batch: false,
  };
}

/** A transfer target's role: `BACKEND:MODEL`, or that role with the fields an object sets replaced. */
export function transferRole(target: TransferTarget, base: RoleConfig): RoleConfig {
  if (typeof target === 'string') return targetRole(target, base);
  const { backend, model = '', ...fields } = target;
  return { ...roleOn(backend, model, base, backend), ...fields };
}

/** The role of each target: the config's `model.target`, or each `--target`, with its model named. */
export function targetRoles(config: Config, targets: readonly TransferTarget[] | undefined): RoleConfig[] {
  const roles = targets?.length ? targets.map((t) => transferRole(t, config.model.target)) : [config.model.target];
  return roles.map((rc) => ({ ...rc, model: rc.model || (backendEntry(rc.backend)?.defaultModel ?? '') }));
}

/** Each target's prices, in the order `buildTargets` builds them. */
export function targetPrices(config: Config, targets: readonly TransferTarget[] | undefined): (Price | undefined)[] {
  return targetRoles(config, targets).map(rolePrice);
}

/** Whether any target sends its calls as batches (`batch: true`). */
export function batchedTargets(config: Config, targets: readonly TransferTarget[] | undefined): boolean {
  return targetRoles(config, targets).some((rc) => rc.batch);
}

/**
 * The target models, through the same stack as training's; each further target has a pool of
 * its own, and a target with `batch` sends its calls as batches. `given` replaces building them
 * (tests); they are wrapped all the same.
 */
export async function buildTargets(
  config: Config,
  targets: readonly TransferTarget[] | undefined,
  stack: ModelStack,
  given?: ChatModel[],
): Promise<ChatModel[]> {
  const poolOf = (i: number, id: string) => (i === 0 ? undefined : `target:${id}`);
  if (given?.length)
    return given.map((m, i) => stack.wrap('target', m, config.model.target, { pool: poolOf(i, m.id) }));
  const models: ChatModel[] = [];
  for (const [i, rc] of targetRoles(config, targets).entries())
    models.push(await stack.batchModel('target', rc, poolOf(i, `${rc.backend}:${rc.model}`)));
  const ids = models.map((m) => m.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) throw new UserError(`--target ${dup} is given twice`);
  return models;
}
