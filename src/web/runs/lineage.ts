/**
 * The lineage of a pool run's candidates (`pool/lineage.json`): every candidate with its
 * parents, what the gate did with it and whether it is in the pool, for the dashboard's tree.
 */
import { LineageFileSchema, type LineageFile } from '../../run/records.ts';
import { decisionOf, type Decision } from './decision.ts';
import { parseJsonFile } from '../files/file-cache.ts';
import type { RunDir } from '../../run/layout.ts';

export interface LineageView {
  /** False: the run keeps one current skill (no `optimizer.pool_size`). */
  pool: boolean;
  members: string[];
  /** Without the per-item scores and edits: the tree needs neither. */
  nodes: (Omit<LineageFile['nodes'][number], 'item_scores' | 'edits'> & { decision: Decision })[];
  problems: string[];
}

export function readLineage(run: RunDir): LineageView {
  const read = parseJsonFile(
    run.root,
    run.path('pool', 'lineage.json'),
    LineageFileSchema,
    'the lineage of the candidate pool ({members, nodes})',
  );
  if (!read.ok) return { pool: false, members: [], nodes: [], problems: read.missing ? [] : [read.error] };
  return {
    pool: true,
    members: read.value.members,
    nodes: read.value.nodes.map(({ item_scores: _s, edits: _e, ...n }) => ({ ...n, decision: decisionOf(n.action) })),
    problems: [],
  };
}
