/**
 * The shape shared by the single-turn QA benchmarks (SearchQA, LiveMathematicianBench, DocVQA):
 * items from the shared split loader, a prompt per item, one answer in `<answer>` tags, a
 * benchmark scorer. A benchmark supplies how a record becomes an item and how an item is
 * presented and scored; this class does the rest.
 */
import type { EnvConfig } from '../config/schema.ts';
import type { ImagePart, TextPart } from '../model/types.ts';
import type { RawRecord } from './data/read.ts';
import { loadSplits, type LoadedSplits } from './data/splits.ts';
import type { SplitName } from './types.ts';
import { envPrompt } from './prompts.ts';
import { askForAnswer, conversationOf, describeUser, scoredTrajectory } from './qa.ts';
import { TAG_RULE, type ExtractRule } from './scoring/extract.ts';
import type { Score } from './scoring/types.ts';
import { render } from './template.ts';
import type { Env, EnvContext, Item, RolloutContext, Trajectory } from './types.ts';

/** An item as the target sees it in one rollout, and how that rollout's answer is scored. */
export interface Presented {
  user: string | (TextPart | ImagePart)[];
  /** The task in a few words (the question), for the optimizer's summaries. */
  task: string;
  score(prediction: string, reply: string): Score;
  /** The expected answer as shown to the optimizer. */
  expected: unknown;
}

export interface QaEnvOptions {
  max_turns: number;
  max_completion_tokens?: number;
}

export const RETRY_MESSAGE =
  'Your reply did not contain a final answer inside <answer></answer> tags. Give the final answer now, inside the tags.';

/** `prompts/envs/<env>/system.md` with the skill inserted under a heading (nothing when the skill is blank). */
export function benchmarkSystem(env: string, skill: string): string {
  const skillSection = skill.trim() ? `## Skill\n\n${skill.trim()}` : '';
  return render(envPrompt(env, 'system'), { skill_section: skillSection })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export abstract class QaEnv implements Env {
  abstract readonly name: string;
  protected readonly rule: ExtractRule = TAG_RULE;
  protected types = new Set<string>();

  constructor(
    protected readonly config: EnvConfig,
    protected readonly options: QaEnvOptions,
    protected readonly ctx: EnvContext,
  ) {}

  get analystGuide(): string {
    return envPrompt(this.name, 'analyst');
  }

  abstract toItem(rec: RawRecord, split: SplitName | undefined): Item;
  abstract present(item: Item, ctx: RolloutContext): Presented | Promise<Presented>;

  /** Raw records for ratio mode, when the benchmark's raw layout is not one data file. */
  protected readRaw?(dataPath: string): Promise<RawRecord[]>;

  async load(): Promise<LoadedSplits> {
    const splits = await loadSplits(
      {
        env: this.name,
        config: this.config,
        resolve: this.ctx.resolvePath,
        missing: this.ctx.missingPath,
        outRoot: this.ctx.outRoot,
      },
      {
        toItem: (rec, split) => this.toItem(rec, split),
        ...(this.readRaw ? { readRaw: (p: string) => this.readRaw!(p) } : {}),
      },
    );
    for (const item of [...splits.train, ...splits.val, ...splits.test]) if (item.type) this.types.add(item.type);
    return splits;
  }

  taskTypes(): string[] {
    return [...this.types].sort();
  }

  system(skill: string): string {
    return benchmarkSystem(this.name, skill);
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const shown = await this.present(item, ctx);
    const system = this.system(skill);
    const asked = await askForAnswer(
      {
        system,
        skill,
        user: shown.user,
        rule: this.rule,
        maxTurns: this.options.max_turns,
        retryMessage: RETRY_MESSAGE,
        maxOutputTokens: this.options.max_completion_tokens,
      },
      ctx,
    );
    const score = shown.score(asked.extracted.answer, asked.reply);
    return scoredTrajectory({
      item,
      task: shown.task,
      system,
      user: describeUser(shown.user),
      asked,
      conversation: conversationOf(asked.messages),
      score,
      expected: shown.expected,
    });
  }
}
