/**
 * Games of the scripted household (household.py) for the ALFWorld tests, laid out as ALFWorld's
 * data is: `json_2.1.1/<train|valid_seen|valid_unseen>/<task type>-<Object>-None-<Target>-<scene>/
 * trial_<id>/game.json` under a data folder; and the original's path manifest
 * (`alfworld_path_split`: train/, val/, test/ with items.json of `id`, `gamefile` relative to the
 * data folder, `task_type`).
 */
import fs from 'node:fs';
import path from 'node:path';

export const HOUSEHOLD = path.join(import.meta.dirname, 'household.py');

export interface Receptacle {
  name: string;
  objects?: string[];
  closed?: boolean;
}

export interface Game {
  /** The folder's task type, as ALFWorld names it: pick_and_place_simple, pick_two_obj_and_place, … */
  taskType: string;
  task: string;
  goal: { kind: 'place' | 'two' | 'look' | 'heat' | 'cool' | 'clean'; object: string; target?: string };
  receptacles: Receptacle[];
  fault?: Record<string, unknown>;
}

/** Writes a game under `root`; returns its path relative to `root` (as the manifests give it). */
export function writeGame(
  root: string,
  split: 'train' | 'valid_seen' | 'valid_unseen',
  name: string,
  game: Game,
): string {
  const obj = game.goal.object.replace(/^./, (c) => c.toUpperCase());
  const target = (game.goal.target ?? 'None').replace(/^./, (c) => c.toUpperCase());
  const rel = path.join(
    'json_2.1.1',
    split,
    `${game.taskType}-${obj}-None-${target}-${name}`,
    'trial_T20190909_000000_000000',
    'game.json',
  );
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  const { taskType: _t, ...spec } = game;
  fs.writeFileSync(path.join(root, rel), JSON.stringify(spec, null, 2));
  return rel;
}

export interface ManifestItem {
  id: string;
  gamefile: string;
  task_type: string;
}

export function writeManifest(dir: string, splits: Record<'train' | 'val' | 'test', ManifestItem[]>): void {
  for (const [split, items] of Object.entries(splits)) {
    fs.mkdirSync(path.join(dir, split), { recursive: true });
    fs.writeFileSync(path.join(dir, split, 'items.json'), JSON.stringify(items, null, 2));
  }
  fs.writeFileSync(
    path.join(dir, 'split_manifest.json'),
    JSON.stringify(
      {
        benchmark: 'ALFWorld',
        manifest_type: 'path_split',
        counts: Object.fromEntries(Object.entries(splits).map(([s, i]) => [s, i.length])),
        item_fields: ['id', 'gamefile', 'task_type'],
        path_root: '$ALFWORLD_DATA',
      },
      null,
      2,
    ),
  );
}
