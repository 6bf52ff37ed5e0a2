/**
 * Codex: rollouts `<codex home>/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, and those the
 * user archived under `archived_sessions/`. Each line is `{timestamp, type, payload}`:
 * `session_meta` (id, cwd, git branch, and `source`, an object for a sub-agent's thread),
 * `turn_context` (cwd), `response_item` (what the model saw: messages, tool calls, reasoning)
 * and `event_msg` (what the user saw: `user_message` / `agent_message`, or `item_completed`
 * with a `UserMessage` / `AgentMessage` in current versions). The same prompt and answer are
 * written more than once (as a response item and as an event), so a message equal to the one
 * just before it in the same role is one message. Context Codex injects into the user's turn
 * (`AGENTS.md` instructions, `<environment_context>`, skill lists) is not a prompt. Rollouts of
 * the first versions, response items without the `{type, payload}` wrapper, read too; compressed
 * ones (`.jsonl.zst`) are counted, not read.
 */
import path from 'node:path';
import { DigestBuilder } from './builder.ts';
import { walkFiles } from './files.ts';
import { field, parseJsonl, str, type JsonRecord } from './jsonl.ts';
import {
  digestOrEmpty,
  fileCandidate,
  fileScan,
  skipped,
  type Locations,
  type ReadResult,
  type Source,
} from './source.ts';
import { contentText } from './text.ts';
import { count } from '../../util/plural.ts';

const RESPONSE_ITEM_TYPES = new Set([
  'message',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'web_search_call',
  'tool_search_call',
  'reasoning',
  'function_call_output',
  'custom_tool_call_output',
]);

const INJECTED =
  /^<(?:environment_context|codex_internal_context|user_instructions|skills_instructions|INSTRUCTIONS|turn_aborted|user_shell_command)\b/;

/** A user text block as the user wrote it, or '' for context Codex injected. */
function userBlock(text: string): string {
  const t = text.trim();
  if (t.startsWith('# AGENTS.md instructions') || t.startsWith('--- project-doc ---')) {
    const ends = [...t.matchAll(/<\/(?:INSTRUCTIONS|environment_context)>/g)];
    const tail = ends.length ? t.slice(ends.at(-1)!.index! + ends.at(-1)![0].length).trim() : '';
    return tail.startsWith('<') ? '' : tail;
  }
  return INJECTED.test(t) ? '' : t;
}

function blocks(content: unknown, types: string[]): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content
    .map((b) => (typeof b === 'string' ? b : types.includes(str(field(b, 'type'))) ? str(field(b, 'text')) : ''))
    .filter(Boolean);
}

class CodexSession {
  readonly b: DigestBuilder;
  subAgent = false;
  private lastRole = '';
  private lastText = '';

  constructor(file: string) {
    const id =
      /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i.exec(file)?.[1] ??
      path.basename(file, '.jsonl');
    this.b = new DigestBuilder('codex', id, file);
  }

  user(texts: string[]): void {
    for (const t of texts) this.b.where(/<cwd>([^<]+)<\/cwd>/.exec(t)?.[1]);
    const text = texts.map(userBlock).filter(Boolean).join('\n\n');
    if (!text || (this.lastRole === 'user' && this.lastText === text)) return;
    if (this.b.userText(text)) [this.lastRole, this.lastText] = ['user', text];
  }

  assistant(texts: string[]): void {
    const text = texts.join('\n\n').trim();
    if (!text || (this.lastRole === 'assistant' && this.lastText === text)) return;
    this.b.assistantMessage(text);
    [this.lastRole, this.lastText] = ['assistant', text];
  }

  responseItem(p: JsonRecord): void {
    const type = p.type;
    if (type === 'message') {
      if (p.role === 'user') this.user(blocks(p.content, ['input_text', 'text']));
      else if (p.role === 'assistant') this.assistant(blocks(p.content, ['output_text', 'text']));
    } else if (type === 'function_call' || type === 'custom_tool_call') this.b.tool(p.name);
    else if (type === 'local_shell_call') this.b.tool('shell');
    else if (type === 'web_search_call') this.b.tool('web_search');
    else if (type === 'tool_search_call') this.b.tool('tool_search');
  }

  event(p: JsonRecord): void {
    if (p.type === 'user_message') this.user([str(p.message)]);
    else if (p.type === 'agent_message') this.assistant([str(p.message)]);
    else if (p.type === 'item_completed') {
      const item = p.item;
      if (field(item, 'type') === 'UserMessage') this.user([contentText(field(item, 'content'))]);
      else if (field(item, 'type') === 'AgentMessage')
        this.assistant([contentText(field(item, 'content'), ['Text', 'text'])]);
    }
  }

  record(r: JsonRecord): void {
    this.b.time(r.timestamp);
    const p = (r.payload && typeof r.payload === 'object' ? r.payload : undefined) as JsonRecord | undefined;
    if (r.type === 'session_meta' && p) {
      if (typeof p.id === 'string' && p.id) this.b.sessionId = p.id;
      this.b.where(p.cwd, field(p.git, 'branch'));
      this.b.time(p.timestamp);
      const source = p.source;
      if ((source && typeof source === 'object' && 'subagent' in source) || p.thread_source === 'subagent')
        this.subAgent = true;
    } else if (r.type === 'turn_context' && p) this.b.where(p.cwd);
    else if (r.type === 'response_item' && p) this.responseItem(p);
    else if (r.type === 'event_msg' && p) this.event(p);
    else if (!p && RESPONSE_ITEM_TYPES.has(str(r.type))) this.responseItem(r);
    else if (!p && r.type === undefined && typeof r.id === 'string') {
      // The first line of the earliest rollouts: {id, timestamp, instructions, git}.
      this.b.sessionId = r.id;
      this.b.where(undefined, field(r.git, 'branch'));
    }
  }
}

export function parseCodexRollout(text: string, file: string): ReadResult {
  const s = new CodexSession(file);
  for (const r of parseJsonl(text).records) s.record(r);
  if (s.subAgent) return skipped('sub-agent');
  return digestOrEmpty(s.b.build());
}

export const codexSource: Source = {
  name: 'codex',
  scan(locations: Locations) {
    const roots = [path.join(locations.codexHome, 'sessions'), path.join(locations.codexHome, 'archived_sessions')];
    const files = roots.flatMap((root) => walkFiles(root, { file: (n) => n.endsWith('.jsonl') }));
    const compressed = roots.flatMap((root) => walkFiles(root, { file: (n) => n.endsWith('.jsonl.zst') })).length;
    const notes = compressed ? [`${count(compressed, 'compressed rollout')} (.jsonl.zst) not read`] : [];
    return fileScan(
      'codex',
      roots,
      files.map((f) => fileCandidate(f, parseCodexRollout)),
      notes,
    );
  },
};
