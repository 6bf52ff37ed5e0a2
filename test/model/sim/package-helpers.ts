/** Running the simulated target under a skill package, as the engine sends one: `skillFiles` on each request under the skill. */
import fs from 'node:fs';
import path from 'node:path';
import { SimEnv } from '../../../src/envs/sim/env.ts';
import type { Item, Trajectory } from '../../../src/envs/types.ts';
import { SimModel } from '../../../src/model/sim/backend.ts';
import type { ChatModel } from '../../../src/model/types.ts';
import type { PackageFile, PackageFiles } from '../../../src/skill/package/package.ts';
import { ROOT } from '../../helpers/cli.ts';

export const TRAITS = { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 };
export const sim = new SimModel('sim-1', 42, 0, TRAITS);

export function textFiles(texts: Record<string, string>): Map<string, PackageFile> {
  return new Map(Object.entries(texts).map(([p, text]) => [p, { kind: 'text', text, mode: 0o644 }]));
}

/** The sim target with `files` beside its SKILL.md (none: a single document). */
export function targetWith(files?: PackageFiles): ChatModel {
  return {
    id: sim.id,
    readsSkillFiles: true,
    complete: (req) => sim.complete(files && req.skill !== undefined ? { ...req, skillFiles: files } : req),
  };
}

export const env = new SimEnv({ n_train: 60, n_val: 30, n_test: 60, noise: 0, data_seed: 7 });

export async function rollAll(items: Item[], skill: string, files?: PackageFiles): Promise<Trajectory[]> {
  const out: Trajectory[] = [];
  for (const item of items) out.push(await env.rollout(item, skill, { target: targetWith(files), seed: 1 }));
  return out;
}

export const hardScore = (ts: Trajectory[]) => ts.reduce((n, t) => n + t.hard, 0) / ts.length;

/** The demo's initial package (`configs/sim/package-skill`): SKILL.md and its references. */
export function demoPackage(): { skill: string; files: Map<string, PackageFile> } {
  const dir = path.join(ROOT, 'configs/sim/package-skill');
  const read = (p: string) => fs.readFileSync(path.join(dir, p), 'utf8');
  const refs = fs.readdirSync(path.join(dir, 'references')).map((f) => `references/${f}`);
  return { skill: read('SKILL.md'), files: textFiles(Object.fromEntries(refs.map((p) => [p, read(p)]))) };
}
