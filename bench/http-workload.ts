/** The engine bench's HTTP workload: its config and data files, for a scripted server at a URL. */
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { taskRecords } from './skillopt-script.ts';

/** The demo config whose training settings the workload takes. */
const DEMO = path.resolve(import.meta.dirname, '../configs/sim/default.yaml');

/**
 * The HTTP workload's config, written to `dir` beside its data: the sim demo's training settings
 * (the same minibatches, merge groups and learning rate) on the simulated world's items as
 * `tasks` files, both roles on the scripted server, no response cache (every call goes to the
 * server, as in a first run).
 */
export async function writeHttpWorkload(dir: string, url: string, env: Record<string, number>): Promise<string> {
  const files: Record<string, string> = {};
  for (const [split, records] of Object.entries(await taskRecords(env))) {
    files[`${split}_file`] = path.join(dir, `${split}.jsonl`);
    fs.writeFileSync(files[`${split}_file`]!, records.map(({ fact: _, ...r }) => JSON.stringify(r)).join('\n') + '\n');
  }
  const demo = parseYaml(fs.readFileSync(DEMO, 'utf8')) as Record<string, Record<string, unknown>>;
  const role = (r: string) => ({ backend: 'openai_compatible', model: `scripted-${r}`, base_url: `${url}/v1` });
  const file = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    file,
    stringifyYaml({
      _base_: path.resolve(path.dirname(DEMO), demo._base_ as unknown as string),
      model: { backend: 'openai_compatible', target: role('target'), optimizer: role('optimizer'), reasoning_effort: '' },
      train: demo.train,
      gradient: demo.gradient,
      optimizer: demo.optimizer,
      env: { name: 'tasks', ...files, fields: { type: 'type' }, skill_init: path.resolve(path.dirname(DEMO), String(demo.env!.skill_init)) },
      cache: { mode: 'off' },
    }),
  );
  return file;
}

