/**
 * Replay as an environment of the engine: an item is a mined task, a rollout is the target
 * attempting it under the documents (K times, each its own sample) and the task's judge scoring
 * each attempt. A task's `hard` is 1 when every attempt passed, its `soft` the mean partial
 * credit. An attempt whose model call failed (or whose judge call did) is left out of the score;
 * when every attempt failed so, the model's error goes to the engine, which records the item as
 * an infrastructure error: it is never scored.
 *
 * Every attempt's prompt starts with the replay marker, so that an agent's record of it is
 * never harvested back as one of the user's sessions.
 */
import { CallFailure } from '../../model/failure.ts';
import { StructuredOutputError } from '../../model/structured.ts';
import { InfraError, type ChatModel } from '../../model/types.ts';
import { fill, loadPrompt } from '../../prompt-files.ts';
import type { SleepAttemptMeta } from '../../protocol/sleep.ts';
import type { ConversationEntry, Env, Item, RolloutContext, Splits, Trajectory } from '../../envs/types.ts';
import { judgeAnswer, type Verdict } from '../judge/judge.ts';
import { REPLAY_PROMPT_MARKER } from './marker.ts';
import { checksOf, taskType, type TaskRecord } from '../tasks/task.ts';
import { agentDocuments, documentsText, type ReplayDocument } from './documents.ts';

/** A task as an engine item. */
export interface TaskItem extends Item {
  task: TaskRecord;
}

export function taskItem(task: TaskRecord): TaskItem {
  return { id: task.id, type: taskType(task), task };
}

const isModelFailure = (err: unknown) =>
  err instanceof InfraError || err instanceof CallFailure || err instanceof StructuredOutputError;

/** What a passing answer holds, in words, for the optimizer (and the simulator's analyst). */
export function expectedText(task: TaskRecord): string {
  if (task.reference_kind === 'exact' || task.reference_kind === 'rubric') return task.reference;
  if (task.reference_kind === 'rule') {
    const checks = checksOf(task).filter((c): c is { op: string; arg?: unknown } =>
      Boolean(c && typeof c === 'object'),
    );
    if (checks.length && checks.every((c) => c.op === 'contains')) return checks.map((c) => String(c.arg)).join('; ');
    return checks
      .map((c) => `${c.op}${c.arg === null || c.arg === undefined ? '' : ` ${JSON.stringify(c.arg)}`}`)
      .join('; ');
  }
  return '(no reference: the answer is judged against the request)';
}

/** The system prompt and the user message of an attempt. */
export function attemptPrompt(task: TaskRecord, docs: ReplayDocument[]): { system: string; user: string } {
  const documents = documentsText(docs);
  let system: string;
  if (task.system.trim()) {
    const section = `## Guidance\n\n${documents}`;
    system = task.system.includes('{skill_section}')
      ? task.system.split('{skill_section}').join(section)
      : `${section}\n\n${task.system}`;
  } else system = fill(loadPrompt('sleep/attempt'), { documents }).trim();
  const user = [REPLAY_PROMPT_MARKER, task.intent.trim(), task.context_excerpt.trim()].filter(Boolean).join('\n\n');
  return { system, user };
}

export interface ReplayOptions {
  /** The trained skill is a package: each request names it (`skill`), so the package's files go with it. */
  packaged?: boolean;
  /** Attempts per task. */
  samples: number;
  /** The documents a rollout runs under, given the text of the one being trained. */
  documents: (trained: string) => ReplayDocument[];
  /** What the optimizer should know about these tasks and what it may change. */
  analystGuide: string;
}

interface Attempt {
  response: string;
  verdict?: Verdict;
  error?: unknown;
}

export class ReplayEnv implements Env {
  readonly name = 'sleep';
  readonly usesJudge = true;

  constructor(
    private readonly tasks: TaskRecord[],
    private readonly options: ReplayOptions,
  ) {}

  get analystGuide(): string {
    return this.options.analystGuide;
  }

  async load(): Promise<Splits> {
    const of = (split: TaskRecord['split']) => this.tasks.filter((t) => t.split === split).map(taskItem);
    return { train: of('train'), val: of('val'), test: of('test') };
  }

  private async attempt(
    task: TaskRecord,
    docs: ReplayDocument[],
    target: ChatModel,
    judge: ChatModel | undefined,
    sample: number,
    signal?: AbortSignal,
  ): Promise<Attempt> {
    const { system, user } = attemptPrompt(task, docs);
    const meta: SleepAttemptMeta = {
      kind: 'sleep_attempt',
      task: {
        id: task.id,
        intent: task.intent,
        context: task.context_excerpt,
        reference_kind: task.reference_kind,
        reference: task.reference,
        checks: checksOf(task) as SleepAttemptMeta['task']['checks'],
      },
    };
    const trained = docs.find((d) => d.kind === 'skill' && d.text.trim());
    const agent = target.agentic
      ? agentDocuments(docs)
      : this.options.packaged && trained
        ? { skill: trained.text.trim() }
        : {};
    let response = '';
    try {
      const reply = await target.complete({
        purpose: 'sleep_attempt',
        system,
        messages: [{ role: 'user', content: user }],
        meta,
        sample,
        signal,
        ...agent,
      });
      response = reply.text;
      const tools = reply.trace?.steps.map((s) => s.tool) ?? [];
      return { response, verdict: await judgeAnswer(task, response, tools, judge, signal) };
    } catch (err) {
      if (!isModelFailure(err)) throw err;
      return { response, error: err };
    }
  }

  async rollout(item: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const task = (item as TaskItem).task;
    const docs = this.options.documents(skill);
    const k = Math.max(1, this.options.samples);
    const base = (ctx.sample ?? 0) * k;
    const attempts = await Promise.all(
      Array.from({ length: k }, (_, i) => this.attempt(task, docs, ctx.target, ctx.judge, base + i, ctx.signal)),
    );
    const scored = attempts.filter((a): a is Attempt & { verdict: Verdict } => a.verdict !== undefined);
    if (scored.length === 0) throw attempts[0]!.error;
    const passed = scored.filter((a) => a.verdict.hard >= 1).length;
    const worst = scored.find((a) => a.verdict.hard < 1) ?? scored[0]!;
    const { system, user } = attemptPrompt(task, docs);
    const conversation: ConversationEntry[] = [];
    scored.forEach((a, i) => {
      if (k > 1) conversation.push({ role: 'system', content: `attempt ${i + 1} of ${k}` });
      conversation.push(
        { role: 'user', content: task.intent },
        { role: 'assistant', content: a.response },
        {
          role: 'system',
          content: `judged: hard=${a.verdict.hard} soft=${a.verdict.soft.toFixed(2)}: ${a.verdict.why}`,
        },
      );
    });
    const hard = passed === scored.length ? 1 : 0;
    return {
      id: task.id,
      hard,
      soft: scored.reduce((s, a) => s + a.verdict.soft, 0) / scored.length,
      taskType: taskType(task),
      task: task.intent,
      predicted: worst.response,
      expected: expectedText(task),
      failReason: hard ? undefined : worst.verdict.why,
      feedback:
        k > 1
          ? `${passed} of ${scored.length} attempts passed${scored.length < k ? ` (${k - scored.length} could not run)` : ''}`
          : undefined,
      conversation,
      systemPrompt: system,
      userPrompt: user,
    };
  }
}
