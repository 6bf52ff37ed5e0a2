/**
 * Harvest: every selected agent's sessions, read-only, newest first. A session is kept when it
 * was active in the time window, belongs to the projects in scope, is not one of skillopt's own
 * runs and has a prompt or an answer; at most `maxSessions` are kept, the most recently written
 * first. Files last written before the window are not even read. The digests come out newest
 * session first; each source reports what it found and why the rest was left.
 */
import { SOURCE_NAMES, SOURCE_TITLES, type SessionDigest, type SourceName } from './digest.ts';
import { isOwnSession } from '../replay/marker.ts';
import { claudeSource } from './claude.ts';
import { codexSource } from './codex.ts';
import { copilotCliSource } from './copilot-cli.ts';
import { cursorSource } from './cursor.ts';
import { devinSource } from './devin.ts';
import { openCodeSource } from './opencode.ts';
import { piSource } from './pi.ts';
import { inScope, type Scope } from './scope.ts';
import type { Candidate, Locations, SkipReason, Source, SourceScan } from './source.ts';
import { toMillis } from './time.ts';
import { vscodeCopilotSource } from './vscode-copilot.ts';

export const SOURCES: Record<SourceName, Source> = {
  claude: claudeSource,
  codex: codexSource,
  copilot: vscodeCopilotSource,
  copilot_cli: copilotCliSource,
  cursor: cursorSource,
  opencode: openCodeSource,
  pi: piSource,
  devin: devinSource,
};

export interface HarvestOptions {
  sources: readonly SourceName[];
  locations: Locations;
  scope: Scope;
  /** Sessions last active before this instant are left out (undefined: no limit). */
  since?: number;
  /** 0 = no limit. */
  maxSessions: number;
  /** Sessions whose first prompt contains one of these are left out. */
  excludeMarkers?: string[];
}

/** Why a session found on disk is not in the harvest. */
export type LeftOut = SkipReason | 'window' | 'scope' | 'own' | 'excluded' | 'limit';

export interface SourceReport {
  source: SourceName;
  title: string;
  roots: string[];
  present: boolean;
  notes: string[];
  /** Sessions found on disk. */
  found: number;
  harvested: number;
  /** Bytes of the harvested sessions' transcripts. */
  bytes: number;
  /** Harvested sessions per project ('' for none recorded). */
  projects: Record<string, number>;
  /** The first start and the last end among the harvested sessions. */
  first: string;
  last: string;
  leftOut: Partial<Record<LeftOut, number>>;
}

export interface HarvestResult {
  digests: SessionDigest[];
  sources: SourceReport[];
}

function emptyReport(scan: SourceScan): SourceReport {
  return {
    source: scan.source,
    title: SOURCE_TITLES[scan.source],
    roots: scan.roots,
    present: scan.present,
    notes: scan.notes,
    found: scan.candidates.length,
    harvested: 0,
    bytes: 0,
    projects: {},
    first: '',
    last: '',
    leftOut: {},
  };
}

function leave(report: SourceReport, why: LeftOut): void {
  report.leftOut[why] = (report.leftOut[why] ?? 0) + 1;
}

function keep(report: SourceReport, digest: SessionDigest, candidate: Candidate): void {
  report.harvested++;
  report.bytes += candidate.bytes;
  report.projects[digest.project] = (report.projects[digest.project] ?? 0) + 1;
  if (digest.started_at && (!report.first || digest.started_at < report.first)) report.first = digest.started_at;
  const end = digest.ended_at || digest.started_at;
  if (end && end > report.last) report.last = end;
}

/** Why a read session is left out, or undefined to keep it. */
function judge(digest: SessionDigest, candidate: Candidate, options: HarvestOptions): LeftOut | undefined {
  if (options.since !== undefined && (toMillis(digest.ended_at) ?? candidate.updatedMs) < options.since)
    return 'window';
  if (isOwnSession(digest)) return 'own';
  if (!inScope(options.scope, digest.project, candidate.workspaceSlug)) return 'scope';
  const first = digest.user_prompts[0] ?? '';
  if (options.excludeMarkers?.some((m) => first.includes(m))) return 'excluded';
  return undefined;
}

export function harvest(options: HarvestOptions): HarvestResult {
  const scans: SourceScan[] = [];
  try {
    for (const name of SOURCE_NAMES)
      if (options.sources.includes(name)) scans.push(SOURCES[name].scan(options.locations));
    const reports = new Map(scans.map((s) => [s.source, emptyReport(s)]));
    const queue = scans.flatMap((s) => s.candidates.map((c) => ({ source: s.source, c })));
    queue.sort((a, b) => b.c.updatedMs - a.c.updatedMs || a.c.where.localeCompare(b.c.where));
    const digests: SessionDigest[] = [];
    for (const { source, c } of queue) {
      const report = reports.get(source)!;
      if (options.since !== undefined && c.updatedMs < options.since) {
        leave(report, 'window');
        continue;
      }
      if (options.maxSessions > 0 && digests.length >= options.maxSessions) {
        leave(report, 'limit');
        continue;
      }
      const result = c.read();
      if ('skipped' in result) {
        leave(report, result.skipped);
        continue;
      }
      const why = judge(result.digest, c, options);
      if (why) {
        leave(report, why);
        continue;
      }
      digests.push(result.digest);
      keep(report, result.digest, c);
    }
    const end = (d: SessionDigest) => d.ended_at || d.started_at;
    digests.sort((a, b) => end(b).localeCompare(end(a)));
    return { digests, sources: [...reports.values()] };
  } finally {
    for (const s of scans) s.close();
  }
}
