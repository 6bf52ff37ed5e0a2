/**
 * A session digest: what harvest keeps of one agent session, the input of mining. The field names
 * are the original SkillOpt-Sleep's (`SessionDigest`), so digests move between the two; `source`
 * (which agent wrote the session) is ours, and a reader of the original ignores it. Every text
 * has been through secret redaction before a digest is built, and times are ISO-8601 in UTC.
 */
import { z } from 'zod';

export const SOURCE_NAMES = ['claude', 'codex', 'copilot', 'copilot_cli', 'cursor', 'opencode', 'pi', 'devin'] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

/** What each source is, for messages and help. */
export const SOURCE_TITLES: Record<SourceName, string> = {
  claude: 'Claude Code',
  codex: 'Codex',
  copilot: 'VS Code Copilot Chat',
  copilot_cli: 'Copilot CLI',
  cursor: 'Cursor',
  opencode: 'OpenCode',
  pi: 'pi',
  devin: 'Devin',
};

const texts = z.array(z.string()).default([]);

export const SessionDigestSchema = z.object({
  session_id: z.string().min(1),
  /** The session's working directory ('' when the source does not record one). */
  project: z.string(),
  source: z.enum(SOURCE_NAMES),
  git_branch: z.string().default(''),
  started_at: z.string().default(''),
  ended_at: z.string().default(''),
  /** Every substantive user prompt, in order (commands, injected context and tool results left out). */
  user_prompts: texts,
  /** The assistant's last visible texts (at most five). */
  assistant_finals: texts,
  tools_used: texts,
  /** Skills the session invoked (Claude Code's `Skill` tool). */
  skills_used: texts,
  files_touched: texts,
  /** `neg:<phrase>` / `pos:<phrase>` from the user's words, and `neg:<source>_…` error markers. */
  feedback_signals: texts,
  n_user_turns: z.number().int().nonnegative().default(0),
  n_assistant_turns: z.number().int().nonnegative().default(0),
  /** Where the session was read: a file, `<database>#<id>`, or `opencode://<id>`. */
  raw_path: z.string().default(''),
});

export type SessionDigest = z.infer<typeof SessionDigestSchema>;
