/**
 * The agent CLIs as backends. As the target, `codex_exec`, `claude_code_exec`, `copilot_exec`
 * and `cursor_exec` run the task as an agent in a workspace with the skill installed; in the
 * optimizer or judge role the first three answer as chat models (Cursor runs only as the target,
 * as in the original). `claude_chat`, `copilot_chat` and `codex` are the CLIs as chat models in
 * every role. Each backend's `options` are checked by its schema below.
 */
import { z } from 'zod';
import type { RoleConfig } from '../../config/schema.ts';
import { priceOf } from '../prices.ts';
import { parseOptions } from '../providers/settings.ts';
import { registerBackend, type BackendContext, type BackendSpec } from '../registry.ts';
import { FatalModelError, type ChatModel } from '../types.ts';
import { ClaudeCodeHarness } from './claude-code.ts';
import { CliChatModel } from './cli-chat-model.ts';
import type { CliHarness, HarnessSettings } from './cli-harness.ts';
import { CodexHarness } from './codex.ts';
import { CopilotHarness } from './copilot.ts';
import { CursorHarness } from './cursor.ts';
import { HarnessChatModel } from './harness-model.ts';

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
  skill_name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'lower-case letters, digits and hyphens, at most 64')
    .default('skillopt-target'),
  skill_description: z.string().min(1).default('How to do the task in this folder well. Read it before you start.'),
  /** Keep each rollout's workspace (under the temp directory) to inspect it. */
  keep_workspace: z.boolean().default(false),
};

const CodexOptions = z.object({ ...common, config: z.record(z.string(), z.unknown()).default({}) }).strict();
const ClaudeOptions = z.object({ ...common, tools: z.array(z.string()).default(['Bash', 'Read', 'Glob', 'Grep', 'Skill']) }).strict();
const CopilotOptions = z
  .object({ ...common, provider_type: z.enum(['openai', 'azure', 'anthropic']).default('openai'), wire_api: z.enum(['completions', 'responses']).default('responses') })
  .strict();
const CursorOptions = z.object(common).strict();

type Common = z.infer<z.ZodObject<typeof common>>;

function settings(rc: RoleConfig, ctx: BackendContext, o: Common): HarnessSettings {
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
  };
}

function agent(backend: string, harness: CliHarness, rc: RoleConfig, o: Common): ChatModel {
  return new HarnessChatModel(harness, {
    backend,
    model: rc.model,
    skillInstall: o.skill_install,
    skillName: o.skill_name,
    skillDescription: o.skill_description,
    timeoutMs: rc.timeout_s * 1000,
    ...(priceOf(rc.model, rc.price) ? { price: priceOf(rc.model, rc.price)! } : {}),
    keepWorkspace: o.keep_workspace,
  });
}

function chat(backend: string, harness: CliHarness, rc: RoleConfig): ChatModel {
  return new CliChatModel(harness, { backend, model: rc.model, timeoutMs: rc.timeout_s * 1000, ...(priceOf(rc.model, rc.price) ? { price: priceOf(rc.model, rc.price)! } : {}) });
}

type Options<S extends z.ZodType> = z.infer<S> & Common;

/** An agent as the target; as optimizer or judge a chat model, or refused (`targetOnly`). */
function execBackend<S extends z.ZodType>(name: string, aliases: string[], schema: S, make: (s: HarnessSettings, o: Options<S>) => CliHarness, targetOnly = false): BackendSpec {
  return {
    name,
    aliases,
    defaultModel: '',
    optionsSchema: schema as unknown as z.ZodObject,
    create(rc, ctx) {
      if (targetOnly && ctx.role !== 'target') throw new FatalModelError(`model.${ctx.role}: ${name} runs only as the target; choose another backend for the ${ctx.role}`);
      const o = parseOptions(schema, rc, ctx, name) as Options<S>;
      const harness = make(settings(rc, ctx, o), o);
      return ctx.role === 'target' ? agent(name, harness, rc, o) : chat(name, harness, rc);
    },
  };
}

/** A chat model in every role. */
function chatBackend<S extends z.ZodType>(name: string, schema: S, make: (s: HarnessSettings, o: Options<S>) => CliHarness): BackendSpec {
  return {
    name,
    aliases: [],
    defaultModel: '',
    optionsSchema: schema as unknown as z.ZodObject,
    create(rc, ctx) {
      const o = parseOptions(schema, rc, ctx, name) as Options<S>;
      return chat(name, make(settings(rc, ctx, o), o), rc);
    },
  };
}

const codex = (s: HarnessSettings, o: Options<typeof CodexOptions>) => new CodexHarness(s, o.config);
const claude = (s: HarnessSettings, o: Options<typeof ClaudeOptions>) => new ClaudeCodeHarness(s, o.tools);
const copilot = (s: HarnessSettings, o: Options<typeof CopilotOptions>) => new CopilotHarness(s, { type: o.provider_type, wireApi: o.wire_api });

export const AGENT_BACKENDS: BackendSpec[] = [
  execBackend('codex_exec', ['codex_cli'], CodexOptions, codex),
  execBackend('claude_code_exec', ['claude_code'], ClaudeOptions, claude),
  execBackend('copilot_exec', ['copilot'], CopilotOptions, copilot),
  execBackend('cursor_exec', ['cursor', 'cursor_agent'], CursorOptions, (s) => new CursorHarness(s), true),
  chatBackend('claude_chat', ClaudeOptions, claude),
  chatBackend('copilot_chat', CopilotOptions, copilot),
  chatBackend('codex', CodexOptions, codex),
];

/** Registers the agent backends (the model stack imports this once the config knows their names). */
export function registerAgentBackends(): void {
  for (const spec of AGENT_BACKENDS) registerBackend(spec);
}
