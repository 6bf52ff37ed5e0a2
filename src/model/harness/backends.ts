/**
 * The agent CLIs as backends. As the target, `codex_exec`, `claude_code_exec`, `copilot_exec`
 * and `cursor_exec` run the task as an agent in a workspace with the skill installed; in the
 * optimizer or judge role the first three answer as chat models (Cursor runs only as the target,
 * as in the original). `claude_chat`, `copilot_chat` and `codex` are the CLIs as chat models in
 * every role. Each backend's `options` are checked by its schema below. They register at import
 * (`src/builtins.ts`).
 */
import { z } from 'zod';
import { registerSecret } from '../../config/redact.ts';
import type { Price, RoleConfig } from '../../config/schema.ts';
import { priceOf } from '../prices.ts';
import { parseOptions } from '../providers/settings.ts';
import { skillDescriptionProblem, skillNameProblem } from '../../skill/agent-skill.ts';
import { registerBackend, type BackendContext, type BackendSpec } from '../registry.ts';
import { FatalModelError, type ChatModel } from '../types.ts';
import { ClaudeCodeHarness } from './claude-code.ts';
import { CliChatModel } from './cli-chat-model.ts';
import type { CliHarness, HarnessSettings } from './cli-harness.ts';
import { CodexHarness } from './codex.ts';
import { CopilotHarness } from './copilot.ts';
import { CursorHarness } from './cursor.ts';
import { HarnessChatModel } from './harness-model.ts';
import { DEFAULT_SKILL_DESCRIPTION } from './skill-install.ts';

/** A check of the Agent Skills rules, as a schema refinement whose message says what is wrong. */
function agentSkillRule(problem: (value: string) => string | undefined) {
  return (value: string, ctx: z.RefinementCtx) => {
    const wrong = problem(value);
    if (wrong) ctx.addIssue({ code: 'custom', message: wrong });
  };
}

const common = {
  /** The CLI binary: a path, or a name on PATH ('' = the CLI's usual name). */
  path: z.string().default(''),
  /** The CLI's configuration home: '' = a fresh one per run with your login, 'user' = yours, or a directory. */
  home: z.string().default(''),
  /** Variables set for the CLI. */
  env: z.record(z.string(), z.string()).default({}),
  /** Variables passed to the CLI from skillopt's environment (its login key, a proxy setting). */
  pass_env: z.array(z.string()).default([]),
  /** Let the agent change files in its workspace. */
  allow_writes: z.boolean().default(false),
  /** Extra command-line arguments. */
  extra_args: z.array(z.string()).default([]),
  /** 'skill': a skill folder, and the prompt says to read it; 'instructions': the agent's instructions file; 'both'. */
  skill_install: z.enum(['skill', 'instructions', 'both']).default('skill'),
  /** The installed skill's name and folder (Agent Skills rules: lower-case letters, digits and single hyphens, at most 64). */
  skill_name: z.string().superRefine(agentSkillRule(skillNameProblem)).default('skillopt-target'),
  /** The installed skill's description, which the agent chooses skills by (at most 1,024 characters, no `<` or `>`). */
  skill_description: z.string().superRefine(agentSkillRule(skillDescriptionProblem)).default(DEFAULT_SKILL_DESCRIPTION),
  /** Keep each rollout's workspace (under the temp directory) to inspect it. */
  keep_workspace: z.boolean().default(false),
};

const CodexOptions = z
  .object({
    ...common,
    /** Codex settings passed as `-c key=value`, after skillopt's own. */
    config: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
const ClaudeOptions = z
  .object({
    ...common,
    /** The tools the agent may use (`--tools`). */
    tools: z.array(z.string()).default(['Bash', 'Read', 'Glob', 'Grep', 'Skill']),
  })
  .strict();
const CopilotOptions = z
  .object({
    ...common,
    /** With `base_url`: the custom provider's kind. */
    provider_type: z.enum(['openai', 'azure', 'anthropic']).default('openai'),
    /** With `base_url`: the API the custom provider speaks. */
    wire_api: z.enum(['completions', 'responses']).default('responses'),
  })
  .strict();
const CursorOptions = z.object(common).strict();

type Common = z.infer<z.ZodObject<typeof common>>;

function settings(rc: RoleConfig, ctx: BackendContext, o: Common): HarnessSettings {
  // A key the CLI is given (its endpoint's) is a secret of the run like any other.
  if (rc.api_key_env) registerSecret(ctx.environment[rc.api_key_env]);
  return {
    path: o.path,
    model: rc.model,
    reasoningEffort: rc.reasoning_effort || ctx.reasoningEffort,
    environment: ctx.environment,
    home: o.home,
    env: o.env,
    passEnv: o.pass_env,
    allowWrites: o.allow_writes,
    extraArgs: o.extra_args,
    baseUrl: rc.base_url,
    apiKeyEnv: rc.api_key_env,
    ...(ctx.notice ? { onNote: ctx.notice } : {}),
  };
}

/**
 * What a call costs: the cost the CLI reports (Claude Code's `total_cost_usd`), else the price of
 * the role's model (its `price`, else the table), else unknown. A CLI left to choose its own
 * model has no known price.
 */
function pricing(harness: CliHarness, rc: RoleConfig): { price?: Price; priced: boolean } {
  const price = rc.model || rc.price ? priceOf(rc.model, rc.price) : undefined;
  return { ...(price ? { price } : {}), priced: harness.reportsCost || price !== undefined };
}

function agent(backend: string, harness: CliHarness, rc: RoleConfig, o: Common): ChatModel {
  return new HarnessChatModel(harness, {
    backend,
    model: rc.model,
    skillInstall: o.skill_install,
    skillName: o.skill_name,
    skillDescription: o.skill_description,
    timeoutMs: rc.timeout_s * 1000,
    keepWorkspace: o.keep_workspace,
    ...pricing(harness, rc),
  });
}

function chat(backend: string, harness: CliHarness, rc: RoleConfig): ChatModel {
  return new CliChatModel(harness, {
    backend,
    model: rc.model,
    timeoutMs: rc.timeout_s * 1000,
    ...pricing(harness, rc),
  });
}

type Options<S extends z.ZodType> = z.infer<S> & Common;

/**
 * Agents run one CLI process per call, each with its own model conversation: fewer at once
 * than API calls, more time each, and fewer retries (a retry reruns the whole task).
 */
export const AGENT_ROLE_DEFAULTS = { concurrency: 4, timeout_s: 600, max_retries: 2 } as const;

interface Described {
  name: string;
  aliases: string[];
  defaultModel: string;
}

/** An agent as the target; as optimizer or judge a chat model, or refused (`targetOnly`). */
function execBackend<S extends z.ZodType>(
  d: Described,
  schema: S,
  make: (s: HarnessSettings, o: Options<S>) => CliHarness,
  targetOnly = false,
): BackendSpec {
  return {
    ...d,
    optionsSchema: schema as unknown as z.ZodObject,
    roleDefaults: AGENT_ROLE_DEFAULTS,
    ...(targetOnly ? { targetOnly } : {}),
    create(rc, ctx) {
      if (targetOnly && ctx.role !== 'target')
        throw new FatalModelError(
          `model.${ctx.role}: ${d.name} runs only as the target; choose another backend for the ${ctx.role}`,
        );
      const o = parseOptions(schema, rc, ctx, d.name) as Options<S>;
      const harness = make(settings(rc, ctx, o), o);
      return ctx.role === 'target' ? agent(d.name, harness, rc, o) : chat(d.name, harness, rc);
    },
  };
}

/** A chat model in every role. */
function chatBackend<S extends z.ZodType>(
  d: Described,
  schema: S,
  make: (s: HarnessSettings, o: Options<S>) => CliHarness,
): BackendSpec {
  return {
    ...d,
    optionsSchema: schema as unknown as z.ZodObject,
    roleDefaults: AGENT_ROLE_DEFAULTS,
    create(rc, ctx) {
      const o = parseOptions(schema, rc, ctx, d.name) as Options<S>;
      return chat(d.name, make(settings(rc, ctx, o), o), rc);
    },
  };
}

const codex = (s: HarnessSettings, o: Options<typeof CodexOptions>) => new CodexHarness(s, o.config);
const claude = (s: HarnessSettings, o: Options<typeof ClaudeOptions>) => new ClaudeCodeHarness(s, o.tools);
const copilot = (s: HarnessSettings, o: Options<typeof CopilotOptions>) =>
  new CopilotHarness(s, { type: o.provider_type, wireApi: o.wire_api });

/**
 * The original's names, aliases and default models: `claude` is the Claude Code CLI (not the
 * Anthropic API, which is `anthropic`) and `openai` is Codex (the OpenAI API is `openai_chat`).
 */
export const AGENT_BACKENDS: BackendSpec[] = [
  execBackend({ name: 'codex_exec', aliases: [], defaultModel: 'gpt-5.5' }, CodexOptions, codex),
  execBackend({ name: 'claude_code_exec', aliases: [], defaultModel: 'claude-sonnet-4-6' }, ClaudeOptions, claude),
  execBackend({ name: 'copilot_exec', aliases: [], defaultModel: '' }, CopilotOptions, copilot),
  execBackend(
    { name: 'cursor_exec', aliases: ['cursor', 'cursor_agent'], defaultModel: 'composer-2.5' },
    CursorOptions,
    (s) => new CursorHarness(s),
    true,
  ),
  chatBackend({ name: 'claude_chat', aliases: ['claude'], defaultModel: 'claude-sonnet-4-6' }, ClaudeOptions, claude),
  chatBackend(
    { name: 'copilot_chat', aliases: ['copilot', 'copilot_cli', 'github_copilot'], defaultModel: '' },
    CopilotOptions,
    copilot,
  ),
  chatBackend({ name: 'codex', aliases: ['openai'], defaultModel: 'gpt-5.5' }, CodexOptions, codex),
];

for (const spec of AGENT_BACKENDS) registerBackend(spec);

/** The agent CLIs whose skill listing leaves out `when_to_use` (Claude Code reads it; so do chat targets, listed in its shape). */
const NO_WHEN_TO_USE = new Set(['codex_exec', 'copilot_exec', 'cursor_exec', 'cursor', 'cursor_agent']);

/** Whether a target of `backend` is shown a skill's `when_to_use` when it chooses skills. */
export function listsWhenToUse(backend: string): boolean {
  return !NO_WHEN_TO_USE.has(backend);
}
