/**
 * A transcript source: where one agent keeps its sessions, found without reading them
 * (`scan`), and each session read into a digest on demand (`Candidate.read`). Nothing here
 * writes: every source only lists, stats and reads.
 */
import type { SessionDigest, SourceName } from './digest.ts';
import { isDirectory, type FoundFile } from './files.ts';
import { readText } from './jsonl.ts';

/** Why a session found on disk gives no digest. */
export type SkipReason = 'empty' | 'unreadable' | 'sub-agent';

export type ReadResult = { digest: SessionDigest } | { skipped: SkipReason };

export interface Candidate {
  /** A file, or `<database>#<id>`. */
  where: string;
  /** The last activity known without reading the session (file time, the database's updated time). */
  updatedMs: number;
  /** The transcript's size on disk (for a database row, the size of its texts). */
  bytes: number;
  /** Cursor: the folder named after the workspace, for sessions that record no path. */
  workspaceSlug?: string;
  read(): ReadResult;
}

export interface SourceScan {
  source: SourceName;
  /** Where the source looked. */
  roots: string[];
  /** Whether any of them exists (the agent is installed and has been used). */
  present: boolean;
  candidates: Candidate[];
  /** What could not be read at all, in words (a database that would not open, compressed files). */
  notes: string[];
  /** Releases what the scan holds open (a database snapshot). */
  close(): void;
}

export interface Source {
  name: SourceName;
  scan(locations: Locations): SourceScan;
}

/** Where each agent keeps its sessions on this machine (from the config, the agents' variables, the platform). */
export interface Locations {
  claudeHome: string;
  codexHome: string;
  copilotHome: string;
  copilotStore: string;
  vscodeStorage: string[];
  cursorHome: string;
  opencodeData: string;
  opencodeDb: string;
  piSessions: string;
  devinTranscripts: string;
  /** Devin's trajectories record no folder: the workspaces to match them to. */
  devinWorkspaces: string[];
}

export function skipped(reason: SkipReason): ReadResult {
  return { skipped: reason };
}

export function digestOrEmpty(digest: SessionDigest | undefined): ReadResult {
  return digest ? { digest } : { skipped: 'empty' };
}

/** A session kept in one file, parsed by `parse` when it is read. */
export function fileCandidate(
  file: FoundFile,
  parse: (text: string, file: string) => ReadResult,
  workspaceSlug?: string,
): Candidate {
  return {
    where: file.path,
    updatedMs: file.mtimeMs,
    bytes: file.size,
    ...(workspaceSlug ? { workspaceSlug } : {}),
    read: () => {
      const text = readText(file.path);
      return text === undefined ? skipped('unreadable') : parse(text, file.path);
    },
  };
}

/** The scan of a source whose sessions are files. */
export function fileScan(
  source: SourceName,
  roots: string[],
  candidates: Candidate[],
  notes: string[] = [],
): SourceScan {
  return { source, roots, present: roots.some(isDirectory), candidates, notes, close: () => {} };
}
