/**
 * `env.name: triggers`: does the skill load when it should? Each item is a query of a trigger
 * eval set (`trigger-set.ts`), sent as the user's message to a target that has the skill
 * installed among other skills (`distractors.ts`) and is never told to read it. An agent target
 * installs them all where it reads skills and its trace says whether it opened the skill; a chat
 * model is given the skills list and a `Skill` tool, and loading is its call of that tool. A
 * rollout scores 1 when the skill loaded exactly when it should have; precision, recall and F1
 * over the rollouts are `metrics.ts`. A should-trigger query with an `answer` has its task scored
 * too: the agent runs on to its reply (a chat model gets the skill's text as the tool's result
 * and answers), and the rollout scores the reply's score when the skill loaded, else 0. Without
 * an answer an agent's run ends once the skill loads: that is all the rollout needs.
 */
import path from 'node:path';
import { z } from 'zod';
import type { EnvConfig } from '../../config/schema.ts';
import { UserError } from '../../errors.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import { envPrompt } from '../prompts.ts';
import { listedText, type SkillListed, skillBody, skillListing } from '../../skill/agent-skill.ts';
import { addUsage, type ChatRequest, type ChatResponse, type SkillListing, type ToolSpec } from '../../model/types.ts';
import { envOptions } from '../options.ts';
import { buildScorer, ScorerSchema } from '../scoring/scorer.ts';
import type { Score, Scorer } from '../scoring/types.ts';
import { registerEnv } from '../registry.ts';
import type { Env, EnvContext, Item, RolloutContext, Trajectory } from '../types.ts';
import { distractorSkills } from './distractors.ts';
import { readTriggerSet, splitTriggers, type TriggerQuery } from './trigger-set.ts';

export const TriggersOptionsSchema = z.object({
  /** Share of each kind of query (should / should not trigger) held out: half gates (val), half is the test. */
  held_out: z.number().min(0).max(0.9).default(0.4),
  /** `shipped`: install the shipped set of other skills beside the one under test; `none`: only `distractor_skills`. */
  distractors: z.enum(['shipped', 'none']).default('shipped'),
  /** More skills to install beside it: folders, `.skill` archives or installed skills (`claude:pdf`). */
  distractor_skills: z.array(z.string().min(1)).default([]),
  /** Run a set that still holds drafted queries (`"draft": true`), unreviewed; refused otherwise. */
  accept_unreviewed: z.boolean().default(false),
  /** How the reply to a should-trigger query with an `answer` is scored (the scorers of the `tasks` env); queries without one score activation alone. */
  scorer: ScorerSchema.prefault({ type: 'contains' }),
});
export type TriggersOptions = z.infer<typeof TriggersOptionsSchema>;

const SKILL_TOOL = 'Skill';

function skillTool(): ToolSpec {
  return {
    name: SKILL_TOOL,
    description: loadPrompt('activation/skill_tool').trim(),
    parameters: {
      type: 'object',
      properties: { skill: { type: 'string', description: 'The name of the skill to load.' } },
      required: ['skill'],
      additionalProperties: false,
    },
  };
}

/** The skills as Claude Code lists them to its model: `- name: description - when_to_use`, one a line. */
export function skillsList(skills: (SkillListed & { name: string })[]): string {
  return [...skills]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((s) => `- ${s.name}: ${listedText(s).replace(/\s+/g, ' ').trim()}`)
    .join('\n');
}

/** The names of the skills a chat reply loaded through the `Skill` tool. */
function chatLoads(res: ChatResponse): string[] {
  return (res.toolCalls ?? [])
    .filter((c) => c.name === SKILL_TOOL)
    .map((c) => (c.input as { skill?: unknown } | null)?.skill)
    .filter((s): s is string => typeof s === 'string');
}

/** The skills an agent's run loaded other than the one under test (by the `Skill` tool, or a read of their SKILL.md). */
function agentOtherLoads(res: ChatResponse, others: SkillListing[]): string[] {
  const steps = res.trace?.steps ?? [];
  return others
    .map((o) => o.name)
    .filter((name) =>
      steps.some((s) => (s.tool === SKILL_TOOL && s.input === name) || s.input.includes(`/${name}/SKILL.md`)),
    );
}

export class TriggersEnv implements Env {
  readonly name = 'triggers';
  readonly analystGuide = envPrompt('triggers', 'analyst');
  private distractors?: SkillListing[];
  private scorer?: Promise<Scorer>;
  /** A judge scores the replies of queries with answers (`env.scorer.type: judge`). */
  readonly usesJudge: boolean;

  constructor(
    private readonly config: EnvConfig,
    private readonly o: TriggersOptions,
    private readonly ctx: EnvContext,
  ) {
    this.usesJudge = o.scorer.type === 'judge';
  }

  async load() {
    if (!this.config.data_path)
      throw new UserError('env.data_path is not set: it names the trigger eval set (skill-creator JSON, JSONL or CSV)');
    const file = this.ctx.resolvePath('data_path', this.config.data_path);
    const queries = await readTriggerSet(file);
    const drafts = queries.filter((q) => q.draft).length;
    if (drafts && !this.o.accept_unreviewed)
      throw new UserError(
        `${file}: ${drafts} of its ${queries.length} queries are drafts no one has reviewed ("draft": true). Read each, fix or delete it and remove the mark, or run with --accept-unreviewed (env.accept_unreviewed: true)`,
      );
    const splits = splitTriggers(queries, this.o.held_out, this.config.split_seed);
    if (this.config.limit > 0)
      for (const s of ['train', 'val', 'test'] as const) splits[s] = splits[s].slice(0, this.config.limit);
    return splits;
  }

  taskTypes(): string[] {
    return ['should_trigger', 'should_not_trigger'];
  }

  private others(skillName: string): SkillListing[] {
    this.distractors ??= distractorSkills(
      { shipped: this.o.distractors === 'shipped', extra: this.o.distractor_skills, baseDir: this.ctx.configDir },
      skillName,
    );
    return this.distractors;
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const q = item as TriggerQuery;
    const listing = skillListing(skill);
    if (!listing.name || !listing.description)
      throw new UserError(
        'the triggers env measures when a skill loads from its name and description: the skill needs front matter with both',
      );
    const others = this.others(listing.name);
    // The task is scored where the skill should serve the query and the set says what a reply must give.
    const scored = q.should_trigger && q.answer !== undefined;
    const base: ChatRequest = {
      purpose: 'rollout',
      messages: [{ role: 'user', content: q.query }],
      skill,
      activation: { others, ...(scored ? { toAnswer: true } : {}) },
      ...(ctx.sample !== undefined ? { sample: ctx.sample } : {}),
      ...(q.files?.length ? { workspaceFiles: q.files.map((f) => ({ path: path.basename(f), source: f })) } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    };
    let req = base;
    if (!ctx.target.agentic) {
      const listed = [listing, ...others.map((o) => skillListing(o.markdown))];
      const skills = listed.filter((s): s is SkillListed & { name: string } => Boolean(s.name && s.description));
      req = {
        ...base,
        system: fill(loadPrompt('activation/chat_skills'), { skills: skillsList(skills) }),
        tools: [skillTool()],
      };
    }
    const res = await ctx.target.complete(req);
    const loadedNames = ctx.target.agentic ? [] : chatLoads(res);
    const loaded = ctx.target.agentic
      ? Boolean(res.trace?.package?.read.includes('SKILL.md'))
      : loadedNames.includes(listing.name);
    const instead = ctx.target.agentic ? agentOtherLoads(res, others) : loadedNames.filter((n) => n !== listing.name);
    if (!scored) return activationTrajectory(q, { loaded, instead, res, system: req.system });
    const reply = loaded && !ctx.target.agentic ? await this.answerWithSkill(req, res, skill, ctx) : res;
    const task = await this.scoreTask(q, reply.text, ctx);
    return activationTrajectory(q, { loaded, instead, res: reply, system: req.system, task });
  }

  /** A chat model that called the `Skill` tool gets the skill's text as its result, and answers. */
  private async answerWithSkill(
    req: ChatRequest,
    res: ChatResponse,
    skill: string,
    ctx: RolloutContext,
  ): Promise<ChatResponse> {
    const call = (res.toolCalls ?? []).find((c) => c.name === SKILL_TOOL)!;
    const next = await ctx.target.complete({
      ...req,
      messages: [
        ...req.messages,
        { role: 'assistant', content: res.text, toolCalls: res.toolCalls ?? [] },
        ...(res.toolCalls ?? []).map((c) => ({
          role: 'tool' as const,
          toolCallId: c.id,
          toolName: c.name,
          content: c === call ? skillBody(skill) : 'That skill is not needed for this request.',
        })),
      ],
    });
    return { ...next, usage: addUsage(res.usage, next.usage) };
  }

  private async scoreTask(q: TriggerQuery, reply: string, ctx: RolloutContext): Promise<Score> {
    this.scorer ??= buildScorer(this.o.scorer, this.ctx);
    const scorer = await this.scorer;
    return scorer(
      { prediction: reply, golds: q.answer!, expected: q.answer, item: q, task: q.query, reply },
      { judge: ctx.judge, sample: ctx.sample, signal: ctx.signal },
    );
  }
}

/** A rollout's result: scored 1 when the skill loaded exactly when it should have. */
export function activationTrajectory(
  q: TriggerQuery,
  r: { loaded: boolean; instead: string[]; res: ChatResponse; system?: string; task?: Score },
): Trajectory {
  const rightLoad = r.loaded === q.should_trigger;
  // Activation × task success: a query whose task is scored counts the reply's score, once the skill loaded.
  const hard = rightLoad ? (r.task?.hard ?? 1) : 0;
  const soft = rightLoad ? (r.task?.soft ?? 1) : 0;
  const insteadText = r.instead.length ? `; it loaded ${r.instead.join(', ')} instead` : '';
  const failReason = !rightLoad
    ? q.should_trigger
      ? `missed: the skill did not load for a query it serves${insteadText}`
      : `false trigger: the skill loaded for a query it does not serve${r.instead.length ? ` (it also loaded ${r.instead.join(', ')})` : ''}`
    : hard < 1
      ? `wrong answer: the skill loaded, but the reply did not give the expected answer (${r.task!.metric ?? 'score'} ${r.task!.hard})`
      : undefined;
  const said = r.loaded ? 'loaded' : 'not loaded';
  const taskLines = r.task ? `\nexpected answer: ${q.answer!.join(' | ')}\ntask score: ${r.task.hard}` : '';
  return {
    id: q.id,
    hard,
    soft,
    taskType: q.type,
    task: q.query,
    predicted: r.task ? `${said}; replied: ${r.res.text}` : said,
    expected: q.should_trigger ? `loaded${r.task ? `; answer: ${q.answer!.join(' | ')}` : ''}` : 'not loaded',
    ...(failReason ? { failReason } : {}),
    feedback: `[ACTIVATION]\nshould load: ${q.should_trigger ? 'yes' : 'no'}\nloaded: ${r.loaded ? 'yes' : 'no'}${r.instead.length ? `\nother skills loaded: ${r.instead.join(', ')}` : ''}${taskLines}`,
    conversation: [
      ...(r.system ? [{ role: 'system' as const, content: r.system }] : []),
      { role: 'user', content: q.query },
      { role: 'assistant', content: r.res.text },
    ],
    ...(r.system ? { systemPrompt: r.system } : {}),
    userPrompt: q.query,
    usage: r.res.usage,
    ...(r.res.trace ? { traces: [r.res.trace] } : {}),
    activation: { should: q.should_trigger, loaded: r.loaded, ...(r.task ? { task: r.task.hard } : {}) },
  };
}

registerEnv({
  name: 'triggers',
  optionsSchema: TriggersOptionsSchema,
  create: (config, ctx) => new TriggersEnv(config, envOptions(TriggersOptionsSchema, config), ctx),
});
