/**
 * pi (the pi coding agent): `<pi agent dir>/sessions/--<path>--/<time>_<id>.jsonl`. The first
 * line is the header `{type: "session", version?, id, timestamp, cwd}`. Version 1 (no version)
 * is a plain sequence of entries; versions 2 and 3 are a tree: every entry has an `id` and a
 * `parentId` (null, or an entry written before it), the user's branches share their start, and
 * the conversation is the branch from the last entry back to a root. `message` entries hold
 * `user`, `assistant` (text, thinking and `toolCall` blocks) and `toolResult` messages; other
 * entries (model changes, compactions, branch summaries, labels, extension data) are not the
 * conversation. A file that breaks these rules (a bad line before the last, an unknown version,
 * an entry whose parent is missing or written after it) is passed over whole; a torn last line
 * is dropped.
 */
import path from 'node:path';
import { DigestBuilder } from './builder.ts';
import { walkFiles } from './files.ts';
import { field, str, type JsonRecord } from './jsonl.ts';
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

/** The lines as objects; undefined when a line other than the last is not one. */
function strictLines(text: string): JsonRecord[] | undefined {
  const lines = text.split('\n').filter((l) => l.trim());
  const out: JsonRecord[] = [];
  for (const [i, line] of lines.entries()) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (i === lines.length - 1) break;
      return undefined;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
    out.push(value as JsonRecord);
  }
  return out;
}

/** The active branch of a version 2/3 tree, root first; undefined when the tree is broken. */
function activeBranch(entries: JsonRecord[]): JsonRecord[] | undefined {
  const byId = new Map<string, JsonRecord>();
  for (const e of entries) {
    const id = e.id;
    if (typeof id !== 'string' || !id || byId.has(id) || !('parentId' in e)) return undefined;
    const parent = e.parentId;
    if (parent !== null && (typeof parent !== 'string' || !byId.has(parent))) return undefined;
    byId.set(id, e);
  }
  const branch: JsonRecord[] = [];
  for (let e = entries.at(-1); e; e = typeof e.parentId === 'string' ? byId.get(e.parentId) : undefined) branch.push(e);
  return branch.reverse();
}

export function parsePiSession(text: string, file: string): ReadResult {
  const lines = strictLines(text);
  if (!lines || lines.length === 0) return skipped('unreadable');
  const [header, ...entries] = lines;
  if (header!.type !== 'session' || entries.some((e) => e.type === 'session')) return skipped('unreadable');
  const version = header!.version ?? 1;
  if (version !== 1 && version !== 2 && version !== 3) return skipped('unreadable');
  const branch = version === 1 ? entries : activeBranch(entries);
  if (!branch) return skipped('unreadable');
  const b = new DigestBuilder('pi', str(header!.id) || path.basename(file, '.jsonl'), file);
  b.where(header!.cwd);
  b.time(header!.timestamp);
  for (const e of branch) {
    b.time(e.timestamp);
    if (e.type !== 'message') continue;
    const m = e.message;
    const role = field(m, 'role');
    const content = field(m, 'content');
    if (role === 'user') b.userText(contentText(content));
    else if (role === 'assistant') {
      b.assistantMessage(contentText(content));
      if (Array.isArray(content))
        for (const block of content) if (field(block, 'type') === 'toolCall') b.tool(field(block, 'name'));
    } else if (role === 'toolResult') b.tool(field(m, 'toolName'));
  }
  return digestOrEmpty(b.build());
}

export const piSource: Source = {
  name: 'pi',
  scan(locations: Locations) {
    const root = locations.piSessions;
    return fileScan(
      'pi',
      [root],
      walkFiles(root, { file: (n) => n.endsWith('.jsonl') }).map((f) => fileCandidate(f, parsePiSession)),
    );
  },
};
