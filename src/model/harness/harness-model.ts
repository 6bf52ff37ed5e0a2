/**
 * An agent harness as a `ChatModel`, so it sits behind the same stack as every backend (pool,
 * rate limits, retries, ledger, budget, cache) and every env works through it unchanged. Each
 * call gets a fresh workspace: the request's skill installed where the agent reads skills (and
 * taken out of the prompt), the task as `task.md`, its images and workspace files; the agent runs
 * there, its final message is the reply text, with usage, cost and a compact trace.
 */
import type { Price } from '../../config/schema.ts';
import { costOf } from '../prices.ts';
import { validReply } from '../structured.ts';
import type { ChatModel, ChatRequest, ChatResponse, Usage } from '../types.ts';
import { agentPrompt, userMessage } from './prompt.ts';
import { installForActivation, installSkill, type SkillInstall } from './skill-install.ts';
import type { AgentHarness } from './types.ts';
import { createWorkspace, readReturned } from './workspace.ts';

export interface HarnessModelOptions {
  /** The backend name, for the model id: 'codex_exec'. */
  backend: string;
  /** '' = the CLI's default model. */
  model: string;
  skillInstall: SkillInstall;
  skillName: string;
  skillDescription: string;
  /** Per-run limit (ms); the scheduler's per-call timeout also ends a run. */
  timeoutMs?: number;
  /** For the cost when the CLI reports none. */
  price?: Price;
  /** Whether each call's cost is known: reported by the CLI, or from `price` (unset: unknown). */
  priced?: boolean;
  /** Keep each workspace after the run (to look at what the agent saw). */
  keepWorkspace?: boolean;
}

/**
 * A run's cost from its tokens; unknown (null) when it was stopped before the CLI reported any,
 * so the ledger counts it as a call of unknown cost rather than a free one.
 */
function runCost(out: { usage: Usage; usageComplete?: boolean }, price: Price | undefined): number | null {
  if (out.usageComplete === false && out.usage.input === 0) return null;
  return costOf(out.usage, price);
}

export class HarnessChatModel implements ChatModel {
  readonly id: string;
  readonly agentic = true;
  /** A package's files are installed beside its SKILL.md, except with `instructions` alone (then they go in the prompt). */
  readonly readsSkillFiles: boolean;
  readonly priced: boolean;
  /** What shapes the answers beyond the request, for the response-cache key. */
  readonly settings: Record<string, unknown>;

  constructor(
    private readonly harness: AgentHarness,
    private readonly o: HarnessModelOptions,
  ) {
    this.id = `${o.backend}:${o.model || 'default'}`;
    this.priced = o.priced ?? false;
    this.readsSkillFiles = o.skillInstall !== 'instructions';
    this.settings = {
      agent: harness.name,
      skill_install: o.skillInstall,
      skill_name: o.skillName,
      skill_description: o.skillDescription,
    };
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    const skill = req.activation
      ? installForActivation(
          req.skill ?? '',
          this.harness.layout,
          this.o.skillName,
          this.o.skillDescription,
          req.activation.others,
          req.skillFiles,
        )
      : installSkill(
          req.skill ?? '',
          this.harness.layout,
          this.o.skillInstall,
          this.o.skillName,
          this.o.skillDescription,
          req.skillFiles,
        );
    // An activation rollout is the user's message alone, as they would type it to the agent.
    const prompt = req.activation
      ? userMessage(req)
      : agentPrompt(
          req,
          skill.promptText,
          (req.workspaceFiles ?? []).map((f) => f.path),
        );
    const workspace = createWorkspace(
      this.harness.name,
      [
        ...skill.files,
        ...(req.activation ? [] : [{ path: 'task.md', content: prompt.taskFile }]),
        ...prompt.attachments.map((a) => ({ path: a.path, content: a.bytes })),
      ],
      req.workspaceFiles ?? [],
      { keep: this.o.keepWorkspace },
    );
    try {
      const out = await this.harness.run({
        workspace: workspace.dir,
        prompt: prompt.prompt,
        images: prompt.attachments.map((a) => a.path),
        ...(skill.dir ? { skillDir: skill.dir } : {}),
        // An activation rollout that scores nothing else has its result once the skill loads.
        ...(req.activation && !req.activation.toAnswer ? { untilLoaded: true } : {}),
        ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
      });
      const trace = req.returnFiles?.length
        ? { ...out.trace, returned: readReturned(workspace.dir, req.returnFiles) }
        : out.trace;
      const res: ChatResponse = {
        text: out.text,
        usage: out.usage,
        latencyMs: performance.now() - started,
        from: 'provider',
        costUsd: out.costUsd ?? runCost(out, this.o.price),
        trace,
      };
      if (req.schema) {
        const parsed = validReply(req.schema, out.text);
        if (parsed.ok) res.parsed = parsed.value;
      }
      return res;
    } finally {
      if (!this.o.keepWorkspace) workspace.remove();
    }
  }
}
