/**
 * The `sim` backend: the simulated target and optimizer behind the `ChatModel` interface, like
 * any other backend. Offline and deterministic; an optional latency makes it behave like a
 * remote model for benchmarks.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { optimizerRequest } from '../../protocol/optimizer.ts';
import { sleepRequest } from '../../protocol/sleep.ts';
import { countTokens } from '../../skill/document.ts';
import { APPENDIX_END, APPENDIX_START } from '../../skill/regions.ts';
import { Rng, seedFrom } from '../../util/random.ts';
import { registerBackend, type BackendContext } from '../registry.ts';
import type { AgentTrace } from '../harness/trace.ts';
import type { ChatModel, ChatRequest, ChatResponse, Message } from '../types.ts';
import type { PackageFiles } from '../../skill/package/package.ts';
import { DEFAULT_TRAITS, optimizerReply, type OptimizerTraits } from './optimizer.ts';
import { sleepReply } from './sleep.ts';
import {
  applicableSkill,
  CHECKED_CLAIM,
  claimsChecked,
  judgeReply,
  judgeRequest,
  leakedAnswer,
} from './audit-plants.ts';
import { simLoad } from './activation.ts';
import { listedText, skillListing } from '../../skill/agent-skill.ts';
import { opensFor } from './references.ts';
import type { Kind } from './rules.ts';
import { answer, recognise, simTask, type OpenedFile } from './world.ts';

export const SimOptionsSchema = z
  .object({
    /** Simulated latency of each call, in milliseconds. */
    latency_ms: z.number().nonnegative().default(0),
    /** Chance that an analyst call proposes a harmful directive. */
    harmful: z.number().min(0).max(1).default(DEFAULT_TRAITS.harmful),
    /** Chance that an analyst call proposes advice with no effect. */
    irrelevant: z.number().min(0).max(1).default(DEFAULT_TRAITS.irrelevant),
    /** Chance that a proposed rule is too vague for the target. */
    vague: z.number().min(0).max(1).default(DEFAULT_TRAITS.vague),
    /** Chance that an analyst sees a harmful directive as the cause of failures. */
    blame: z.number().min(0).max(1).default(DEFAULT_TRAITS.blame),
    /**
     * Chance that a failure analyst memorises a failed item's answer into the skill ("For <the
     * question> the answer is …"), which the simulated target then gives for that question: the
     * leak the audit must catch. 0 = never.
     */
    leak: z.number().min(0).max(1).default(0),
    /**
     * Chance that a failure analyst adds a rule that makes every reply claim it was checked
     * (`GAMING_RULE`): the scorer hack the audit's second scorer must catch under a gullible judge.
     */
    game: z.number().min(0).max(1).default(0),
    /** Chance that an analyst words its new rules for the requests that begin as its failed ones did: brittle rules. */
    brittle: z.number().min(0).max(1).default(0),
    /** As a judge: a reply that claims to be checked against the records is taken for correct. */
    gullible: z.boolean().default(false),
    /**
     * A stochastic target: the chance, per sample, that it slips on each convention (applies one
     * the skill does not state, or overlooks one it does). 0 = deterministic.
     */
    noise: z.number().min(0).max(1).default(0),
  })
  .strict();

const approxTokens = (text: string) => Math.ceil(text.length / 4);

function messageText(messages: Message[]): string {
  return messages
    .map((m) =>
      typeof m.content === 'string' ? m.content : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
    )
    .join('\n');
}

/** Token counts of recent skills: the target reads the same skill many times in a row. */
const tokenMemo = new Map<string, number>();
function memoTokens(text: string): number {
  let n = tokenMemo.get(text);
  if (n === undefined) {
    n = countTokens(text);
    if (tokenMemo.size > 64) tokenMemo.clear();
    tokenMemo.set(text, n);
  }
  return n;
}

/** The package's text files that the target opens for a task of `kind` under the skill `system`. */
function openedFiles(kind: Kind, system: string, files: PackageFiles | undefined): OpenedFile[] {
  if (!files?.size) return [];
  return opensFor(kind, system, files).map((path) => {
    const file = files.get(path)!;
    const text = file.kind === 'text' ? file.text : '';
    return { path, text, tokens: () => memoTokens(text) };
  });
}

/**
 * What the target did besides answering: the reference files it read, one read each, by package
 * path. It takes no time, so that a run's files stay the same from one run to the next.
 */
function readTrace(opened: OpenedFile[]): AgentTrace {
  return {
    agent: 'sim',
    steps: opened.map((f) => ({ tool: 'read', input: f.path, ok: true })),
    files: opened.map((f) => f.path),
    package: { read: opened.map((f) => f.path), ran: [] },
    errors: [],
    durationMs: 0,
    exitCode: 0,
  };
}

export class SimModel implements ChatModel {
  readonly id: string;
  /** Free. */
  readonly priced = true;
  /** The target opens a package's reference files itself, when its `SKILL.md` says to. */
  readonly readsSkillFiles = true;

  constructor(
    model: string,
    private readonly seed: number,
    private readonly latencyMs: number,
    private readonly traits: OptimizerTraits,
    /** The target's slip chance per convention and sample (`noise`). */
    private readonly noise = 0,
    private readonly gullible = false,
  ) {
    this.id = `sim:${model}`;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, { signal: req.signal });
    if (req.activation) return this.activation(req, started);
    const task = simTask(req.meta);
    const optimizer = optimizerRequest(req.meta);
    const sleepAsk = sleepRequest(req.meta);
    const judged = judgeRequest(req.meta);
    let text: string;
    let opened: OpenedFile[] = [];
    if (task) {
      const system = req.system ?? '';
      const start = system.indexOf(APPENDIX_START);
      const reminders =
        start >= 0
          ? recognise(system.slice(start, system.indexOf(APPENDIX_END, start) + 1 || undefined)).conventions
          : undefined;
      opened = openedFiles(task.task.fact.kind, system, req.skillFiles);
      const question = messageText(req.messages).trim();
      const leaked = leakedAnswer(system, question);
      const applied = applicableSkill(system, question);
      const read = opened.map((f) => ({ ...f, text: applicableSkill(f.text, question) }));
      text = `<answer>${leaked ?? answer(task.task, applied, { tokens: () => memoTokens(system), skillKey: system, sample: req.sample, reminders, noise: this.noise, seed: this.seed, opened: read })}</answer>`;
      if (claimsChecked(system)) text += `\n${CHECKED_CLAIM}`;
    } else if (judged) {
      text = judgeReply(judged, this.gullible);
    } else if (optimizer) {
      const rng = new Rng(seedFrom(this.seed, req.purpose, JSON.stringify(optimizer), req.sample ?? 0));
      text = JSON.stringify(optimizerReply(optimizer, rng, this.traits));
    } else if (sleepAsk) {
      text = sleepReply(sleepAsk, {
        system: req.system ?? '',
        tokens: () => memoTokens(req.system ?? ''),
        sample: req.sample ?? 0,
      });
    } else {
      throw new Error(
        `the sim backend answers only requests made by the sim env, a judge scorer, the trainer or Sleep (purpose '${req.purpose}' has no payload it knows)`,
      );
    }
    // Each reference file opened is read in full, as input.
    const input =
      approxTokens(req.system ?? '') +
      approxTokens(messageText(req.messages)) +
      opened.reduce((sum, f) => sum + approxTokens(f.text), 0);
    return {
      text,
      usage: { input, output: approxTokens(text), cached: 0, reasoning: 0 },
      latencyMs: performance.now() - started,
      from: 'provider',
      costUsd: 0,
      ...(opened.length ? { trace: readTrace(opened) } : {}),
    };
  }

  /** An activation rollout: the skill the simulated agent loads, as a `Skill` tool call, as a chat model would load it. */
  private activation(req: ChatRequest, started: number): ChatResponse {
    // Given the loaded skill's text, the simulated agent answers by it: its reply is what the skill says.
    const result = req.messages.find((m) => m.role === 'tool' && m.toolName === 'Skill');
    const loadedText = result?.role === 'tool' ? result.content : undefined;
    if (loadedText !== undefined)
      return {
        text: `Following the skill: ${loadedText}`,
        usage: {
          input: approxTokens(req.system ?? '') + approxTokens(loadedText),
          output: 40,
          cached: 0,
          reasoning: 0,
        },
        latencyMs: performance.now() - started,
        from: 'provider',
        costUsd: 0,
      };
    const listed = [req.skill ?? '', ...req.activation!.others.map((o) => o.markdown)].map(skillListing);
    // The simulated agent reads a skill's listing as Claude Code shows it: the description, then `when_to_use`.
    const skills = listed
      .filter((s) => s.name && s.description)
      .map((s) => ({ name: s.name!, description: listedText(s) }));
    const query = messageText(req.messages);
    const loads = simLoad(query, skills, { seed: this.seed, sample: req.sample ?? 0 });
    return {
      text: loads ? '' : 'Here is how I would go about it.',
      ...(loads
        ? { toolCalls: [{ id: `sim_${seedFrom(query, loads) >>> 0}`, name: 'Skill', input: { skill: loads } }] }
        : {}),
      usage: { input: approxTokens(req.system ?? '') + approxTokens(query), output: 8, cached: 0, reasoning: 0 },
      latencyMs: performance.now() - started,
      from: 'provider',
      costUsd: 0,
    };
  }
}

registerBackend({
  name: 'sim',
  aliases: ['simulator', 'offline'],
  defaultModel: 'sim-1',
  optionsSchema: SimOptionsSchema,
  create(role, ctx: BackendContext) {
    const o = SimOptionsSchema.parse(role.options);
    return new SimModel(
      role.model || 'sim-1',
      ctx.seed,
      o.latency_ms,
      {
        harmful: o.harmful,
        irrelevant: o.irrelevant,
        vague: o.vague,
        blame: o.blame,
        leak: o.leak,
        game: o.game,
        brittle: o.brittle,
      },
      o.noise,
      o.gullible,
    );
  },
});
