/**
 * OfficeQA (reference B.7): questions about U.S. Treasury bulletins, answered in a tool loop.
 * The target gets three function tools over the bulletin text files (`glob`, `read`, `grep`,
 * see tools.ts), confined to the item's own source files, for up to `max_tool_turns` rounds;
 * the last round has no tools and asks for the answer. An agent target (Codex, Claude Code, …)
 * runs no loop of ours: the item's bulletins are copied into its workspace under `documents/`
 * and it searches them with its own tools. Hard = exact match and soft = token F1
 * after the numeric-aware normalisation. The gold source page text is not given to the target
 * unless `oracle_pages: true` (the original always gives it).
 */
import { z } from 'zod';
import { DataError } from '../data/errors.ts';
import { LeftOut } from '../data/left-out.ts';
import type { RawRecord } from '../data/read.ts';
import { loadSplits, type LoadedSplits } from '../data/splits.ts';
import { envOptions } from '../options.ts';
import { envPrompt } from '../prompts.ts';
import { benchmarkSystem } from '../qa-env.ts';
import { addUsage, askForAnswer, conversationOf, scoredTrajectory } from '../qa.ts';
import { render } from '../template.ts';
import { registerEnv } from '../registry.ts';
import { extractAnswer, ExtractSchema } from '../scoring/extract.ts';
import { exactMatch, tokenF1 } from '../scoring/metrics.ts';
import { officeqaNormalize } from '../scoring/normalize.ts';
import type { Score } from '../scoring/types.ts';
import type { ConversationEntry, Env, EnvContext, Item, RolloutContext, Trajectory } from '../types.ts';
import type { EnvConfig } from '../../config/schema.ts';
import type { Message, Usage } from '../../model/types.ts';
import { Corpus, resolveDocsRoots } from './corpus.ts';
import { oraclePages } from './oracle.ts';
import { DocTools, TOOL_SPECS } from './tools.ts';

export const OfficeQaOptions = z.object({
  /** Directories holding the bulletin text files (relative to the working directory or the config). */
  data_dirs: z.array(z.string()).default([]),
  /** Model calls at most per item; the last one is made without tools and asks for the answer. */
  max_tool_turns: z.number().int().min(1).default(12),
  /** Only local document tools are supported ('offline'). */
  search_mode: z.enum(['offline']).default('offline'),
  /** false: one call with no tools (useful only with oracle_pages). */
  use_local_tools: z.boolean().default(true),
  /** Give the target the parsed text of the gold source pages (the original does; it changes what is measured). */
  oracle_pages: z.boolean().default(false),
  /** List the item's source document URLs (with their page numbers) in the prompt, as the original does. */
  source_hints: z.boolean().default(true),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
});
type Options = z.infer<typeof OfficeQaOptions>;

const FIRST_ANSWER = ExtractSchema.parse({ which: 'first' });
const MAX_CANDIDATES_SHOWN = 20;

/** A list field as the data writes it: a list, a JSON list, lines, or comma-separated names. */
export function listField(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (Array.isArray(value))
    return value
      .map(String)
      .map((s) => s.trim())
      .filter(Boolean);
  const text = String(value).trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return listField(parsed);
    } catch {
      // not JSON
    }
  }
  const lines = text
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (lines.length > 1) return lines;
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function officeqaScore(prediction: string, gold: string): Score {
  if (!prediction.trim()) return { hard: 0, soft: 0, metric: 'EM' };
  const em = exactMatch(prediction, [gold], officeqaNormalize);
  const f1 = tokenF1(prediction, [gold], officeqaNormalize);
  return { hard: em, soft: f1, metric: 'EM', details: { em, f1 } };
}

export class OfficeQaEnv implements Env {
  readonly name = 'officeqa';
  private corpus?: Corpus;
  private types = new Set<string>();

  constructor(
    private readonly config: EnvConfig,
    private readonly o: Options,
    private readonly ctx: EnvContext,
  ) {}

  get analystGuide(): string {
    return envPrompt(this.name, 'analyst');
  }

  private getCorpus(): Corpus {
    this.corpus ??= new Corpus(resolveDocsRoots(this.o.data_dirs.map((d) => this.ctx.resolvePath('data_dirs', d))));
    return this.corpus;
  }

  /** An item, or `LeftOut` when a bulletin it names is not in the corpus (it cannot be answered here). */
  toItem(rec: RawRecord): Item | LeftOut {
    const f = rec.fields;
    const id = f.uid ?? f.id;
    if (id === undefined || id === null || id === '')
      throw new DataError("missing field 'uid' (or 'id')", rec.where, 'uid');
    if (typeof f.question !== 'string' || !f.question.trim())
      throw new DataError("missing field 'question'", rec.where, 'question');
    const gold = f.ground_truth ?? f.answer;
    if (gold === undefined || gold === null || String(gold).trim() === '')
      throw new DataError("missing field 'ground_truth' (or 'answer')", rec.where, 'ground_truth');
    const sourceFiles = listField(f.source_files);
    const { missing } = this.getCorpus().filesFor(sourceFiles);
    if (missing.length)
      return new LeftOut(
        String(id),
        `source file${missing.length > 1 ? 's' : ''} not in the document corpus: ${missing.join(', ')}`,
      );
    return {
      id: String(id),
      type: String(f.category ?? f.difficulty ?? 'officeqa'),
      question: f.question,
      ground_truth: String(gold),
      source_files: sourceFiles,
      source_docs: listField(f.source_docs),
    };
  }

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
        toItem: (rec) => this.toItem(rec),
        leftOutHint: () =>
          `The document corpus is ${this.getCorpus().roots.join(', ')}: put the missing bulletins there (or add their directory to env.data_dirs) to include those items`,
      },
    );
    for (const item of [...splits.train, ...splits.val, ...splits.test]) if (item.type) this.types.add(item.type);
    return splits;
  }

  taskTypes(): string[] {
    return [...this.types].sort();
  }

  userPrompt(item: Item, tools: DocTools, agent = false): { text: string; oracleChars: number } {
    const parts = [`## Question\n${item.question}`];
    let oracleChars = 0;
    if (this.o.oracle_pages) {
      const pages = oraclePages(item.source_docs as string[], item.source_files as string[], this.getCorpus().roots);
      oracleChars = pages.length;
      if (pages)
        parts.push(
          `## Source Pages\nThe parsed text of the pages that hold the evidence; treat it as the primary source.\n\n${pages}`,
        );
    }
    // An agent's prompt lists its workspace files itself.
    if (!agent) {
      const shown = tools.files.slice(0, MAX_CANDIDATES_SHOWN).map((f) => `- ${f.shown}`);
      if (tools.files.length > MAX_CANDIDATES_SHOWN)
        shown.push(`- … ${tools.files.length - MAX_CANDIDATES_SHOWN} more (use glob)`);
      parts.push(`## Candidate Files\n${shown.length ? shown.join('\n') : '- none'}`);
    }
    const docs = item.source_docs as string[];
    if (this.o.source_hints && docs.length) parts.push(`## Source Hints\n${docs.map((d) => `- ${d}`).join('\n')}`);
    return { text: parts.join('\n\n'), oracleChars };
  }

  /** The tool loop's turns; an agent target reads the bulletins in one run of its own. */
  maxTargetCalls(agentTarget: boolean): number {
    return agentTarget || !this.o.use_local_tools ? 1 : this.o.max_tool_turns;
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const corpus = this.getCorpus();
    const tools = new DocTools(corpus.roots, corpus.filesFor(item.source_files as string[]).files);
    if (ctx.target.agentic) return this.agentRollout(item, skill, tools, ctx);
    const system = benchmarkSystem(this.name, skill);
    const { text: user, oracleChars } = this.userPrompt(item, tools);
    const messages: Message[] = [{ role: 'user', content: user }];
    const conversation: ConversationEntry[] = [{ role: 'user', content: user }];
    let usage: Usage = { input: 0, output: 0, cached: 0, reasoning: 0 };
    let reply = '';
    let ended: string | undefined;
    const maxTurns = this.o.use_local_tools ? this.o.max_tool_turns : 1;
    for (let turn = 1; turn <= maxTurns; turn++) {
      const last = turn === maxTurns;
      if (last && this.o.use_local_tools && turn > 1) {
        const note = 'That was your last tool call: give your final answer now, inside <answer></answer> tags.';
        messages.push({ role: 'user', content: note });
        conversation.push({ role: 'user', content: note });
      }
      const res = await ctx.target.complete({
        purpose: 'rollout',
        system,
        messages: [...messages],
        ...(this.o.use_local_tools && !last ? { tools: TOOL_SPECS } : {}),
        maxOutputTokens: this.o.max_completion_tokens,
        sample: ctx.sample,
        signal: ctx.signal,
      });
      usage = addUsage(usage, res.usage);
      reply = res.text;
      const calls = !last && this.o.use_local_tools ? (res.toolCalls ?? []) : [];
      messages.push({ role: 'assistant', content: res.text, ...(calls.length ? { toolCalls: calls } : {}) });
      if (res.text.trim()) conversation.push({ role: 'assistant', content: res.text });
      if (extractAnswer(res.text, FIRST_ANSWER).found) break;
      if (calls.length === 0) {
        ended =
          last && turn > 1
            ? 'tool-turn budget used up without a final answer'
            : 'neither a tool call nor a final answer';
        break;
      }
      for (const call of calls) {
        const { cmd, output } = tools.run(call);
        messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: output });
        conversation.push({ type: 'tool_call', cmd, obs: output });
      }
    }
    const extracted = extractAnswer(reply, FIRST_ANSWER);
    // No answer in tags means no answer (0 / 0), as in the original.
    const prediction = extracted.found ? extracted.answer : '';
    const gold = String(item.ground_truth);
    const score = officeqaScore(prediction, gold);
    const trajectory = scoredTrajectory({
      item,
      task: String(item.question),
      system,
      user,
      asked: { reply, extracted: { answer: prediction, found: extracted.found }, usage },
      conversation,
      score,
      expected: gold,
      notes: [
        ended ? `the rollout ended: ${ended}` : '',
        oracleChars ? `the prompt included ${oracleChars} characters of oracle source pages` : '',
      ].filter(Boolean),
    });
    if (ended && score.hard < 1) trajectory.failReason = `${ended}: expected '${gold}'`;
    return trajectory;
  }

  /** An agent target: the item's bulletins in its workspace, one run with its own tools. */
  private async agentRollout(item: Item, skill: string, tools: DocTools, ctx: RolloutContext): Promise<Trajectory> {
    const skillSection = skill.trim() ? `## Skill\n\n${skill.trim()}` : '';
    const system = render(envPrompt(this.name, 'system_agent'), { skill_section: skillSection })
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    const { text: user, oracleChars } = this.userPrompt(item, tools, true);
    const asked = await askForAnswer(
      {
        system,
        skill,
        user,
        workspaceFiles: tools.files.map((f) => ({ path: `documents/${f.shown}`, source: f.real })),
        rule: FIRST_ANSWER,
        maxTurns: 1,
        retryMessage: '',
        maxOutputTokens: this.o.max_completion_tokens,
      },
      ctx,
    );
    const prediction = asked.extracted.found ? asked.extracted.answer : '';
    const gold = String(item.ground_truth);
    return scoredTrajectory({
      item,
      task: String(item.question),
      system,
      user,
      asked: { ...asked, extracted: { answer: prediction, found: asked.extracted.found } },
      conversation: conversationOf(asked.messages),
      score: officeqaScore(prediction, gold),
      expected: gold,
      notes: oracleChars ? [`the prompt included ${oracleChars} characters of oracle source pages`] : [],
    });
  }
}

const NO_WEB_SEARCH =
  "web search (the original's search_mode custom_search and azure_search) is not supported yet: OfficeQA runs offline with its local document tools, so this key has no effect";

registerEnv({
  name: 'officeqa',
  optionsSchema: OfficeQaOptions,
  unsupportedOptions: Object.fromEntries(
    [
      'search_api_url',
      'search_auth_env',
      'search_provider',
      'search_max_num_results',
      'search_timeout_seconds',
      'max_queries_per_turn',
    ].map((k) => [k, NO_WEB_SEARCH]),
  ),
  create: (config, ctx) => new OfficeQaEnv(config, envOptions(OfficeQaOptions, config), ctx),
});
