/**
 * Reading an agent's SQLite database without touching it. Even a read-only connection writes to
 * a WAL database's shared-memory file (`-shm`), so the database and its write-ahead log are
 * copied into a private temporary folder and the copy is opened read-only; the agent's own files
 * are only read. A write the agent makes while the copy is taken is either in the copy whole or
 * not at all (SQLite ignores a log frame whose checksum does not match).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

export interface Snapshot {
  db: Database.Database;
  close(): void;
}

export function openSnapshot(file: string): Snapshot {
  if (!fs.lstatSync(file).isFile()) throw new Error(`${file} is not a file`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-sleep-db-'));
  try {
    const copy = path.join(dir, 'snapshot.db');
    fs.copyFileSync(file, copy);
    if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
    const db = new Database(copy, { readonly: true, fileMustExist: true });
    return {
      db,
      close: () => {
        db.close();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The columns of a table, empty when it does not exist. */
export function columnsOf(db: Database.Database, table: string): Set<string> {
  return new Set(
    (db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as { name: string }[]).map((c) => c.name),
  );
}
