/**
 * A run's spec both ways: the trainer names its config file and publishes the run's plain
 * settings with a digest of everything else its rollouts depend on (`runSpecOf`); a worker loads
 * its own copy of that file from its own project directory, with its own environment, applies
 * the settings (each checked to be a plain setting) and checks the digests (`runConfigOf`). The
 * code, the files and the endpoints a worker uses are thus always its own.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { keyKind } from '../config/key-kinds.ts';
import { loadConfig, type LoadedConfig } from '../config/load.ts';
import { redact } from '../config/redact.ts';
import { ConfigSchema } from '../config/schema.ts';
import { leaves, setPath, type Tree } from '../config/tree.ts';
import { insideProject } from '../util/project-paths.ts';
import type { RunSpec } from './jobs.ts';

/** What a rollout depends on beyond the settings: the env and the roles a rollout calls. */
const PINNED = ['env.', 'model.target.', 'model.judge.'];
/** Keys of the env a rollout never reads (the skill comes with each job; outputs stay with the trainer). */
const UNPINNED = ['env.skill_init', 'env.out_root'];

const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 16);

/** The config's leaves, secrets left out (neither carried nor compared). */
function leavesOf(loaded: LoadedConfig): [string, unknown][] {
  const tree = JSON.parse(JSON.stringify(redact(loaded.config, loaded.secretPaths))) as Tree;
  return leaves(tree).filter(([key]) => ![...loaded.secretPaths].some((s) => key === s || key.startsWith(`${s}.`)));
}

function pinnedOf(loaded: LoadedConfig): Record<string, string> {
  const pinned: Record<string, string> = {};
  for (const [key, value] of leavesOf(loaded)) {
    if (!PINNED.some((p) => key.startsWith(p)) || UNPINNED.includes(key)) continue;
    if (keyKind(key, value) !== 'setting') pinned[key] = digest(value);
  }
  return pinned;
}

/** The spec of a run of `loaded` (the trainer's side). */
export function runSpecOf(loaded: LoadedConfig, project = process.cwd()): Omit<RunSpec, 'version'> {
  const file = loaded.files.at(-1) ?? path.resolve('config.yaml');
  const settings: Record<string, unknown> = {};
  for (const [key, value] of leavesOf(loaded)) if (keyKind(key, value) === 'setting') settings[key] = value;
  return {
    config: path.relative(project, file).split(path.sep).join('/'),
    settings,
    pinned: pinnedOf(loaded),
  };
}

/**
 * The config a worker runs `spec` with: its own copy of the named file (inside `project`), its
 * own environment, the spec's settings over it. A refusal (a file outside the project, a key
 * that is not a plain setting, a copy that differs) is an Error naming what to fix.
 */
export function runConfigOf(
  spec: Omit<RunSpec, 'version'>,
  project: string,
  environment?: Record<string, string | undefined>,
): LoadedConfig {
  if (path.isAbsolute(spec.config) || spec.config.includes('\\'))
    throw new Error(`the run's config ${JSON.stringify(spec.config)} is not a path relative to the project`);
  const file = insideProject(project, spec.config, "the run's config");
  const loaded = loadConfig(file, { cwd: project, environment });
  const tree = JSON.parse(JSON.stringify(loaded.config)) as Tree;
  for (const [key, value] of Object.entries(spec.settings)) {
    if (keyKind(key, value) !== 'setting')
      throw new Error(
        `the run sets ${key}, which a worker takes only from its own config (it names a file, a program or an endpoint): write it in ${spec.config} on every machine`,
      );
    setPath(tree, key, value);
  }
  const parsed = ConfigSchema.safeParse(tree);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `the run's settings do not fit this worker's ${spec.config}: ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  const ours: LoadedConfig = { ...loaded, config: parsed.data };
  const mine = pinnedOf(ours);
  const differ = [...new Set([...Object.keys(spec.pinned), ...Object.keys(mine)])]
    .filter((k) => spec.pinned[k] !== mine[k])
    .sort();
  if (differ.length)
    throw new Error(
      `this worker's ${spec.config} differs from the trainer's in ${differ.slice(0, 8).join(', ')}${differ.length > 8 ? ', …' : ''}: workers need the trainer's checkout and data at the same paths`,
    );
  return ours;
}
