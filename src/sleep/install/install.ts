/**
 * `skillopt sleep install <agent>` / `uninstall <agent>`: skillopt's MCP server (and, for Codex,
 * its skill) in an agent's own configuration. What was there is backed up first
 * (`<file>.skillopt-backup`); the entry is merged in, never replacing the user's other servers.
 * Uninstalling restores the backup when the file is still as skillopt left it; when the user has
 * changed it since, only skillopt's entry is taken out (their changes stay) and the backup is
 * kept for them. A file that is a link (a dotfiles checkout) is written through the link, which
 * stays a link.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import { readJson, writeFileAtomic } from '../../run/atomic.ts';
import { agentFiles, serverEntry, type Agent, type Places } from './agents.ts';
import { jsonHas, jsonWith, jsonWithout, tomlHas, tomlWith, tomlWithout } from './edit.ts';

const FileRecordSchema = z.object({ file: z.string(), backup: z.string().nullable(), written: z.string() });
const InstallSchema = z.object({ agent: z.string(), at: z.string(), files: z.array(FileRecordSchema) });
const RecordSchema = z.object({ installs: z.array(InstallSchema) });
type FileRecord = z.infer<typeof FileRecordSchema>;

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const recordFile = (stateDir: string) => path.join(stateDir, 'installs.json');
export const backupOf = (file: string) => `${file}.skillopt-backup`;

function readRecord(stateDir: string): z.infer<typeof RecordSchema> {
  const file = recordFile(stateDir);
  if (!fs.existsSync(file)) return { installs: [] };
  const parsed = RecordSchema.safeParse(readJson(file));
  if (!parsed.success) throw new UserError(`${file}: not an install record skillopt wrote; remove it to start over`);
  return parsed.data;
}

function saveRecord(stateDir: string, record: z.infer<typeof RecordSchema>): void {
  fs.mkdirSync(stateDir, { recursive: true });
  writeFileAtomic(recordFile(stateDir), `${JSON.stringify(record, null, 2)}\n`);
}

/** The file a write to `file` changes: the target of a link (the link stays), else `file` itself. */
function targetOf(file: string): string {
  let at = file;
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      link = fs.readlinkSync(at);
    } catch {
      return at;
    }
    at = path.resolve(path.dirname(at), link);
  }
  throw new UserError(`${file}: too many levels of links`);
}

/** Replaces the bytes of `file` atomically, through a link, keeping the file's permissions. */
function writeThrough(file: string, bytes: string | Buffer): void {
  const target = targetOf(file);
  const mode = fs.existsSync(target) ? fs.statSync(target).mode & 0o777 : undefined;
  fs.mkdirSync(path.dirname(target), { recursive: true });
  // Bytes, not text: the user's file is written as it is (text would pass through secret scrubbing).
  writeFileAtomic(target, typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes, { mode });
}

/** Writes `next` to `file`, backing up what was there first (once: the backup is the state before skillopt). */
function writeWithBackup(file: string, next: string, earlier: FileRecord | undefined): FileRecord {
  const existed = fs.existsSync(file);
  let backup = earlier?.backup ?? null;
  if (!earlier && existed) {
    backup = backupOf(file);
    fs.copyFileSync(file, backup);
  }
  writeThrough(file, next);
  return { file, backup, written: sha(next) };
}

export interface InstallResult {
  files: FileRecord[];
  lines: string[];
}

export function install(
  agent: Agent,
  stateDir: string,
  program: { node: string; bin: string },
  places: Places = {},
): InstallResult {
  const where = agentFiles(agent, places);
  const record = readRecord(stateDir);
  const earlier = record.installs.find((i) => i.agent === agent);
  const current = fs.existsSync(where.config) ? fs.readFileSync(where.config, 'utf8') : '';
  const entry = serverEntry(agent, program);
  // Every new content is computed (and a malformed file refused) before anything is written.
  const next =
    where.format === 'toml'
      ? tomlWith(current, where.config, entry as { command: string; args: string[] })
      : jsonWith(current, where.config, where.key!, entry);
  const skillText = where.skill ? fs.readFileSync(where.skill.from, 'utf8') : undefined;
  const files = [
    writeWithBackup(
      where.config,
      next,
      earlier?.files.find((f) => f.file === where.config),
    ),
  ];
  if (where.skill && skillText !== undefined)
    files.push(
      writeWithBackup(
        where.skill.file,
        skillText,
        earlier?.files.find((f) => f.file === where.skill!.file),
      ),
    );
  saveRecord(stateDir, {
    installs: [...record.installs.filter((i) => i.agent !== agent), { agent, at: new Date().toISOString(), files }],
  });
  const lines = files.map((f) => `wrote ${f.file}${f.backup ? ` (what was there is in ${f.backup})` : ''}`);
  lines.push(`Restart ${where.label} (or reload its MCP servers) to see the skillopt tools.`);
  return { files, lines };
}

export function uninstall(agent: Agent, stateDir: string, places: Places = {}): string[] | undefined {
  const where = agentFiles(agent, places);
  const record = readRecord(stateDir);
  const entry = record.installs.find((i) => i.agent === agent);
  if (!entry) return undefined;
  const lines: string[] = [];
  for (const f of entry.files) {
    const now = fs.existsSync(f.file) ? fs.readFileSync(f.file, 'utf8') : undefined;
    if (now !== undefined && sha(now) === f.written) {
      if (f.backup && fs.existsSync(f.backup)) {
        writeThrough(f.file, fs.readFileSync(f.backup));
        fs.rmSync(f.backup);
        lines.push(`restored ${f.file} as it was before`);
      } else {
        fs.rmSync(f.file);
        lines.push(`removed ${f.file}`);
      }
      continue;
    }
    if (now === undefined) {
      lines.push(`${f.file} is already gone`);
      continue;
    }
    // Changed since: take out only skillopt's part.
    if (f.file === where.config) {
      const has = where.format === 'toml' ? tomlHas(now) : jsonHas(now, f.file, where.key!);
      if (has)
        writeThrough(f.file, where.format === 'toml' ? tomlWithout(now, f.file) : jsonWithout(now, f.file, where.key!));
      lines.push(
        `${f.file} was changed since; ${has ? 'took out only the skillopt entry' : 'it has no skillopt entry left'}${f.backup ? ` (the file before install is kept in ${f.backup})` : ''}`,
      );
    } else lines.push(`${f.file} was changed since; left as it is`);
  }
  saveRecord(stateDir, { installs: record.installs.filter((i) => i !== entry) });
  return lines;
}
