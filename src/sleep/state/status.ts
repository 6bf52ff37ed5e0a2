/**
 * What `skillopt sleep status` and `history` show: the last nights, the latest staged night of
 * the project with what waits for adoption and what was adopted, an interrupted adoption, and a
 * handoff waiting for answers. Reads only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJson } from '../../run/atomic.ts';
import { alignRows } from '../../util/align-rows.ts';
import { journalFile, pendingDocuments, readReceipt } from '../adoption/adopt.ts';
import { tilde } from '../harvest/report.ts';
import { safeLine } from '../staging/report.ts';
import { scheduledJobs } from '../schedule/schedule.ts';
import { lastSkip, type Skip } from './skips.ts';
import { stagedNights } from '../staging/staging.ts';
import { readState, type NightRecord } from './state.ts';

export interface StatusView {
  state_dir: string;
  night: number;
  project: string;
  history: NightRecord[];
  /** The project's last night: when it ran and what it staged. */
  last_night?: { night: number; started_at: string; ended_at: string; outcome: string; staged: string[]; note: string };
  /** A night skipped (the machine was busy) after the last one ran. */
  skipped?: Skip;
  /** The nightly job installed for the project (`skillopt sleep schedule`). */
  schedule?: { scheduler: string; hour: number; minute: number; since: string };
  latest?: {
    dir: string;
    night: number;
    pending: {
      name: string;
      kind: string;
      live_path: string;
      action: string;
      baseline: number | null;
      candidate: number | null;
    }[];
    /** The size of the proposals' diff (diff.patch). */
    diff: { file: string; added: number; removed: number } | null;
    adopted: { name: string; live_path: string; at: string; rolled_back: boolean }[];
    report: string;
  };
  interrupted_adoption: boolean;
  handoff?: { dir: string; prompts: number };
}

export function statusOf(stateDir: string, project: string, handoffDirs: string[]): StatusView {
  const state = readState(stateDir);
  const view: StatusView = {
    state_dir: stateDir,
    night: state.night,
    project,
    history: state.history.filter((h) => h.project === project).slice(-5),
    interrupted_adoption: fs.existsSync(journalFile(stateDir)),
  };
  const last = view.history.at(-1);
  if (last)
    view.last_night = {
      night: last.night,
      started_at: last.started_at,
      ended_at: last.ended_at,
      outcome: last.outcome,
      staged: last.documents.filter((d) => d.accepted).map((d) => d.name),
      note: last.note,
    };
  const skip = lastSkip(stateDir, project);
  if (skip && (!last || skip.at > last.started_at)) view.skipped = skip;
  const job = scheduledJobs(stateDir).find((j) => j.project === project);
  if (job) view.schedule = { scheduler: job.scheduler, hour: job.hour, minute: job.minute, since: job.at };
  const [latest] = stagedNights(stateDir, project);
  if (latest) {
    view.latest = {
      dir: latest.dir,
      night: latest.manifest.night,
      pending: pendingDocuments(latest.dir).map((d) => ({
        name: d.name,
        kind: d.kind,
        live_path: d.live_path,
        action: d.action,
        baseline: d.baseline,
        candidate: d.candidate,
      })),
      diff: diffSize(path.join(latest.dir, 'diff.patch')),
      adopted: readReceipt(latest.dir).adoptions.flatMap((a) =>
        a.documents.map((d) => ({
          name: d.name,
          live_path: d.live_path,
          at: a.at,
          rolled_back: Boolean(a.rolled_back),
        })),
      ),
      report: path.join(latest.dir, 'report.md'),
    };
  }
  for (const dir of handoffDirs) {
    const pending = readJson<{ pending?: unknown[] }>(path.join(dir, 'pending.json'));
    if (pending?.pending) view.handoff = { dir, prompts: pending.pending.length };
  }
  return view;
}

/** Lines added and removed by a unified diff (its headers not counted). */
function diffSize(file: string): { file: string; added: number; removed: number } | null {
  if (!fs.existsSync(file)) return null;
  let added = 0;
  let removed = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) added++;
    else if (line.startsWith('-')) removed++;
  }
  return { file, added, removed };
}

const when = (iso: string) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : '');
const score = (v: number | null) => (v === null ? '—' : v.toFixed(3));

export function historyRows(history: NightRecord[]): string[] {
  const rows = [['night', 'started (UTC)', 'project', 'outcome', 'sessions', 'tasks']];
  const last = ['documents'];
  for (const h of history) {
    const docs = h.documents
      .map((d) => `${safeLine(d.name, 40)}: ${d.action} ${score(d.baseline)}→${score(d.candidate)}`)
      .join('; ');
    rows.push([
      String(h.night),
      when(h.started_at),
      tilde(h.project || '(all)'),
      h.outcome,
      String(h.n_sessions),
      String(h.n_tasks),
    ]);
    last.push(docs || safeLine(h.note, 60));
  }
  // The documents, of any length, follow the aligned columns.
  return alignRows(rows, 4).map((line, i) => `${line}  ${last[i]}`);
}

export function formatStatus(v: StatusView): string {
  const lines = [
    `Sleep: ${tilde(v.state_dir)}, ${v.night} night(s) so far; project ${tilde(v.project || '(every project)')}`,
  ];
  if (v.interrupted_adoption)
    lines.push(
      '  an adoption was interrupted: the next `skillopt sleep adopt` or `rollback` finishes it (the files are restored first)',
    );
  const at = (h: number, m: number) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
  lines.push(
    v.schedule
      ? `  scheduled: every night at ${at(v.schedule.hour, v.schedule.minute)} (${v.schedule.scheduler}, since ${when(v.schedule.since)} UTC)`
      : '  not scheduled: `skillopt sleep schedule` runs a night every night',
  );
  if (v.last_night) {
    const n = v.last_night;
    const what =
      n.outcome === 'staged'
        ? n.staged.length
          ? `staged ${n.staged.map((s) => safeLine(s, 40)).join(', ')}`
          : 'staged nothing (no proposal passed the gate)'
        : `${n.outcome}${n.note ? `: ${safeLine(n.note, 100)}` : ''}`;
    lines.push(`  last night: ${n.night}, ran ${when(n.started_at)} UTC, ${what}`);
  }
  if (v.skipped)
    lines.push(
      `  skipped a night at ${when(v.skipped.at)} UTC, the machine was busy: ${safeLine(v.skipped.reason, 200)}`,
    );
  if (v.history.length) lines.push('', 'Last nights:', ...historyRows(v.history).map((l) => `  ${l}`));
  else lines.push('', 'No night yet for this project: `skillopt sleep dry-run` shows what one would learn.');
  if (v.latest) {
    lines.push('', `Latest staged night: ${v.latest.night} (${tilde(v.latest.dir)})`);
    for (const p of v.latest.pending)
      lines.push(
        `  waiting for adoption: ${p.kind} ${safeLine(p.name)} (${tilde(p.live_path)}), gate ${p.action.replace(/[^\w-]/g, '').slice(0, 40)}: val ${score(p.baseline)} → ${score(p.candidate)}`,
      );
    if (v.latest.diff && v.latest.pending.length)
      lines.push(`  diff: +${v.latest.diff.added} -${v.latest.diff.removed} lines (${tilde(v.latest.diff.file)})`);
    for (const a of v.latest.adopted)
      lines.push(
        `  ${a.rolled_back ? 'adopted, then rolled back' : 'adopted'}: ${safeLine(a.name)} (${tilde(a.live_path)}) at ${when(a.at)} UTC`,
      );
    if (!v.latest.pending.length && !v.latest.adopted.length)
      lines.push('  nothing to adopt (no proposal passed the gate)');
    lines.push(`  report: ${tilde(v.latest.report)}`);
    if (v.latest.pending.length)
      lines.push('  adopt with `skillopt sleep adopt`; undo an adoption with `skillopt sleep rollback`');
  }
  if (v.handoff)
    lines.push(
      '',
      `Handoff: ${v.handoff.prompts} prompt(s) wait for answers in ${tilde(path.join(v.handoff.dir, 'PROMPTS.md'))}`,
    );
  return lines.join('\n');
}
