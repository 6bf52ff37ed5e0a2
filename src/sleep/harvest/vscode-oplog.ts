/**
 * VS Code's chat session files (`chatSessions/<id>.jsonl`) are an append-only log of edits to
 * one JSON state: `kind` 0 replaces the whole state with `v`; 1 sets the value at the key path
 * `k` to `v`; 2 pushes the items of `v` onto the array at `k`, first cutting it to length `i`
 * when `i` is given (no `v`: only the cut); 3 deletes `k` (an array keeps its length). Replaying the log in order gives the
 * session. An edit whose path does not exist is passed over, as is a torn last line.
 */
import { parseJsonl } from './jsonl.ts';

type Key = string | number;
type Container = Record<string, unknown> | unknown[];

function isContainer(v: unknown): v is Container {
  return typeof v === 'object' && v !== null;
}

/** The container holding the last key of `path`, or undefined when the path does not exist. */
function parentOf(state: unknown, path: Key[]): Container | undefined {
  let node: unknown = state;
  for (const key of path.slice(0, -1)) {
    if (!isContainer(node)) return undefined;
    node = (node as Record<string, unknown>)[String(key)];
  }
  return isContainer(node) ? node : undefined;
}

function validPath(k: unknown): k is Key[] {
  return (
    Array.isArray(k) &&
    k.length > 0 &&
    k.every((p) => typeof p === 'string' || (typeof p === 'number' && Number.isInteger(p) && p >= 0))
  );
}

export function replayOpLog(text: string): unknown {
  let state: unknown;
  for (const op of parseJsonl(text).records) {
    const { kind, k, v, i } = op as { kind?: unknown; k?: unknown; v?: unknown; i?: unknown };
    if (kind === 0) {
      state = v;
      continue;
    }
    if (!validPath(k)) continue;
    const parent = parentOf(state, k);
    if (!parent) continue;
    const last = k.at(-1)!;
    if (kind === 1) {
      if (Array.isArray(parent) && typeof last !== 'number') continue;
      (parent as Record<string, unknown>)[String(last)] = v;
    } else if (kind === 2) {
      const arr = (parent as Record<string, unknown>)[String(last)];
      if (!Array.isArray(arr)) continue;
      if (typeof i === 'number' && Number.isInteger(i) && i >= 0) arr.length = Math.min(arr.length, i);
      if (Array.isArray(v)) arr.push(...v);
    } else if (kind === 3) {
      if (Array.isArray(parent)) {
        if (typeof last === 'number' && last < parent.length) parent[last] = undefined;
      } else delete (parent as Record<string, unknown>)[String(last)];
    }
  }
  return state;
}
