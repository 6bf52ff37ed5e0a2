/**
 * The handoff backend: a night with no key. Every model call becomes a prompt written to a file;
 * the user has each one answered (by their own agent, in a fresh session, or by hand), writes
 * the answer beside it, and runs the night again. A call whose answer file exists gets that
 * answer; the others are recorded and fail as "answer pending", so that the night stops at the
 * first stage that needs them, with every prompt of that stage written at once.
 *
 * Each prompt opens with the replay marker, so the agent session that answers it is never
 * harvested back as one of the user's own. Prompts are redacted before they are written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CallFailure } from '../../model/failure.ts';
import type { ChatModel, ChatRequest, ChatResponse, Message } from '../../model/types.ts';
import { toJson, writeFileAtomic } from '../../run/atomic.ts';
import { REPLAY_PROMPT_MARKER } from '../replay/marker.ts';
import { redactSecrets } from '../harvest/secrets.ts';
import { sha256Hex } from '../tasks/task.ts';

export const HANDOFF_FORMAT = 'skillopt_sleep.handoff.v1';

/** The error of a call whose answer is not written yet. */
export const PENDING = 'answer pending';

export interface PendingPrompt {
  id: string;
  prompt_file: string;
  answer_file: string;
  purpose: string;
}

function messageText(m: Message): string {
  if (m.role === 'tool') return `[tool ${m.toolName} result]\n${m.content}`;
  const content =
    typeof m.content === 'string'
      ? m.content
      : m.content.map((p) => (p.type === 'text' ? p.text : '[image]')).join('\n');
  return m.role === 'assistant' ? `[your earlier reply]\n${content}` : content;
}

/** A request as one prompt a person can paste into a fresh session. */
export function handoffPrompt(req: ChatRequest): string {
  const parts = [REPLAY_PROMPT_MARKER];
  if (req.system?.trim()) parts.push(`# Instructions\n\n${req.system.trim()}`);
  const conversation = req.messages
    .map(messageText)
    .join('\n\n')
    .replace(new RegExp(`^${REPLAY_PROMPT_MARKER.replace(/[[\]]/g, '\\$&')}\\s*`), '');
  parts.push(`# Request\n\n${conversation.trim()}`);
  if (req.sample) parts.push(`(Attempt ${req.sample + 1}: answer independently of any other attempt.)`);
  return redactSecrets(parts.join('\n\n'));
}

export class HandoffModel implements ChatModel {
  readonly id = 'handoff:files';
  readonly priced = true;
  private readonly pending = new Map<string, { prompt: string; purpose: string }>();

  constructor(readonly dir: string) {}

  get answersDir(): string {
    return path.join(this.dir, 'answers');
  }

  hasPending(): boolean {
    return this.pending.size > 0;
  }

  async complete(req: ChatRequest): Promise<ChatResponse> {
    const prompt = handoffPrompt(req);
    const id = sha256Hex(prompt).slice(0, 16);
    const file = path.join(this.answersDir, `${id}.md`);
    let text: string | undefined;
    try {
      text = fs.readFileSync(file, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    if (text) {
      const tokens = (s: string) => Math.ceil(s.length / 4);
      return {
        text,
        usage: { input: tokens(prompt), output: tokens(text), cached: 0, reasoning: 0 },
        latencyMs: 0,
        from: 'provider',
        costUsd: 0,
      };
    }
    this.pending.set(id, { prompt, purpose: req.purpose });
    throw new CallFailure(`${this.id}: ${PENDING} (${path.join('answers', `${id}.md`)})`, 'rejected');
  }

  /**
   * Writes every pending prompt (`prompts/<id>.md`), `PROMPTS.md` (all of them, with what to
   * do) and `pending.json`; returns the pending prompts.
   */
  flush(rerun: string): PendingPrompt[] {
    const list: PendingPrompt[] = [];
    const blocks: string[] = [];
    fs.mkdirSync(this.answersDir, { recursive: true });
    for (const [id, p] of [...this.pending].sort((a, b) => a[0].localeCompare(b[0]))) {
      const promptFile = path.join(this.dir, 'prompts', `${id}.md`);
      writeFileAtomic(promptFile, `${p.prompt}\n`);
      list.push({
        id,
        prompt_file: promptFile,
        answer_file: path.join(this.answersDir, `${id}.md`),
        purpose: p.purpose,
      });
      blocks.push(`----- BEGIN PROMPT ${id} (${p.purpose}) -----\n${p.prompt}\n----- END PROMPT ${id} -----`);
    }
    const head = [
      '# SkillOpt-Sleep: prompts waiting for answers',
      '',
      `${list.length} prompt(s) below. For each one: answer it in a fresh session (a new chat or agent session, so that no answer sees another), and write the raw answer alone to \`answers/<id>.md\` in this folder. Then run again:`,
      '',
      `    ${rerun}`,
      '',
      'Each prompt is also in `prompts/<id>.md`.',
      '',
    ].join('\n');
    writeFileAtomic(path.join(this.dir, 'PROMPTS.md'), `${head}\n${blocks.join('\n\n')}\n`);
    writeFileAtomic(
      path.join(this.dir, 'pending.json'),
      toJson({ format: HANDOFF_FORMAT, answers_dir: this.answersDir, pending: list }),
    );
    return list;
  }
}
