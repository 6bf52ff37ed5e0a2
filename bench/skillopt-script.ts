/**
 * The scripted provider of the engine bench's HTTP workload: one responder that plays both roles
 * of a training run on the simulated world's questions, served as a `tasks` env (bring your own
 * data) whose inputs carry the item's id (the sim's question texts repeat across items), in the
 * shapes the prompts ask for, deterministic (a reply depends only on the request, never on
 * timing or order).
 * - Target (no JSON asked for): the simulated target answers under the skill in the system
 *   prompt, so it gets the items whose conventions the skill states right and the others wrong.
 * - Failure analyst: reads the failed trajectories of its minibatch, names the house convention
 *   each breaks, and proposes a rule for each one the skill lacks (a sharper wording for one it
 *   states but was overlooked), most frequent first; a failure it cannot explain gets general
 *   advice. Success analyst: one piece of general advice the skill does not have yet.
 * - Merge: the union of its patches, duplicates dropped (one rule per convention, the failure
 *   side's first). Ranking: the convention rules first, then the rewordings, then advice.
 * So every step has failure and success patches, merges have work to do, and the merged list is
 * often over the budget, as in a run whose optimizer keeps proposing.
 */
import { SimModel } from '../src/model/sim/backend.ts';
import { DEFAULT_TRAITS } from '../src/model/sim/optimizer.ts';
import { conventionOf, diagnose } from '../src/model/sim/world.ts';
import { CONVENTIONS, IRRELEVANT, type Convention } from '../src/model/sim/rules.ts';
import { SimEnv, SimEnvOptions } from '../src/envs/sim/env.ts';
import type { Item } from '../src/envs/types.ts';
import type { Recorded, Reply } from '../test/helpers/fake-provider.ts';
import { chatParts, simTargetReply, skillInPrompt } from '../test/helpers/fake-skillopt-responder.ts';
import { unitHash } from '../src/util/random.ts';

interface Edit {
  op: string;
  target?: string;
  content?: string;
}

/** One record of the `tasks` env's data files; `fact` is what the simulated target knows of it. */
export interface TaskRecord {
  id: string;
  input: string;
  answer: string;
  type: string;
  fact: unknown;
}

/** The simulated world's items (`env`: the sim env's options) as `tasks` records, per split. */
export async function taskRecords(
  env: Record<string, number>,
): Promise<Record<'train' | 'val' | 'test', TaskRecord[]>> {
  const splits = await new SimEnv(SimEnvOptions.parse(env)).load();
  const records = (items: Item[]) =>
    items.map((it) => ({
      id: it.id,
      input: `[${it.id}] ${String(it.question)}`,
      answer: String(it.expected),
      type: String(it.type),
      fact: it.fact,
    }));
  return { train: records(splits.train), val: records(splits.val), test: records(splits.test) };
}

/** The rule line of the skill that states convention `c`, if any. */
const statedLine = (skill: string, c: Convention) => skill.split('\n').find((l) => c.recognise.test(l));

/** Advice the skill does not have yet, picked by `key`. */
function advice(skill: string, key: string): Edit[] {
  const fresh = IRRELEVANT.filter((a) => !skill.includes(a));
  if (fresh.length === 0) return [];
  return [{ op: 'append', content: `- ${fresh[Math.floor(unitHash('advice', key) * fresh.length)]!}` }];
}

function failureAnalyst(skill: string, user: string, budget: number) {
  const failures = [...user.matchAll(/^Failure reason: \w+=0: predicted '(.*)' but expected '(.*)'$/gm)];
  const broken = new Map<string, number>();
  let unexplained = 0;
  for (const [, predicted, expected] of failures) {
    const missed = diagnose(predicted!, expected!);
    if (missed.length === 0) unexplained++;
    for (const id of missed) broken.set(id, (broken.get(id) ?? 0) + 1);
  }
  const ranked = [...broken].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const edits: Edit[] = [];
  for (const [id] of ranked) {
    const c = CONVENTIONS.find((x) => x.id === id)!;
    const line = statedLine(skill, c);
    if (!line) edits.push({ op: 'append', content: `- ${c.rules[0]}` });
    else {
      // Stated but overlooked: a sharper wording of the same rule.
      const now = c.rules.findIndex((r) => line.includes(r));
      edits.push({ op: 'replace', target: line, content: `- ${c.rules[(now + 1) % c.rules.length]}` });
    }
  }
  if (unexplained > 0) edits.push(...advice(skill, user));
  return {
    batch_size: failures.length,
    failure_summary: [
      ...ranked.map(([id, count]) => ({
        failure_type: id,
        count,
        description: `answers break the ${id.replace('_', ' ')} convention`,
      })),
      ...(unexplained
        ? [
            {
              failure_type: 'unclear',
              count: unexplained,
              description: 'the expected answer cannot be derived from the question',
            },
          ]
        : []),
    ],
    patch: { reasoning: 'rules for the conventions the failed answers break', edits: edits.slice(0, budget) },
  };
}

function successAnalyst(skill: string, user: string, budget: number) {
  const n = [...user.matchAll(/^### Trajectory \d+ \(id=/gm)].length;
  return {
    batch_size: n,
    success_patterns: ['the answer is the bare value, in the format the rules ask for'],
    patch: { reasoning: 'keep answers focused', edits: advice(skill, user).slice(0, budget) },
  };
}

/** The patches' JSON array after the merge prompt's heading. */
function patchesIn(user: string): { source_type?: string; edits?: Edit[] }[] {
  const at = user.search(/## (Patches to merge|Two merged groups)/);
  if (at < 0) return [];
  const start = user.indexOf('\n[', at) + 1;
  const end = user.indexOf('\n\n', start);
  return JSON.parse(user.slice(start, end < 0 ? undefined : end)) as { source_type?: string; edits?: Edit[] }[];
}

/** One edit per convention and per text, the first kept (the caller lists the failure side first). */
function union(edits: Edit[]): Edit[] {
  const seen = new Set<string>();
  return edits.filter((e) => {
    const key = conventionOf(e.content ?? '')?.id ?? `${e.op}:${e.target ?? ''}:${e.content ?? ''}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Rank: a rule for a missing convention, then a rewording, then advice. */
const weight = (e: { op: string; content?: string }) =>
  conventionOf(e.content ?? '') ? (e.op === 'append' ? 0 : 1) : 2;

function merge(user: string) {
  const patches = patchesIn(user);
  const ordered = [
    ...patches.filter((p) => p.source_type !== 'success'),
    ...patches.filter((p) => p.source_type === 'success'),
  ];
  let edits = union(ordered.flatMap((p) => p.edits ?? []));
  if (user.includes('\n## Budget\n'))
    edits = edits
      .map((e, i) => ({ e, i }))
      .sort((a, b) => weight(a.e) - weight(b.e) || a.i - b.i)
      .map((x) => x.e);
  return { reasoning: 'duplicates dropped; fixes of failures first', edits };
}

function ranking(user: string) {
  // One line per item: `[i] op=append  content="…"` (fields two spaces apart, strings as JSON).
  const items = [...user.matchAll(/^\[(\d+)\] op=(\S+)(.*)$/gm)].map((m) => {
    const content = /content=("(?:[^"\\]|\\.)*")/.exec(m[3]!)?.[1];
    return { i: Number(m[1]), op: m[2]!, content: content ? (JSON.parse(content) as string) : '' };
  });
  const order = items.map((x, k) => ({ x, k })).sort((a, b) => weight(a.x) - weight(b.x) || a.k - b.k);
  return { reasoning: 'fixes of widespread failures first', selected_indices: order.map((o) => o.x.i) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The responder: target requests answered after `targetMs`, optimizer requests after `optimizerMs`. */
export function scriptedResponder(
  records: TaskRecord[],
  targetMs: number,
  optimizerMs: number,
): (r: Recorded) => Promise<Reply> {
  const byInput = new Map(records.map((r) => [r.input, r]));
  const target = new SimModel('fake', 0, 0, DEFAULT_TRAITS);
  return async (r) => {
    const { system, user, schemaName } = chatParts(r);
    if (!schemaName) {
      await sleep(targetMs);
      return simTargetReply(target, system, user, byInput.get(user));
    }
    await sleep(optimizerMs);
    const skill = skillInPrompt(user);
    const budget = Number(/Propose at most (\d+) edits/.exec(user)?.[1] ?? 4);
    const reply = (value: unknown): Reply => ({
      text: JSON.stringify(value),
      usage: { input: Math.ceil((system.length + user.length) / 4), output: 60 },
    });
    if (schemaName === 'analyst_failure') return reply(failureAnalyst(skill, user, budget));
    if (schemaName === 'analyst_success') return reply(successAnalyst(skill, user, budget));
    if (schemaName === 'merged_patch') return reply(merge(user));
    if (schemaName === 'ranking') return reply(ranking(user));
    if (schemaName === 'slow_update')
      return reply({ reasoning: 'no lasting pattern beyond the rules', slow_update_content: '' });
    if (schemaName === 'meta_skill') return reply({ reasoning: 'nothing to carry over', meta_skill_content: '' });
    if (schemaName === 'appendix_notes') return reply({ appendix_notes: [] });
    return reply({});
  };
}
