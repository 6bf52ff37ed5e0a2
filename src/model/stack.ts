/**
 * The models of a run, one per role, each built from its backend and wrapped so that every
 * call goes through the same path: the ledger (and the run's replay of recorded calls).
 */
import type { Config, RoleConfig } from '../config/schema.ts';
import { FatalModelError, type ChatModel, type Role } from './types.ts';
import { Ledger, LedgerModel } from './ledger.ts';
import { getBackend } from './registry.ts';
import './backends.ts';

export interface RoleModels {
  target: ChatModel;
  optimizer: ChatModel;
  judge: ChatModel;
  ledger: Ledger;
}

export interface StackOptions {
  /** The run's calls.jsonl (undefined: no record on disk). */
  ledgerFile?: string;
  environment?: Record<string, string | undefined>;
  /** Override a role's model (tests, evaluation across targets). */
  override?: Partial<Record<Role, ChatModel>>;
}

export async function buildBackendModel(role: Role, rc: RoleConfig, config: Config, environment: Record<string, string | undefined>): Promise<ChatModel> {
  const spec = getBackend(rc.backend);
  if (!spec) throw new FatalModelError(`unknown backend '${rc.backend}' for model.${role}`);
  return spec.create(rc, { role, environment, reasoningEffort: config.model.reasoning_effort, seed: config.train.seed });
}

export async function buildRoleModels(config: Config, options: StackOptions = {}): Promise<RoleModels> {
  const ledger = new Ledger(options.ledgerFile);
  const environment = options.environment ?? process.env;
  const make = async (role: Role, rc: RoleConfig) =>
    new LedgerModel(options.override?.[role] ?? (await buildBackendModel(role, rc, config, environment)), ledger, role);
  return {
    target: await make('target', config.model.target),
    optimizer: await make('optimizer', config.model.optimizer),
    judge: await make('judge', config.model.judge as RoleConfig),
    ledger,
  };
}
