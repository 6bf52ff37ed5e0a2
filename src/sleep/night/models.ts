/**
 * The models of a night: the Sleep config's `model` section (a training config's, role by role)
 * with `--backend`, resolved as a training config's roles are, and built by the one model stack
 * (ledger, response cache, pools, retries, admission under the night's budget). `--backend
 * handoff` needs no key: every role is the handoff model, which writes prompts to files and
 * reads the answers back.
 */
import type { LoadedSleepConfig } from '../config.ts';
import { validateRoleOptions } from '../../config/load.ts';
import { resolveJudge, resolveRoles } from '../../config/roles.ts';
import { ConfigSchema, type Config } from '../../config/schema.ts';
import type { Sources } from '../../config/tree.ts';
import { UserError } from '../../errors.ts';
import type { OptimizerContext } from '../../engine/optimizer-model/ask.ts';
import { budgetExceeded, unpricedBudget } from '../../engine/budget-limits.ts';
import { ModelStack } from '../../model/stack.ts';
import { RunStop, type ChatModel, type ReasoningEffort } from '../../model/types.ts';
import { HandoffModel } from './handoff.ts';

export interface ModelChoice {
  /** A training config holding the night's models, budget and cache. */
  config: Config;
  handoff: boolean;
  /** Whether a backend was named (config or flag); without one a night cannot run. */
  chosen: boolean;
  /** What the models are, in words. */
  describe: string;
}

export const NO_BACKEND =
  'no model to learn with: choose one with --backend (handoff: no key, you answer the prompts with your own agent; sim: the offline simulator, for a trial; or a backend such as openai_chat, anthropic, openai_compatible), or set model.backend in the Sleep config';

/**
 * The night's models from the config and `--backend NAME[:MODEL]` (which wins). Roles are
 * resolved and checked only when a backend is named: a harvest or a dry run needs none.
 */
export function chooseModels(
  loaded: Pick<LoadedSleepConfig, 'config' | 'sources' | 'file'>,
  flag?: string,
  budget: Partial<Config['budget']> = {},
): ModelChoice {
  const sc = loaded.config;
  const model = structuredClone(sc.model);
  const sources: Sources = new Map(loaded.sources);
  const handoff = flag?.trim().toLowerCase() === 'handoff';
  if (flag && !handoff) {
    const [name, ...rest] = flag.split(':');
    model.backend = name!.trim();
    model.target.backend = '';
    model.optimizer.backend = '';
    sources.set('model.backend', { source: '--backend', written: flag });
    const m = rest.join(':').trim();
    if (m) {
      model.target.model = m;
      model.optimizer.model = m;
    }
  }
  const config = ConfigSchema.parse({
    model,
    budget: { ...sc.budget, ...budget },
    cache: sc.cache,
    train: { seed: sc.mine.seed },
  });
  const chosen =
    handoff || Boolean(model.backend.trim() || model.target.backend.trim() || model.optimizer.backend.trim());
  if (chosen && !handoff) {
    resolveRoles(config, sources);
    resolveJudge(config, sources);
    validateRoleOptions(config, sources);
  }
  const m = config.model;
  const describe = handoff
    ? 'handoff (prompts written to files, answered by you)'
    : chosen
      ? m.target.backend === m.optimizer.backend && m.target.model === m.optimizer.model
        ? `${m.target.backend}:${m.target.model}`
        : `target ${m.target.backend}:${m.target.model}, optimizer ${m.optimizer.backend}:${m.optimizer.model}`
      : 'none chosen';
  return { config, handoff, chosen, describe };
}

const BUDGET_FLAGS: Record<string, string> = {
  'budget.max_calls': '--budget-calls',
  'budget.max_tokens': '--budget-tokens',
  'budget.max_usd': '--budget-usd',
  'budget.max_minutes': '--budget-minutes',
};

/** The stop of a night whose budget is reached (a night is not resumed: it is run again). */
function nightBudgetStop(...args: Parameters<typeof budgetExceeded>): RunStop | undefined {
  const reached = budgetExceeded(...args);
  if (!reached) return undefined;
  const flag = BUDGET_FLAGS[reached.key];
  return new RunStop(
    `the night's budget is reached: ${reached.message}${flag ? ` (raise it with ${flag})` : ''}.`,
    'budget',
    { key: reached.key, limit: reached.limit },
  );
}

export interface NightModels {
  target: ChatModel;
  judge: ChatModel;
  opt: OptimizerContext;
  stack: ModelStack;
  handoff?: HandoffModel;
  close(): void;
}

export interface BuildOptions {
  /** The night's calls.jsonl. */
  ledgerFile?: string;
  environment?: Record<string, string | undefined>;
  /** Where the handoff prompts and answers live. */
  handoffDir?: string;
  /** Minutes the night has run, for `budget.max_minutes`. */
  elapsedMinutes: () => number;
  warn: (message: string) => void;
  /** Models to use instead of building them (tests); they go through the same stack. */
  override?: Partial<Record<'target' | 'optimizer' | 'judge', ChatModel>>;
  fetch?: typeof fetch;
}

export async function buildNightModels(choice: ModelChoice, o: BuildOptions): Promise<NightModels> {
  if (!choice.chosen) throw new UserError(NO_BACKEND);
  const { config } = choice;
  const handoff = choice.handoff ? new HandoffModel(o.handoffDir ?? '') : undefined;
  const override = handoff ? { target: handoff, optimizer: handoff, judge: handoff } : o.override;
  const stack = new ModelStack(config, {
    ledgerFile: o.ledgerFile,
    environment: o.environment,
    override,
    fetch: o.fetch,
    limit: (totals, inFlight) => nightBudgetStop(config.budget, totals, o.elapsedMinutes(), inFlight),
    onEvent: (e) => {
      if (e.type === 'log' && e.level === 'warn') o.warn(e.message);
    },
  });
  const target = await stack.model('target');
  const optimizer = await stack.model('optimizer');
  const judge = await stack.model('judge');
  // A dollar cap must count every call: with a model of unknown price it would not hold.
  const priced = unpricedBudget(config.budget, [...stack.unpriced]);
  if (priced.error) {
    stack.close();
    throw new UserError(`${priced.error} (in the Sleep config)`);
  }
  if (priced.warning) o.warn(priced.warning);
  const opt: OptimizerContext = {
    optimizer,
    mode: 'patch',
    env: 'sleep',
    maxTokens: config.model.optimizer_max_completion_tokens,
    reasoningEffort: (config.model.optimizer.reasoning_effort || config.model.reasoning_effort || undefined) as
      | ReasoningEffort
      | undefined,
    // While the handoff waits for answers, calls fail by design: no warning for each.
    warn: (m) => {
      if (!handoff?.hasPending()) o.warn(m);
    },
  };
  return { target, judge, opt, stack, handoff, close: () => stack.close() };
}
