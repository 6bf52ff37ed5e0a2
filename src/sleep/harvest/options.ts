/**
 * A harvest's settings from the Sleep config and the command line (the command line wins):
 * which sources, which projects, since when, how many sessions at most.
 */
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { didYouMean } from '../../util/suggest.ts';
import { expandHome, type SleepConfig } from '../config.ts';
import { SOURCE_NAMES, type SourceName } from './digest.ts';
import type { HarvestOptions } from './harvest.ts';
import { resolveLocations } from './locations.ts';
import { scopeOf } from './scope.ts';
import { parseSince } from './time.ts';

export interface HarvestFlags {
  /** Source names; each may be a comma-separated list, or `all`. */
  source?: string[];
  /** Project folders, or `all`. */
  project?: string[];
  since?: string;
  maxSessions?: number;
}

export interface ResolvedHarvest extends HarvestOptions {
  /** The window in words (`since 2026-11-27 19:00 UTC (72h)`, `all history`). */
  windowText: string;
}

export function sourcesOf(names: string[]): SourceName[] {
  const words = names
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter(Boolean);
  if (words.includes('all')) return [...SOURCE_NAMES];
  for (const w of words) {
    if (!(SOURCE_NAMES as readonly string[]).includes(w))
      throw new UserError(
        `--source: unknown source '${w}'${didYouMean(w, SOURCE_NAMES)}; the sources are ${SOURCE_NAMES.join(', ')} (or all)`,
      );
  }
  return SOURCE_NAMES.filter((s) => words.includes(s));
}

export function resolveHarvest(
  config: SleepConfig,
  flags: HarvestFlags,
  options: { environment?: Record<string, string | undefined>; cwd?: string; now?: number } = {},
): ResolvedHarvest {
  const environment = options.environment ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now();
  const h = config.harvest;
  const sources = flags.source?.length ? sourcesOf(flags.source) : h.sources === 'all' ? [...SOURCE_NAMES] : h.sources;
  const projects = flags.project?.length
    ? flags.project.includes('all')
      ? 'all'
      : flags.project.map((p) => expandHome(p))
    : h.projects === 'all' || h.projects === 'invoked'
      ? h.projects
      : h.projects.map((p) => path.resolve(expandHome(p)));
  let since: number | undefined;
  let windowText: string;
  if (flags.since !== undefined) {
    since = parseSince(flags.since, now);
    if (since === undefined)
      throw new UserError(
        `--since: expected a duration back from now (72h, 7d, 2w, 30m) or a date (2026-11-01, 2026-11-01T09:00), got '${flags.since}'`,
      );
    windowText = `since ${new Date(since).toISOString().slice(0, 16).replace('T', ' ')} UTC (--since ${flags.since})`;
  } else if (h.lookback_hours > 0) {
    since = now - h.lookback_hours * 3_600_000;
    windowText = `since ${new Date(since).toISOString().slice(0, 16).replace('T', ' ')} UTC (the last ${h.lookback_hours}h)`;
  } else windowText = 'all history';
  const maxSessions = flags.maxSessions ?? h.max_sessions;
  if (!Number.isInteger(maxSessions) || maxSessions < 0)
    throw new UserError(`--max-sessions: expected a whole number (0 = no limit), got ${flags.maxSessions}`);
  return {
    sources,
    locations: resolveLocations(h, environment, process.platform, os.homedir()),
    scope: scopeOf(projects, cwd),
    since,
    maxSessions,
    excludeMarkers: h.exclude_markers,
    windowText,
  };
}
