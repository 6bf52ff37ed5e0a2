/**
 * A user's home folder holding every agent's transcripts where each agent keeps them, made from
 * `test/fixtures/transcripts/` (one folder per agent, laid out as under the agent's own folder).
 * SQLite databases are kept there as SQL (`<name>.db.sql`); they are built in WAL mode and their
 * writer connection stays open, as a running agent's would, so the write-ahead log and its
 * shared-memory file are there to be read (and must not be touched) until `close()`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { tmpDir } from '../helpers/tmp.ts';

export const TRANSCRIPTS = path.resolve(import.meta.dirname, '../fixtures/transcripts');

/** Where each fixture folder goes below the home folder. */
export const PLACES: Record<string, string> = {
  claude: '.claude',
  codex: '.codex',
  copilot: '.copilot',
  vscode: '.config/Code/User',
  cursor: '.cursor',
  opencode: '.local/share/opencode',
  pi: '.pi/agent',
  devin: '.local/share/devin/cli',
};

export interface FixtureHome {
  home: string;
  /** Closes the databases' writer connections (checkpointing their logs). */
  close(): void;
}

/**
 * A fresh home with the fixtures of `agents` (default: all). `edit` may change a fixture's text
 * (by its path below `test/fixtures/transcripts/`) before it is written.
 */
export function fixtureHome(
  options: { agents?: string[]; edit?: (rel: string, text: string) => string } = {},
): FixtureHome {
  const home = fs.realpathSync(tmpDir('skillopt-sleep-home-'));
  const writers: Database.Database[] = [];
  for (const agent of options.agents ?? Object.keys(PLACES)) {
    const from = path.join(TRANSCRIPTS, agent);
    const to = path.join(home, PLACES[agent]!);
    for (const rel of fs.readdirSync(from, { recursive: true, encoding: 'utf8' })) {
      const src = path.join(from, rel);
      if (!fs.statSync(src).isFile()) continue;
      const text = fs.readFileSync(src, 'utf8');
      const content = options.edit ? options.edit(path.join(agent, rel), text) : text;
      const dest = path.join(to, rel);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      if (rel.endsWith('.db.sql')) {
        const db = new Database(dest.slice(0, -'.sql'.length));
        db.pragma('journal_mode = WAL');
        db.pragma('wal_autocheckpoint = 0');
        db.exec(content);
        writers.push(db);
      } else fs.writeFileSync(dest, content);
    }
  }
  return {
    home,
    close: () => {
      for (const w of writers) w.close();
    },
  };
}

/** The environment of a process run as the user of `home`: no agent or XDG variables of the machine's. */
export function homeEnvironment(home: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const k of [
    'XDG_CONFIG_HOME',
    'XDG_DATA_HOME',
    'XDG_STATE_HOME',
    'CLAUDE_CONFIG_DIR',
    'CODEX_HOME',
    'COPILOT_HOME',
    'OPENCODE_DB',
    'PI_CODING_AGENT_DIR',
    'VSCODE_PORTABLE',
    'SKILLOPT_SLEEP_CONFIG',
    'APPDATA',
    'LOCALAPPDATA',
  ])
    delete env[k];
  return { ...env, HOME: home, ...extra };
}

/** Every file below `root` with its size, mode, time and content hash: equal before and after means nothing was written. */
export function treeFingerprint(root: string): string {
  const lines: string[] = [];
  for (const rel of fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).sort()) {
    const p = path.join(root, rel);
    const st = fs.lstatSync(p);
    const hash = st.isFile()
      ? crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex')
      : st.isSymbolicLink()
        ? `link:${fs.readlinkSync(p)}`
        : 'dir';
    lines.push(`${rel}\t${st.mode}\t${st.isFile() ? st.size : 0}\t${st.mtimeMs}\t${hash}`);
  }
  return lines.join('\n');
}

/** Every file below `root` with its bytes and mode (not its time: a restored file is written anew). */
export function contents(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(root, { recursive: true, encoding: 'utf8' }).sort()) {
    const st = fs.lstatSync(path.join(root, rel));
    out[rel] = st.isFile()
      ? `${(st.mode & 0o777).toString(8)} ${fs.readFileSync(path.join(root, rel), 'base64')}`
      : 'dir';
  }
  return out;
}
