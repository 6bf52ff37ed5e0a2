/**
 * What one run of an agent CLI as the target takes beyond the skill and the task: the CLI sends
 * its own instructions and tool definitions with every model request, and a task takes several
 * requests (read the task, read the skill, act, answer), each carrying the conversation so far.
 * A dry run that counted only the skill and the item would be short by an order of magnitude.
 *
 * The figures are learned from the ledgers of earlier runs on this machine (the target calls of
 * the same backend in `calls.jsonl` under the runs root) when there are any; else they come from
 * the table below, measured by counting the tokens of the requests each CLI sent to a fake
 * server on a three-turn task (Codex 0.171, Claude Code 2.1.197, Copilot 1.0.102), which agrees
 * with a measured Codex run of about 27,500 input tokens.
 */
import fs from 'node:fs';
import { walkFiles } from '../util/walk-files.ts';

export interface AgentOverhead {
  /** Input tokens of one agent run (all its requests), the skill and the item included. */
  input: number;
  /** Of those, read from the provider's prompt cache. */
  cached: number;
  output: number;
  /** Where the figures come from, in words. */
  source: string;
}

/** Per CLI: tokens of its own prompt and tools in each request, the requests of a typical task, output per request. */
const TABLE: Record<string, { base: number; turns: number; output: number }> = {
  codex_exec: { base: 8800, turns: 3, output: 150 },
  claude_code_exec: { base: 12000, turns: 3, output: 150 },
  copilot_exec: { base: 11700, turns: 3, output: 150 },
  cursor_exec: { base: 10000, turns: 3, output: 150 },
};

/** Target calls of `backend` an earlier run recorded, newest runs first; at most `limit`. */
function learned(backend: string, runsRoot: string, limit = 400): { input: number; cached: number; output: number }[] {
  const files = walkFiles(runsRoot, {
    file: (name) => name === 'calls.jsonl',
    skipDir: (name) => name.startsWith('.'),
    maxDepth: 3,
  }).sort((a, b) => b.mtimeMs - a.mtimeMs);
  const out: { input: number; cached: number; output: number }[] = [];
  for (const { path: file } of files) {
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (!line.includes(`"${backend}:`)) continue;
      try {
        const r = JSON.parse(line);
        if (r.role !== 'target' || r.from !== 'provider' || r.error || !String(r.model).startsWith(`${backend}:`))
          continue;
        out.push({ input: r.usage.input, cached: r.usage.cached ?? 0, output: r.usage.output });
      } catch {
        // a line cut short by a killed process
      }
      if (out.length >= limit) return out;
    }
  }
  return out;
}

/** One run's figures for an agent target of `backend` (undefined: not an agent CLI). */
export function agentOverhead(
  backend: string,
  runsRoot: string,
  sizes: { skill: number; item: number },
): AgentOverhead | undefined {
  const row = TABLE[backend];
  if (!row) return undefined;
  const seen = learned(backend, runsRoot);
  if (seen.length) {
    const mean = (k: 'input' | 'cached' | 'output') => Math.round(seen.reduce((s, r) => s + r[k], 0) / seen.length);
    return {
      input: mean('input'),
      cached: mean('cached'),
      output: mean('output'),
      source: `the mean of ${seen.length} ${backend} run${seen.length === 1 ? '' : 's'} recorded under ${runsRoot} (their skills and tasks may differ in size from these)`,
    };
  }
  // Each request carries the CLI's prompt, the task and, once read, the skill; all but the first read the prefix from the cache.
  const perRequest = row.base + sizes.skill + sizes.item;
  return {
    input: row.turns * perRequest,
    cached: (row.turns - 1) * row.base,
    output: row.turns * row.output,
    source: `the table for ${backend} (its prompt of about ${row.base.toLocaleString('en')} tokens in each of ${row.turns} requests a task; no earlier run of it under ${runsRoot} to learn from)`,
  };
}
