/** skillopt as a library: configuration, the skill document, models, environments and training. */
import './builtins.ts';
export { loadConfig, type LoadedConfig, type LoadOptions } from './config/load.ts';
export { ConfigSchema, type Config, type RoleConfig, type EnvConfig } from './config/schema.ts';
export { redact } from './config/redact.ts';
export { UserError, ConfigError } from './errors.ts';

export { loadSkill, skillHash, countTokens, unifiedDiff } from './skill/document.ts';
export {
  applyEdits,
  summariseReports,
  EditSchema,
  type Edit,
  type EditReport,
  type EditStatus,
} from './skill/edits.ts';
export * as regions from './skill/regions.ts';

export type { ChatModel, ChatRequest, ChatResponse, Message, Usage, Role, ToolSpec, ToolCall } from './model/types.ts';
export { InfraError, FatalModelError } from './model/types.ts';
export { registerBackend, getBackend, backendNames, type BackendSpec, type BackendContext } from './model/registry.ts';
export { completeJson, StructuredOutputError } from './model/structured.ts';
export { Ledger } from './model/ledger.ts';

export type { Env, EnvFactory, Item, Splits, Trajectory, RolloutContext } from './envs/types.ts';
export { registerEnv, getEnvFactory, envNames } from './envs/registry.ts';

export { train, evaluate, type TrainOptions, type EvaluateOptions } from './api.ts';
export { runTraining, type RunOptions } from './app/train.ts';
export { runEvaluation, type EvalOptions } from './app/eval/evaluate.ts';
export type { EvalSummary } from './app/eval/summary.ts';
export { materialize, registerMaterializer, type Materializer } from './envs/materialize.ts';
export type { TrainOutcome } from './engine/trainer.ts';
export { buildRoleModels, type RoleModels } from './model/stack.ts';

export { RunDir } from './run/layout.ts';
export { EventLog, readEvents, type RunEvent } from './run/events.ts';
export * from './run/records.ts';
