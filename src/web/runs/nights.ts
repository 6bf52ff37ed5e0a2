/**
 * Sleep's nights for the dashboard: the list beside the training runs (each night's date, state,
 * gate scores and edits, and the nights skipped because the machine was busy) and one night's
 * page (its staged documents, each with its diff). Everything is read from the Sleep state folder
 * (the one `skillopt sleep status` reads), each file through safe-path.ts and a zod schema. A night
 * is named by its folder's name (`20261130-031702`), never by a path from a request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parsePatch } from 'diff';
import { z } from 'zod';
import { ReceiptSchema, type Receipt } from '../../sleep/adoption/adopt.ts';
import { SkipsSchema, skipsFile } from '../../sleep/state/skips.ts';
import { ManifestSchema, NIGHT_NAME, nightsDir, type Manifest } from '../../sleep/staging/staging.ts';
import { StateSchema, stateFile, type NightRecord } from '../../sleep/state/state.ts';
import { parseJsonFile, readTextCapped } from '../files/file-cache.ts';
import { HttpError, listInside, realDir, resolveInside } from '../files/safe-path.ts';
import { MAX_DIFF_BYTES, patchLines, type SkillDiff } from './skills.ts';

/** What report.json says of each document: the part the dashboard shows. */
const ReportSchema = z
  .object({
    documents: z
      .array(
        z
          .object({
            document: z.string(),
            staged: z.boolean().default(false),
            edits: z.array(z.object({ status: z.string() }).loose()).default([]),
          })
          .loose(),
      )
      .default([]),
  })
  .loose();

const MAX_REPORT_BYTES = 256 << 10;

/**
 * staged: waiting for adoption; adopted; rolled_back: its adoption was undone; nothing_staged: no
 * proposal passed the gate; skipped: the machine was busy; stopped, no_tasks, handoff_pending: as
 * `sleep history` says.
 */
export type NightState = 'staged' | 'adopted' | 'rolled_back' | 'nothing_staged' | 'skipped' | NightRecord['outcome'];

export interface NightDocument {
  name: string;
  kind?: string;
  live_path?: string;
  action: string;
  baseline: number | null;
  candidate: number | null;
  /** Staged for adoption (passed the gate and changes the document). */
  staged: boolean;
  /** The edits the night applied to it (undefined when its report does not say). */
  edits?: number;
  adopted: boolean;
}

export interface NightRow {
  /** The night's folder name: its id in the API (absent when the night left no folder). */
  id?: string;
  night?: number;
  project: string;
  /** When it ran (or was skipped), ISO. */
  at: string;
  state: NightState;
  /** Why it was skipped or stopped. */
  reason?: string;
  documents: NightDocument[];
  /** The edits of the staged documents. */
  edits: number;
  problems: string[];
}

export interface NightView extends NightRow {
  id: string;
  backend: string;
  documents: (NightDocument & { diff: Omit<SkillDiff, 'a' | 'b'> | null })[];
  adoptions: Receipt['adoptions'];
  /** Documents left to adopt. */
  pending: string[];
  /** Whether the night has an adoption to roll back. */
  canRollback: boolean;
  report?: string;
}

export class SleepNights {
  constructor(readonly stateDir: string) {}

  private get root(): string {
    return realDir(nightsDir(this.stateDir));
  }

  /** The folder of a night named in a request; 400 for anything but a night's name, 404 when there is none. */
  dirOf(id: string | undefined): string {
    if (!id)
      throw new HttpError(400, 'the night parameter is missing (a night id such as 20261130-031702, from /api/nights)');
    if (!NIGHT_NAME.test(id))
      throw new HttpError(400, `not a night id: ${JSON.stringify(id)} (expected YYYYMMDD-HHMMSS, from /api/nights)`);
    const dir = resolveInside(this.root, id, 'night', 'the Sleep nights folder');
    if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory())
      throw new HttpError(404, `no night ${id} in ${nightsDir(this.stateDir)}`);
    return dir;
  }

  /** Every night, newest first, and the files that could not be read. */
  list(): { stateDir: string; nights: NightRow[]; problems: string[] } {
    const problems: string[] = [];
    const stateDirReal = realDir(this.stateDir);
    const state = parseJsonFile(
      stateDirReal,
      stateFile(stateDirReal),
      StateSchema,
      "Sleep's state (night, last_harvest, history)",
    );
    if (!state.ok && !state.missing) problems.push(state.error);
    const history = state.ok ? state.value.history : [];
    const rows: NightRow[] = [];
    const seen = new Set<string>();
    for (const record of history) {
      const id = this.idOf(record.dir);
      if (id) seen.add(id);
      rows.push(
        id
          ? this.row(id, record)
          : {
              night: record.night,
              project: record.project,
              at: record.started_at,
              state: record.outcome,
              ...(record.note ? { reason: record.note } : {}),
              documents: record.documents.map((d) => ({ ...d, staged: false, adopted: false })),
              edits: 0,
              problems: [],
            },
      );
    }
    // A staged night the history no longer holds (it keeps the last 200) is still offered.
    for (const e of listInside(this.root, this.root)) {
      if (
        e.isDirectory() &&
        NIGHT_NAME.test(e.name) &&
        !seen.has(e.name) &&
        this.manifest(path.join(this.root, e.name)).ok
      )
        rows.push(this.row(e.name));
    }
    const skips = parseJsonFile(
      stateDirReal,
      skipsFile(stateDirReal),
      SkipsSchema,
      'the skipped nights (by project: at, reason)',
    );
    if (!skips.ok && !skips.missing) problems.push(skips.error);
    for (const [project, skip] of Object.entries(skips.ok ? skips.value : {}))
      rows.push({ project, at: skip.at, state: 'skipped', reason: skip.reason, documents: [], edits: 0, problems: [] });
    rows.sort((a, b) => b.at.localeCompare(a.at));
    return { stateDir: this.stateDir, nights: rows, problems };
  }

  /** One night's page: its documents with their diffs, its adoptions, its report. */
  view(id: string | undefined): NightView {
    const dir = this.dirOf(id);
    const files = this.files(dir);
    const { manifest, receipt } = files;
    if (!manifest.ok)
      throw new HttpError(
        404,
        manifest.missing
          ? `the night ${id} staged nothing (it has no manifest.json: it stopped, or mined nothing)`
          : manifest.error,
      );
    const row = this.row(path.basename(dir), undefined, files);
    const patches = this.patches(dir, row.problems);
    // diff.patch holds the staged documents' patches, in the manifest's order.
    const documents = row.documents.map((d, i) => {
      const patch = d.staged ? (patches.find((p) => p.newFileName === d.live_path) ?? patches[i]) : undefined;
      return { ...d, diff: patch ? patchLines(patch) : null };
    });
    const report = readTextCapped(dir, path.join(dir, 'report.md'), MAX_REPORT_BYTES);
    return {
      ...row,
      id: path.basename(dir),
      backend: manifest.value.backend,
      documents,
      adoptions: receipt.ok ? receipt.value.adoptions : [],
      pending: documents.filter((d) => d.staged && !d.adopted).map((d) => d.name),
      canRollback: receipt.ok && receipt.value.adoptions.some((a) => !a.rolled_back),
      ...(report ? { report: report.text } : {}),
    };
  }

  /** The id of a night folder recorded in the state, when it lies in the nights folder. */
  private idOf(dir: string): string | undefined {
    if (!dir) return undefined;
    const name = path.basename(dir);
    return NIGHT_NAME.test(name) && realDir(path.dirname(dir)) === this.root ? name : undefined;
  }

  private manifest(dir: string) {
    return parseJsonFile<Manifest>(
      dir,
      path.join(dir, 'manifest.json'),
      ManifestSchema,
      'a staged night (schema, night, project, documents)',
    );
  }

  /** The per-document patches of the night's diff.patch. */
  private patches(dir: string, problems: string[]) {
    try {
      const read = readTextCapped(dir, path.join(dir, 'diff.patch'), 4 * MAX_DIFF_BYTES);
      if (!read) return [];
      if (read.truncated) {
        problems.push(`diff.patch is ${read.size} bytes, more than the dashboard shows; read it in the night's folder`);
        return [];
      }
      return parsePatch(read.text);
    } catch (err) {
      problems.push(`diff.patch: ${(err as Error).message}`);
      return [];
    }
  }

  /** A night's manifest, receipt of adoptions and report, parsed. */
  private files(dir: string) {
    return {
      manifest: this.manifest(dir),
      receipt: parseJsonFile<Receipt>(dir, path.join(dir, 'adopted.json'), ReceiptSchema, 'a receipt of adoptions'),
      report: parseJsonFile(dir, path.join(dir, 'report.json'), ReportSchema, "a night's report (documents)"),
    };
  }

  /** A night with a folder: its state from its manifest and receipt, its edits from its report. */
  private row(id: string, record?: NightRecord, files = this.files(path.join(this.root, id))): NightRow {
    const problems: string[] = [];
    const { manifest, receipt, report } = files;
    for (const r of [manifest, receipt, report]) if (!r.ok && !r.missing) problems.push(r.error);
    const adoptions = receipt.ok ? receipt.value.adoptions : [];
    const adopted = new Set(adoptions.filter((a) => !a.rolled_back).flatMap((a) => a.documents.map((d) => d.name)));
    const editsOf = (name: string) => {
      const doc = report.ok ? report.value.documents.find((d) => d.document === name) : undefined;
      return doc?.edits.filter((e) => e.status.startsWith('applied')).length;
    };
    const staged = manifest.ok ? manifest.value.documents : [];
    const documents: NightDocument[] = staged.map((d) => ({
      name: d.name,
      kind: d.kind,
      live_path: d.live_path,
      action: d.action,
      baseline: d.baseline,
      candidate: d.candidate,
      staged: true,
      edits: editsOf(d.name),
      adopted: adopted.has(d.name),
    }));
    // The documents the gate turned down, from the night's record.
    for (const d of record?.documents ?? []) {
      if (!documents.some((s) => s.name === d.name))
        documents.push({
          name: d.name,
          action: d.action,
          baseline: d.baseline,
          candidate: d.candidate,
          staged: false,
          edits: editsOf(d.name),
          adopted: false,
        });
    }
    const last = adoptions.at(-1);
    const state: NightState = !manifest.ok
      ? (record?.outcome ?? 'stopped')
      : last
        ? adopted.size
          ? 'adopted'
          : 'rolled_back'
        : staged.length
          ? 'staged'
          : 'nothing_staged';
    return {
      id,
      night: manifest.ok ? manifest.value.night : record?.night,
      project: manifest.ok ? manifest.value.project : (record?.project ?? ''),
      at: record?.started_at ?? (manifest.ok ? manifest.value.created_at : ''),
      state,
      ...(record?.note ? { reason: record.note } : {}),
      documents,
      edits: documents.filter((d) => d.staged).reduce((n, d) => n + (d.edits ?? 0), 0),
      problems,
    };
  }
}
