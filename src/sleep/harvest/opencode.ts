/**
 * OpenCode keeps its sessions in the SQLite database `<data dir>/opencode.db` (tables `session`
 * with `parent_id` and `directory`, `message` and `part`, each with its content as JSON in
 * `data`), and kept them, before the database, as JSON files under `<data dir>/storage/`:
 * `session/<project>/<session>.json`, `message/<session>/<message>.json`,
 * `part/<message>/<part>.json` (the database imported them, so a session in both is read from
 * the database). Only top-level sessions are conversations with the user (child sessions are
 * its sub-agents'). A message's text is its `text` parts that are neither `synthetic` nor
 * `ignored`; `tool` parts (`tool-invocation` in early versions) name tools; reasoning, tool
 * inputs and outputs, files, patches and snapshots are never read. A session with an unreadable
 * JSON document is passed over whole.
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import { DigestBuilder } from './builder.ts';
import { readJsonFile, statFile, subdirectories, walkFiles } from './files.ts';
import { field, str } from './jsonl.ts';
import {
  digestOrEmpty,
  skipped,
  type Candidate,
  type Locations,
  type ReadResult,
  type Source,
  type SourceScan,
} from './source.ts';
import { columnsOf, openSnapshot, type Snapshot } from './sqlite.ts';
import { toMillis } from './time.ts';

interface OpenCodeMessage {
  data: unknown;
  parts: unknown[];
}

/** One session from its messages (in order) and their parts. */
export function openCodeDigest(
  session: { id: string; directory: string; created?: unknown; updated?: unknown; branch?: unknown },
  messages: OpenCodeMessage[],
  rawPath: string,
): ReadResult {
  const b = new DigestBuilder('opencode', session.id, rawPath);
  b.where(session.directory, session.branch);
  b.time(session.created);
  b.time(session.updated);
  for (const m of messages) {
    const role = field(m.data, 'role');
    b.time(field(field(m.data, 'time'), 'created'));
    const text = m.parts
      .filter((p) => field(p, 'type') === 'text' && field(p, 'synthetic') !== true && field(p, 'ignored') !== true)
      .map((p) => str(field(p, 'text')))
      .join('\n');
    if (role === 'user') b.userText(text);
    else if (role === 'assistant') {
      b.assistantMessage(text);
      for (const p of m.parts) {
        if (field(p, 'type') === 'tool') b.tool(field(p, 'tool'));
        else if (field(p, 'type') === 'tool-invocation') b.tool(field(field(p, 'toolInvocation'), 'toolName'));
      }
      if (field(m.data, 'error') !== undefined && field(m.data, 'error') !== null)
        b.signal('neg:opencode_message_error');
    }
  }
  return digestOrEmpty(b.build());
}

function parse(json: unknown): unknown {
  if (typeof json !== 'string') throw new Error('not JSON text');
  return JSON.parse(json);
}

interface DbSession {
  id: string;
  directory: string;
  time_created: number;
  time_updated: number;
  metadata: string | null;
  bytes: number | null;
}

function dbSessions(db: Database.Database): DbSession[] {
  const cols = columnsOf(db, 'session');
  if (
    !['id', 'parent_id', 'directory', 'time_created', 'time_updated'].every((c) => cols.has(c)) ||
    !columnsOf(db, 'message').has('data') ||
    !columnsOf(db, 'part').has('data')
  )
    return [];
  const metadata = cols.has('metadata') ? 'metadata' : 'NULL AS metadata';
  return db
    .prepare(
      `SELECT id, directory, time_created, time_updated, ${metadata},
              (SELECT sum(length(data)) FROM part p WHERE p.session_id = s.id) AS bytes
         FROM session s WHERE parent_id IS NULL ORDER BY time_updated DESC, id DESC`,
    )
    .all() as DbSession[];
}

function readDbSession(db: Database.Database, s: DbSession): ReadResult {
  try {
    const rows = db
      .prepare('SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id')
      .all(s.id) as { id: string; data: string }[];
    const parts = db
      .prepare('SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id')
      .all(s.id) as { message_id: string; data: string }[];
    const byMessage = new Map<string, unknown[]>();
    for (const p of parts) byMessage.set(p.message_id, [...(byMessage.get(p.message_id) ?? []), parse(p.data)]);
    const messages = rows.map((r) => ({ data: parse(r.data), parts: byMessage.get(r.id) ?? [] }));
    const branch = s.metadata ? field(parse(s.metadata), 'gitBranch') : undefined;
    return openCodeDigest(
      { id: s.id, directory: s.directory, created: s.time_created, updated: s.time_updated, branch },
      messages,
      `opencode://${s.id}`,
    );
  } catch {
    return skipped('unreadable');
  }
}

/** A session of the file storage of earlier versions. */
function readStoredSession(storage: string, sessionFile: string): ReadResult {
  const info = readJsonFile(sessionFile);
  const id = str(field(info, 'id'));
  if (!id) return skipped('unreadable');
  if (field(info, 'parentID')) return skipped('sub-agent');
  let directory = str(field(info, 'directory'));
  if (!directory)
    directory = str(
      field(readJsonFile(path.join(storage, 'project', `${str(field(info, 'projectID'))}.json`)), 'worktree'),
    );
  const messageFiles = walkFiles(path.join(storage, 'message', id), { file: (n) => n.endsWith('.json'), maxDepth: 0 });
  const messages: (OpenCodeMessage & { id: string; created: number })[] = [];
  for (const f of messageFiles) {
    const data = readJsonFile(f.path);
    if (data === undefined) return skipped('unreadable');
    const mid = str(field(data, 'id')) || path.basename(f.path, '.json');
    const parts = walkFiles(path.join(storage, 'part', mid), { file: (n) => n.endsWith('.json'), maxDepth: 0 })
      .sort((a, b) => a.path.localeCompare(b.path))
      .map((p) => readJsonFile(p.path));
    if (parts.includes(undefined)) return skipped('unreadable');
    messages.push({ id: mid, created: toMillis(field(field(data, 'time'), 'created')) ?? 0, data, parts });
  }
  messages.sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  const time = field(info, 'time');
  return openCodeDigest(
    { id, directory, created: field(time, 'created'), updated: field(time, 'updated') },
    messages,
    sessionFile,
  );
}

export const openCodeSource: Source = {
  name: 'opencode',
  scan(locations: Locations): SourceScan {
    const storage = path.join(locations.opencodeData, 'storage');
    const dbFile = locations.opencodeDb;
    const notes: string[] = [];
    const candidates: Candidate[] = [];
    const inDb = new Set<string>();
    let snapshot: Snapshot | undefined;
    if (dbFile && statFile(dbFile)) {
      try {
        snapshot = openSnapshot(dbFile);
        const db = snapshot.db;
        for (const s of dbSessions(db)) {
          inDb.add(s.id);
          candidates.push({
            where: `${dbFile}#${s.id}`,
            updatedMs: toMillis(s.time_updated) ?? 0,
            bytes: s.bytes ?? 0,
            read: () => readDbSession(db, s),
          });
        }
      } catch (err) {
        notes.push(`the database ${dbFile} could not be read: ${(err as Error).message}`);
      }
    }
    for (const projectDir of subdirectories(path.join(storage, 'session'))) {
      for (const f of walkFiles(projectDir, { file: (n) => n.endsWith('.json'), maxDepth: 0 })) {
        if (inDb.has(path.basename(f.path, '.json'))) continue;
        candidates.push({
          where: f.path,
          updatedMs: f.mtimeMs,
          bytes: f.size,
          read: () => readStoredSession(storage, f.path),
        });
      }
    }
    const roots = [dbFile, storage].filter(Boolean);
    return {
      source: 'opencode',
      roots,
      present: snapshot !== undefined || subdirectories(storage).length > 0,
      candidates,
      notes,
      close: () => snapshot?.close(),
    };
  },
};
