/**
 * `env.name: tasks`: train a skill on your own examples, with no code. Data comes from JSONL,
 * JSON, CSV or Parquet (one file split by seeded ratios, or one file per split); config maps
 * the field names; the skill is the system prompt and a `{{field}}` template the user message;
 * an extraction rule picks the answer out of the reply and a built-in, judge or custom scorer
 * scores it. Every record is checked when the data loads, before any model is called.
 */
import path from 'node:path';
import type { EnvConfig } from '../../config/schema.ts';
import type { ImagePart, TextPart } from '../../model/types.ts';
import { DataError } from '../data/errors.ts';
import type { RawRecord } from '../data/read.ts';
import { loadSplits, type LoadedSplits } from '../data/splits.ts';
import { imageRefs, resolveImage } from '../images.ts';
import { envPrompt } from '../prompts.ts';
import { envOptions } from '../options.ts';
import { askForAnswer, conversationOf, scoredTrajectory } from '../qa.ts';
import { registerEnv } from '../registry.ts';
import { goldList } from '../scoring/golds.ts';
import { buildScorer, choicesOf } from '../scoring/scorer.ts';
import { scorerChecks } from '../scoring/scorer-checks.ts';
import type { Scorer } from '../scoring/types.ts';
import { lookup, placeholders, render } from '../template.ts';
import type { Env, EnvContext, Item, RolloutContext, SecondScorer, Trajectory } from '../types.ts';
import type { ProbeForm } from '../../config/audit-schema.ts';
import { tasksProbe, tasksSecondScorer } from './audit-hooks.ts';
import { TasksOptionsSchema, type TasksOptions } from './options.ts';

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

export function defaultInstructions(o: TasksOptions): string {
  switch (o.extract.mode) {
    case 'tag':
      return `Finish your reply with the final answer alone inside <${o.extract.tag}></${o.extract.tag}> tags.`;
    case 'json_field':
      return `Finish your reply with a JSON object whose "${o.extract.field}" field holds the final answer.`;
    default:
      return '';
  }
}

export class TasksEnv implements Env {
  readonly name = 'tasks';
  readonly analystGuide: string;
  readonly usesJudge: boolean;
  readonly secondScorer: SecondScorer;
  private scorer?: Scorer;
  private types = new Set<string>();
  private readonly userTemplate: string;
  private readonly templateFields: string[];
  private readonly instructions: string;
  private readonly answerFields: string[];

  constructor(
    private readonly config: EnvConfig,
    private readonly o: TasksOptions,
    private readonly ctx: EnvContext,
  ) {
    this.usesJudge = o.scorer.type === 'judge';
    this.secondScorer = tasksSecondScorer(o);
    this.analystGuide = [envPrompt('tasks', 'analyst'), o.analyst_guide.trim()].filter(Boolean).join('\n\n');
    this.userTemplate = o.prompt.user || (o.fields.context ? '{{context}}\n\n{{input}}' : '{{input}}');
    this.templateFields = placeholders(this.userTemplate);
    this.instructions = o.prompt.instructions ?? defaultInstructions(o);
    this.answerFields = Array.isArray(o.fields.answer) ? o.fields.answer : [o.fields.answer];
  }

  private needsAnswer(): boolean {
    return this.o.scorer.type !== 'judge' && this.o.scorer.type !== 'custom';
  }

  toItem(rec: RawRecord): Item {
    const f = rec.fields;
    const o = this.o;
    const id = isBlank(f[o.fields.id])
      ? `${path.basename(rec.where.file, path.extname(rec.where.file))}:${rec.where.index ?? 0}`
      : String(f[o.fields.id]);
    const item: Item = { ...f, id };
    if (o.fields.type) {
      if (isBlank(f[o.fields.type]))
        throw new DataError(
          `missing field '${o.fields.type}' (the task type, from env.fields.type)`,
          rec.where,
          o.fields.type,
        );
      item.type = String(f[o.fields.type]);
    }
    if (f[o.fields.input] !== undefined) item.input = f[o.fields.input];
    if (o.fields.context) {
      if (f[o.fields.context] === undefined)
        throw new DataError(
          `missing field '${o.fields.context}' (the context, from env.fields.context)`,
          rec.where,
          o.fields.context,
        );
      item.context = f[o.fields.context];
    }
    const answerFields = this.answerFields;
    const present = answerFields.filter((k) => !isBlank(f[k]));
    if (this.needsAnswer() && present.length === 0) {
      throw new DataError(
        `missing field '${answerFields.join("' / '")}' (the expected answer, from env.fields.answer)`,
        rec.where,
        answerFields[0],
      );
    }
    item.expected = answerFields.length === 1 ? f[answerFields[0]!] : present.map((k) => f[k]);
    if (this.needsAnswer() && o.scorer.type !== 'json_field' && goldList(item.expected).length === 0) {
      throw new DataError(`field '${answerFields[0]}' holds no answer`, rec.where, answerFields[0]);
    }
    if (o.scorer.type === 'regex' && !o.scorer.pattern) {
      for (const g of goldList(item.expected)) {
        try {
          new RegExp(g, o.scorer.flags);
        } catch (err) {
          throw new DataError(
            `field '${answerFields[0]}' is not a valid regular expression for the regex scorer: ${(err as Error).message}`,
            rec.where,
            answerFields[0],
          );
        }
      }
    }
    if (o.scorer.type === 'choice' && choicesOf(f[o.scorer.choices_field]).length === 0) {
      throw new DataError(
        `missing field '${o.scorer.choices_field}' (the choices, from env.scorer.choices_field)`,
        rec.where,
        o.scorer.choices_field,
      );
    }
    if (o.fields.images) {
      const refs = imageRefs(f[o.fields.images]);
      const bases = [path.dirname(rec.where.file), this.ctx.configDir, process.cwd()];
      item.images = refs.map((ref) => {
        const resolved = resolveImage(ref, bases);
        if (!resolved)
          throw new DataError(
            `image not found: '${ref}' (field '${o.fields.images}'; relative paths are looked up next to the data file, the config, then the working directory)`,
            rec.where,
            o.fields.images,
          );
        return resolved;
      });
    }
    const name = this.templateFields.find((field) => {
      const v = lookup(item, field);
      return v === undefined || v === null;
    });
    if (name !== undefined) {
      const via = name === 'input' ? ` (env.fields.input is '${o.fields.input}')` : '';
      throw new DataError(
        `missing field '${name === 'input' ? o.fields.input : name}', used by the prompt template as {{${name}}}${via}`,
        rec.where,
        name === 'input' ? o.fields.input : name,
      );
    }
    if (item.type) this.types.add(item.type);
    return item;
  }

  async load(): Promise<LoadedSplits> {
    this.scorer = await buildScorer(this.o.scorer, this.ctx);
    const idField = this.o.fields.id;
    const imagesField = this.o.fields.images;
    return loadSplits(
      {
        env: this.name,
        config: this.config,
        resolve: this.ctx.resolvePath,
        missing: this.ctx.missingPath,
        outRoot: this.ctx.outRoot,
        files: { train: this.o.train_file, val: this.o.val_file, test: this.o.test_file },
      },
      {
        toItem: (rec) => this.toItem(rec),
        // The record as read, with its id and absolute image paths, so the written split reads back the same.
        stored: (item, rec) => ({
          ...rec.fields,
          [idField]: item.id,
          ...(imagesField ? { [imagesField]: item.images } : {}),
        }),
      },
    );
  }

  taskTypes(): string[] {
    return [...this.types].sort();
  }

  scorerChecks(): string[] {
    const s = this.o.scorer;
    const checks = scorerChecks(s, s.type === 'custom' ? this.ctx.resolvePath('scorer.module', s.module) : undefined);
    // What the env itself asks the target to write (its answer tags) is no scorer's bait.
    return checks.filter((c) => !this.instructions.toLowerCase().includes(c.toLowerCase()));
  }

  probe(item: Item, form: ProbeForm): Item | undefined {
    return tasksProbe(item, form, this.o);
  }

  systemPrompt(skill: string): string {
    return [skill.trim(), this.instructions.trim()].filter(Boolean).join('\n\n');
  }

  userText(item: Item): string {
    return render(this.userTemplate, item);
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    if (!this.scorer) this.scorer = await buildScorer(this.o.scorer, this.ctx);
    const system = this.systemPrompt(skill);
    const text = this.userText(item);
    const images = (item.images as string[] | undefined) ?? [];
    const user: string | (TextPart | ImagePart)[] = images.length
      ? [{ type: 'text', text }, ...images.map((image): ImagePart => ({ type: 'image', image }))]
      : text;
    const asked = await askForAnswer(
      {
        system,
        skill,
        user,
        rule: this.o.extract,
        maxTurns: this.o.max_turns,
        retryMessage: `Your reply did not give the final answer in the required form. ${this.instructions || 'Give the final answer now.'}`,
        maxOutputTokens: this.o.max_completion_tokens,
      },
      ctx,
    );
    const golds = goldList(item.expected);
    const score = await this.scorer(
      { prediction: asked.extracted.answer, golds, expected: item.expected, item, task: text, reply: asked.reply },
      { judge: ctx.judge, sample: ctx.sample, signal: ctx.signal },
    );
    return scoredTrajectory({
      item,
      task: text,
      system,
      user: text,
      asked,
      conversation: conversationOf(asked.messages),
      score,
      expected: golds.length === 1 ? golds[0] : item.expected,
    });
  }
}

registerEnv({
  name: 'tasks',
  aliases: ['own', 'custom'],
  optionsSchema: TasksOptionsSchema,
  create: (config, ctx) => new TasksEnv(config, envOptions(TasksOptionsSchema, config), ctx),
});
