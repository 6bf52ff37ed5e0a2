/**
 * Collects what a parser finds in one session and builds its digest: prompts in order (commands
 * and injected context left out), the assistant's last texts, tools, skills, files and feedback
 * (each listed once, in first-seen order), the first and last times. Every text is redacted
 * before it is clipped, so a secret cut in half by the clip is never left behind.
 */
import type { SessionDigest, SourceName } from './digest.ts';
import { redactSecrets, redactSecretsDeep } from './secrets.ts';
import { clip, feedbackSignals, isMetaPrompt, toolName } from './text.ts';
import { isoOf, toMillis } from './time.ts';

/** The longest prompt or answer kept, and how many of each. */
export const LIMITS = { textChars: 4000, prompts: 100, finals: 5, files: 200 } as const;

export class DigestBuilder {
  project = '';
  gitBranch = '';
  private readonly prompts: string[] = [];
  private readonly finals: string[] = [];
  private readonly tools = new Set<string>();
  private readonly skills = new Set<string>();
  private readonly files = new Set<string>();
  private readonly feedback = new Set<string>();
  private userTurns = 0;
  private assistantTurns = 0;
  private first?: number;
  private last?: number;
  private lastMessage?: string;

  constructor(
    readonly source: SourceName,
    public sessionId: string,
    readonly rawPath: string,
  ) {}

  /** The project and branch, each kept from the first call that names it. */
  where(project: unknown, branch?: unknown): void {
    if (!this.project && typeof project === 'string' && project.trim()) this.project = project.trim();
    if (!this.gitBranch && typeof branch === 'string' && branch.trim()) this.gitBranch = branch.trim();
  }

  /** A time seen in the session (any format `toMillis` reads). */
  time(value: unknown, naive: 'utc' | 'local' = 'utc'): void {
    const ms = toMillis(value, naive);
    if (ms === undefined) return;
    if (this.first === undefined || ms < this.first) this.first = ms;
    if (this.last === undefined || ms > this.last) this.last = ms;
  }

  /** A user's text: kept as a prompt unless it is a command or injected context. Returns whether it was kept. */
  userText(text: string): boolean {
    const t = text.replace(/\0/g, '').trim();
    if (isMetaPrompt(t)) return false;
    this.userTurns++;
    for (const f of feedbackSignals(t)) this.feedback.add(f);
    if (this.prompts.length < LIMITS.prompts) this.prompts.push(t);
    return true;
  }

  /** One assistant message (a turn), with the text it showed the user, if any. */
  assistantMessage(text = ''): void {
    this.assistantTurns++;
    this.assistantText(text);
  }

  /**
   * Visible assistant text. Texts with the same `message` key (one API message written as
   * several records) are joined into one answer.
   */
  assistantText(text: string, message?: string): void {
    const t = text.replace(/\0/g, '').trim();
    if (!t) return;
    if (message !== undefined && message === this.lastMessage && this.finals.length > 0) {
      this.finals[this.finals.length - 1] += `\n\n${t}`;
      return;
    }
    this.lastMessage = message;
    this.finals.push(t);
    if (this.finals.length > LIMITS.finals) this.finals.shift();
  }

  tool(name: unknown): void {
    if (typeof name === 'string' && name.trim()) this.tools.add(toolName(name));
  }

  skill(name: unknown): void {
    if (typeof name === 'string' && name.trim()) this.skills.add(name.trim());
  }

  file(file: unknown): void {
    if (typeof file === 'string' && file.trim() && this.files.size < LIMITS.files) this.files.add(file.trim());
  }

  signal(signal: string): void {
    this.feedback.add(signal);
  }

  get hasTurns(): boolean {
    return this.userTurns > 0 || this.assistantTurns > 0;
  }

  /** The digest, redacted; undefined for a session with neither a prompt nor an answer. */
  build(): SessionDigest | undefined {
    if (this.prompts.length === 0 && this.assistantTurns === 0) return undefined;
    const text = (t: string) => clip(redactSecrets(t), LIMITS.textChars);
    return redactSecretsDeep({
      session_id: this.sessionId,
      project: this.project,
      source: this.source,
      git_branch: this.gitBranch,
      started_at: isoOf(this.first),
      ended_at: isoOf(this.last),
      user_prompts: this.prompts.map(text),
      assistant_finals: this.finals.map(text),
      tools_used: [...this.tools],
      skills_used: [...this.skills],
      files_touched: [...this.files],
      feedback_signals: [...this.feedback],
      n_user_turns: this.userTurns,
      n_assistant_turns: this.assistantTurns,
      raw_path: this.rawPath,
    });
  }
}
