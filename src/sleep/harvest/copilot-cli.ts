/**
 * GitHub Copilot CLI: each session's event log `<copilot home>/session-state/<id>/events.jsonl`
 * (`session.start` / `session.resume` with the working directory and branch, `user.message`,
 * `assistant.message` with its tool requests, `tool.execution_*`, `session.error`), and the
 * session store `<copilot home>/session-store.db` (tables `sessions`, `turns`, `session_files`),
 * which also holds sessions whose event log is gone. A session in both is read from its event
 * log, with the files the store lists for it. `user.message.content` is what the user typed
 * (`transformedContent` adds the time and other context); tool arguments and results are never
 * read.
 */
import path from 'node:path';
import type Database from 'better-sqlite3';
import { DigestBuilder } from './builder.ts';
import { isDirectory, statFile, subdirectories, walkFiles, type FoundFile } from './files.ts';
import { field, parseJsonl, readText, str } from './jsonl.ts';
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

export function parseCopilotEvents(
  text: string,
  file: string,
  storeFiles: (id: string) => string[] = () => [],
): ReadResult {
  const id = path.basename(file) === 'events.jsonl' ? path.basename(path.dirname(file)) : path.basename(file, '.jsonl');
  const b = new DigestBuilder('copilot_cli', id, file);
  for (const r of parseJsonl(text).records) {
    const data = r.data;
    b.time(r.timestamp);
    switch (r.type) {
      case 'session.start':
        if (str(field(data, 'sessionId'))) b.sessionId = str(field(data, 'sessionId'));
        b.where(field(field(data, 'context'), 'cwd'), field(field(data, 'context'), 'branch'));
        b.time(field(data, 'startTime'));
        break;
      case 'session.resume':
        b.where(field(field(data, 'context'), 'cwd'), field(field(data, 'context'), 'branch'));
        break;
      case 'user.message':
        b.userText(str(field(data, 'content')));
        break;
      case 'assistant.message': {
        b.assistantMessage(str(field(data, 'content')));
        const requests = field(data, 'toolRequests');
        if (Array.isArray(requests)) for (const t of requests) b.tool(field(t, 'name'));
        break;
      }
      case 'tool.execution_start':
        b.tool(field(data, 'toolName'));
        break;
      case 'session.error':
        b.signal('neg:copilot_cli_error');
        break;
    }
  }
  for (const f of storeFiles(b.sessionId)) b.file(f);
  return digestOrEmpty(b.build());
}

interface StoreSession {
  id: string;
  cwd: string | null;
  branch: string | null;
  created_at: string | null;
  updated_at: string | null;
  bytes: number | null;
}

/** The store's sessions, newest first; a store without the tables of the schema gives none. */
function storeSessions(db: Database.Database): StoreSession[] {
  const cols = columnsOf(db, 'sessions');
  if (!['id', 'cwd', 'updated_at'].every((c) => cols.has(c)) || columnsOf(db, 'turns').size === 0) return [];
  const branch = cols.has('branch') ? 'branch' : 'NULL AS branch';
  const created = cols.has('created_at') ? 'created_at' : 'NULL AS created_at';
  return db
    .prepare(
      `SELECT s.id, s.cwd, ${branch}, ${created}, s.updated_at,
              (SELECT sum(length(coalesce(user_message, '')) + length(coalesce(assistant_response, ''))) FROM turns t WHERE t.session_id = s.id) AS bytes
         FROM sessions s ORDER BY s.updated_at DESC`,
    )
    .all() as StoreSession[];
}

function filesOf(db: Database.Database, id: string): string[] {
  if (!columnsOf(db, 'session_files').has('file_path')) return [];
  return (
    db.prepare('SELECT DISTINCT file_path FROM session_files WHERE session_id = ? ORDER BY file_path').all(id) as {
      file_path: string;
    }[]
  ).map((r) => r.file_path);
}

export function readStoreSession(db: Database.Database, s: StoreSession, store: string): ReadResult {
  const b = new DigestBuilder('copilot_cli', s.id, `${store}#${s.id}`);
  b.where(s.cwd, s.branch);
  b.time(s.created_at);
  b.time(s.updated_at);
  const turns = db
    .prepare('SELECT user_message, assistant_response, timestamp FROM turns WHERE session_id = ? ORDER BY turn_index')
    .all(s.id) as { user_message: string | null; assistant_response: string | null; timestamp: string | null }[];
  for (const t of turns) {
    b.time(t.timestamp);
    if (t.user_message) b.userText(t.user_message);
    if (t.assistant_response !== null) b.assistantMessage(t.assistant_response);
  }
  if (columnsOf(db, 'session_files').has('tool_name')) {
    for (const r of db
      .prepare(
        'SELECT DISTINCT tool_name FROM session_files WHERE session_id = ? AND tool_name IS NOT NULL ORDER BY tool_name',
      )
      .all(s.id) as { tool_name: string }[])
      b.tool(r.tool_name);
  }
  for (const f of filesOf(db, s.id)) b.file(f);
  return digestOrEmpty(b.build());
}

export const copilotCliSource: Source = {
  name: 'copilot_cli',
  scan(locations: Locations): SourceScan {
    const stateDir = path.join(locations.copilotHome, 'session-state');
    const logs: FoundFile[] = [
      ...subdirectories(stateDir)
        .filter((d) => !path.basename(d).startsWith('.'))
        .map((d) => statFile(path.join(d, 'events.jsonl')))
        .filter((f): f is FoundFile => f !== undefined),
      ...walkFiles(stateDir, { file: (n) => n.endsWith('.jsonl'), maxDepth: 0 }),
    ];
    const notes: string[] = [];
    let snapshot: Snapshot | undefined;
    const store = locations.copilotStore;
    if (statFile(store)) {
      try {
        snapshot = openSnapshot(store);
      } catch (err) {
        notes.push(`the session store ${store} could not be read: ${(err as Error).message}`);
      }
    }
    const storeFiles = (id: string) => (snapshot ? filesOf(snapshot.db, id) : []);
    const candidates: Candidate[] = logs.map((f) => ({
      where: f.path,
      updatedMs: f.mtimeMs,
      bytes: f.size,
      read: () => {
        const text = readText(f.path);
        return text === undefined ? skipped('unreadable') : parseCopilotEvents(text, f.path, storeFiles);
      },
    }));
    const logged = new Set(
      logs.map((f) =>
        path.basename(f.path) === 'events.jsonl'
          ? path.basename(path.dirname(f.path))
          : path.basename(f.path, '.jsonl'),
      ),
    );
    if (snapshot) {
      const db = snapshot.db;
      try {
        for (const s of storeSessions(db)) {
          if (logged.has(s.id)) continue;
          candidates.push({
            where: `${store}#${s.id}`,
            updatedMs: toMillis(s.updated_at) ?? 0,
            bytes: s.bytes ?? 0,
            read: () => readStoreSession(db, s, store),
          });
        }
      } catch (err) {
        notes.push(`the session store ${store} could not be read: ${(err as Error).message}`);
      }
    }
    return {
      source: 'copilot_cli',
      roots: [stateDir, store],
      present: isDirectory(stateDir) || snapshot !== undefined,
      candidates,
      notes,
      close: () => snapshot?.close(),
    };
  },
};
