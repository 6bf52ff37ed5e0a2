/**
 * What a completed night leaves in its directory: the tasks it learned from, `report.json` and
 * `report.md`, the diff of each proposal, and `manifest.json` (the proposals, pinned), written
 * last so that a night stopped before it is never offered for adoption.
 */
import path from 'node:path';
import { writeFileAtomic, writeJsonAtomic } from '../../run/atomic.ts';
import { unifiedDiff } from '../../skill/document.ts';
import type { LiveDocument } from '../documents/documents.ts';
import { renderReport, type DocumentReport, type NightReport } from '../staging/report.ts';
import { writeManifest, type Proposal } from '../staging/staging.ts';
import type { TaskRecord } from '../tasks/task.ts';
import { writeTasksFile } from '../tasks/tasks-file.ts';
import type { Consolidation } from './consolidate.ts';
import type { NightModels } from './models.ts';
import type { NightOptions } from './night-options.ts';
import { auditProposal } from './night-audit.ts';
import type { SkillLint } from '../../audit/audit.ts';

export interface NightResults {
  dir: string;
  nightNo: number;
  project: string;
  started: Date;
  backend: string;
  nSessions: number;
  miner: NightReport['miner'];
  tasks: TaskRecord[];
  results: { doc: LiveDocument; result: Consolidation }[];
  skipped: NightReport['skipped'];
  models: NightModels;
  /** The audit of the proposals (`consolidate.audit`); none when its checks are off. */
  lint?: SkillLint;
}

export function splitCounts(tasks: TaskRecord[]): Record<'train' | 'val' | 'test', number> {
  return {
    train: tasks.filter((t) => t.split === 'train').length,
    val: tasks.filter((t) => t.split === 'val').length,
    test: tasks.filter((t) => t.split === 'test').length,
  };
}

export function stage(o: NightOptions, r: NightResults): NightReport {
  const c = o.loaded.config;
  const { dir, nightNo, project, backend, tasks } = r;
  const totals = r.models.stack.ledger.totals();
  const proposals: Proposal[] = [];
  const diffs: string[] = [];
  const documents: DocumentReport[] = r.results.map(({ doc, result }) => {
    const { candidateText: _c, proposedText, ...rest } = result;
    const audit = result.accepted ? auditProposal(r.lint, doc.text, proposedText) : undefined;
    const staged = result.accepted && proposedText !== doc.text && !audit?.rejects;
    if (staged) {
      proposals.push({
        name: doc.name,
        kind: doc.kind,
        livePath: doc.path,
        liveRealpath: doc.realpath,
        liveSha256: doc.sha256,
        text: proposedText,
        action: result.action,
        baseline: result.baseline?.gate ?? null,
        candidate: result.candidate?.gate ?? null,
        ...(doc.package
          ? { package: { liveDir: doc.package.dir, liveFiles: doc.package.pins, files: doc.package.files } }
          : {}),
      });
      diffs.push(unifiedDiff(doc.text, proposedText, { before: doc.exists ? doc.path : '/dev/null', after: doc.path }));
    }
    const audited = audit ? { audit: { ...audit.record, findings: audit.findings } } : {};
    const reason = audit?.rejects ? `not staged: the audit found ${audit.findings[0]}` : rest.reason;
    return { ...rest, reason, ...audited, kind: doc.kind, live_path: doc.path, staged };
  });
  const report: NightReport = {
    night: nightNo,
    project,
    started_at: r.started.toISOString(),
    ended_at: new Date().toISOString(),
    backend,
    window: o.harvest.windowText,
    n_sessions: r.nSessions,
    miner: r.miner,
    n_tasks: tasks.length,
    splits: splitCounts(tasks),
    gate_metric: c.consolidate.gate ? c.consolidate.gate_metric : 'none (gate off)',
    documents,
    skipped: r.skipped,
    usage: {
      calls: totals.calls,
      input_tokens: totals.inputTokens,
      output_tokens: totals.outputTokens,
      cost_usd: totals.costUsd,
      unpriced_calls: totals.unpricedCalls,
    },
    notes: [],
  };
  writeTasksFile(path.join(dir, 'tasks.json'), {
    project,
    transcript_source: r.miner,
    n_sessions: r.nSessions,
    target_skill_path: r.results[0]?.doc.path ?? '',
    reviewed: false,
    tasks,
  });
  writeJsonAtomic(path.join(dir, 'report.json'), report);
  writeFileAtomic(path.join(dir, 'report.md'), renderReport(report, tasks));
  if (diffs.length) writeFileAtomic(path.join(dir, 'diff.patch'), diffs.join('\n'));
  writeManifest(dir, { night: nightNo, project, created_at: new Date().toISOString(), backend }, proposals);
  return report;
}
