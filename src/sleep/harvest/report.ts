/**
 * What a harvest found, for the console: per source, the sessions kept, their size, projects
 * and time span, then why the rest was left out. Paths are shown with `~` for the home folder.
 */
import os from 'node:os';
import { alignRows } from '../../util/align-rows.ts';
import { count } from '../../util/plural.ts';
import type { HarvestResult, LeftOut, SourceReport } from './harvest.ts';

const LEFT_OUT_WORDS: Record<LeftOut, string> = {
  window: 'outside the time window',
  scope: 'in other projects',
  own: "skillopt's own runs",
  excluded: 'excluded by a marker',
  empty: 'with no prompt or answer',
  unreadable: 'unreadable',
  'sub-agent': "sub-agents' threads",
  limit: 'over the session limit (not read)',
};

export function tilde(p: string, home = os.homedir()): string {
  return home && (p === home || p.startsWith(`${home}/`)) ? `~${p.slice(home.length)}` : p;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** `2026-11-30 19:04` (UTC) from an ISO time. */
function minute(iso: string): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : '';
}

function span(r: SourceReport): string {
  if (!r.first && !r.last) return '';
  const a = minute(r.first || r.last);
  const b = minute(r.last || r.first);
  return a === b ? a : a.slice(0, 10) === b.slice(0, 10) ? `${a} – ${b.slice(11)}` : `${a} – ${b}`;
}

function projectsText(r: SourceReport): string {
  const entries = Object.entries(r.projects).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const shown = entries.slice(0, 3).map(([p, n]) => `${p ? tilde(p) : '(no folder)'} (${n})`);
  return entries.length > 3 ? `${shown.join(', ')}, +${entries.length - 3} more` : shown.join(', ');
}

export function formatHarvest(result: HarvestResult): string {
  const rows = [['source', 'sessions', 'size', 'time (UTC)', 'projects']];
  const absent: string[] = [];
  for (const r of result.sources) {
    if (!r.present && r.found === 0) {
      absent.push(`${r.title} (${r.roots.map((p) => tilde(p)).join(', ')})`);
      continue;
    }
    rows.push([r.title, String(r.harvested), formatBytes(r.bytes), span(r), projectsText(r)]);
  }
  const out: string[] = [];
  if (rows.length > 1) {
    const [header, ...body] = alignRows(rows, 1).map((l) => `  ${l}`);
    out.push(header!, ...body);
  }
  if (absent.length) out.push(`  not found: ${absent.join('; ')}`);
  for (const r of result.sources) {
    const why = (Object.keys(LEFT_OUT_WORDS) as LeftOut[])
      .filter((k) => r.leftOut[k])
      .map((k) => `${r.leftOut[k]} ${LEFT_OUT_WORDS[k]}`);
    if (why.length) out.push(`  ${r.title}: left out ${why.join(', ')} (of ${count(r.found, 'session')} found)`);
    for (const note of r.notes) out.push(`  ${r.title}: ${note}`);
  }
  return out.join('\n');
}
