/**
 * The candidate pool (`optimizer.pool_size`): instead of one current skill, the best few
 * candidates are kept with their per-item selection scores; each step's parent is drawn from
 * their Pareto front, so a candidate that alone solves some items is improved too. Every
 * candidate the run made (taken in or not) is a node of the lineage, with its parents, written to
 * `pool/lineage.json`; the members' skills are in `pool/<id>.md`.
 */
import type { z } from 'zod';
import { readJson } from '../../run/atomic.ts';
import type { LineageNodeSchema } from '../../run/records.ts';
import type { RunDir } from '../../run/layout.ts';
import { packageHash, type SkillPackage } from '../../skill/package/package.ts';
import { readSkillFile, writeSkillFile } from '../../run/skill-files.ts';
import type { Edit } from '../../skill/edits.ts';
import { seedFrom, unitHash } from '../../util/random.ts';
import { scoredSkill, type SkillState } from '../stages/gate.ts';
import { pickFromFront, toDrop } from './front.ts';

export type NodeKind = LineageNode['kind'];

/** A node of the lineage; `edits` as the engine holds them. */
export type LineageNode = Omit<z.infer<typeof LineageNodeSchema>, 'edits'> & { edits?: Edit[] };

export interface PoolMember extends SkillState {
  /** Per selection item, its score on the gate metric. */
  values: (number | undefined)[];
}

interface LineageFile {
  members: string[];
  nodes: LineageNode[];
}

export const LINEAGE_FILE = 'pool/lineage.json';
export const memberFile = (id: string) => `pool/${id}.md`;

export class CandidatePool {
  constructor(
    readonly size: number,
    public members: PoolMember[],
    readonly nodes: LineageNode[] = [],
  ) {}

  /** A copy to change without changing this pool (a step's, until its commit takes it in). */
  copy(): CandidatePool {
    return new CandidatePool(
      this.size,
      [...this.members],
      this.nodes.map((n) => ({ ...n })),
    );
  }

  node(id: string): LineageNode | undefined {
    return this.nodes.find((n) => n.id === id);
  }

  member(id: string): PoolMember | undefined {
    return this.members.find((m) => m.origin === id);
  }

  /** The member whose skill this is, by content. */
  memberWith(skill: SkillPackage): PoolMember | undefined {
    const hash = packageHash(skill);
    return this.members.find((m) => packageHash(m) === hash);
  }

  /** The parent of `step`: drawn from the front, the same for the same seed and step. */
  pick(seed: number, step: number): PoolMember {
    return this.members[pickFromFront(this.members, unitHash('pool-parent', seedFrom(seed), step))]!;
  }

  /**
   * Records a candidate; a `member` joins the pool, which then drops members over its size
   * (never those in `keep`: the current and the best skill). Returns the dropped ids.
   */
  add(node: LineageNode, member: PoolMember | undefined, keep: readonly string[], step: number): string[] {
    const at = this.nodes.findIndex((n) => n.id === node.id);
    if (at >= 0) this.nodes.splice(at, 1);
    this.nodes.push({ ...node, in_pool: member !== undefined });
    if (!member) return [];
    this.members = [...this.members.filter((m) => m.origin !== member.origin), member];
    const dropped: string[] = [];
    while (this.members.length > this.size) {
      const k = toDrop(
        this.members.map((m, order) => ({ values: m.values, score: m.score, order, keep: keep.includes(m.origin) })),
      );
      if (k === undefined) break;
      const [gone] = this.members.splice(k, 1);
      dropped.push(gone!.origin);
      const n = this.node(gone!.origin);
      if (n) Object.assign(n, { in_pool: false, dropped_at: step });
    }
    return dropped;
  }

  /** `id`'s line of first parents, itself first. */
  line(id: string): string[] {
    const out: string[] = [];
    for (let n = this.node(id); n && !out.includes(n.id); n = n.parents[0] ? this.node(n.parents[0]) : undefined)
      out.push(n.id);
    return out;
  }

  save(dir: RunDir): void {
    for (const m of this.members) {
      const file = dir.path(memberFile(m.origin));
      const saved = readSkillFile(dir, file);
      if (!saved || packageHash(saved) !== packageHash(m)) writeSkillFile(dir, file, m);
    }
    const ids = this.members.map((m) => m.origin);
    const file: LineageFile = { members: ids, nodes: this.nodes.map((n) => ({ ...n, in_pool: ids.includes(n.id) })) };
    dir.writeJson(dir.path(LINEAGE_FILE), file);
  }

  /**
   * The pool as of the last commit: its members (ids from `runtime_state.json`, the commit point)
   * and the lineage up to `lastStep` (nodes of a step that did not commit are dropped).
   */
  static load(dir: RunDir, size: number, memberIds: readonly string[] | undefined, lastStep: number): CandidatePool {
    const file = readJson<LineageFile>(dir.path(LINEAGE_FILE));
    if (!file) throw new Error(`cannot resume: ${dir.path(LINEAGE_FILE)} is missing or unreadable`);
    const nodes = file.nodes
      .filter((n) => n.step <= lastStep)
      .map(({ dropped_at, ...n }) => (dropped_at !== undefined && dropped_at <= lastStep ? { ...n, dropped_at } : n));
    // A rebuilt runtime state does not name the members: the lineage's last list, as far as it was committed.
    const ids = memberIds ?? file.members.filter((id) => nodes.some((n) => n.id === id));
    const members = ids.map((id) => {
      const node = nodes.find((n) => n.id === id);
      const skill = readSkillFile(dir, dir.path(memberFile(id)));
      if (!node?.item_scores || skill === undefined || node.score === null)
        throw new Error(
          `cannot resume: pool member ${id} is not in ${dir.path(LINEAGE_FILE)} with its skill in ${memberFile(id)}`,
        );
      return { ...scoredSkill(skill, node.score, id), values: node.item_scores.map((v) => v ?? undefined) };
    });
    return new CandidatePool(size, members, nodes);
  }
}
