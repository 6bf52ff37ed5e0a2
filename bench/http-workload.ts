/** The engine bench's HTTP workload: its config and data files, for a scripted server at a URL. */
import fs from 'node:fs';
import path from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { taskRecords } from './skillopt-script.ts';

const CONFIGS = path.resolve(import.meta.dirname, '../configs');

/** The sim demo's gradient settings (`configs/sim/default.yaml`): smaller minibatches and merge groups. */
export const DEMO_GRADIENT = { minibatch_size: 5, merge_batch_size: 4 };

/**
 * The HTTP workload's config, written to `dir` beside its data: the project's default settings
 * (`configs/_base_/default.yaml`, the original's) with `gradient` on top, the simulated world's
 * items as `tasks` files and the sim's seed skill, both roles on the scripted server, no response
 * cache (every call goes to the server, as in a first run).
 */
export async function writeHttpWorkload(
  dir: string,
  url: string,
  env: Record<string, number>,
  gradient: Record<string, number> = {},
): Promise<string> {
  const files: Record<string, string> = {};
  for (const [split, records] of Object.entries(await taskRecords(env))) {
    files[`${split}_file`] = path.join(dir, `${split}.jsonl`);
    fs.writeFileSync(files[`${split}_file`]!, `${records.map(({ fact: _, ...r }) => JSON.stringify(r)).join('\n')}\n`);
  }
  const role = (r: string) => ({ backend: 'openai_compatible', model: `scripted-${r}`, base_url: `${url}/v1` });
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringifyYaml({
      _base_: path.join(CONFIGS, '_base_/default.yaml'),
      model: {
        backend: 'openai_compatible',
        target: role('target'),
        optimizer: role('optimizer'),
        reasoning_effort: '',
      },
      gradient,
      env: { name: 'tasks', ...files, fields: { type: 'type' }, skill_init: path.join(CONFIGS, 'sim/seed_skill.md') },
      cache: { mode: 'off' },
    }),
  );
  return file;
}
