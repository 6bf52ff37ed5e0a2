/**
 * Live updates: while a page is open, the run roots are polled (a `stat` per watched file, a
 * short directory walk for new runs) and a change becomes a message pushed to every open page.
 * Polling rather than `fs.watch`: it behaves the same on every file system (network mounts,
 * containers) and costs little at this interval.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Roots } from '../files/roots.ts';

export type LiveMessage = { type: 'runs'; ids: string[] } | { type: 'run'; run: string; files: string[] };
type Listener = (msg: LiveMessage) => void;

/** The files of a run whose change is news. */
export const WATCHED = [
  'history.json',
  'runtime_state.json',
  'summary.json',
  'events.jsonl',
  'calls.jsonl',
  'run.lock',
];

function stamp(file: string): string {
  try {
    const st = fs.statSync(file);
    return `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch {
    return '-';
  }
}

export class LiveWatcher {
  private listeners = new Set<Listener>();
  private timer?: NodeJS.Timeout;
  private runIds = '';
  private stamps = new Map<string, Map<string, string>>();

  constructor(
    private readonly roots: Roots,
    readonly intervalMs = 1000,
  ) {}

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.tick(false);
      this.timer = setInterval(() => this.tick(true), this.intervalMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stamps.clear();
    this.runIds = '';
  }

  /** One poll; `notify` false only records the present state. */
  tick(notify = true): void {
    const { runs } = this.roots.discover();
    const ids = runs.map((r) => r.id);
    const key = ids.join('\n');
    let listChanged = key !== this.runIds;
    this.runIds = key;
    const seen = new Set<string>();
    for (const run of runs) {
      seen.add(run.id);
      const before = this.stamps.get(run.id);
      const now = new Map(WATCHED.map((f) => [f, stamp(path.join(run.dir, f))]));
      this.stamps.set(run.id, now);
      if (!before) continue;
      const changed = WATCHED.filter((f) => before.get(f) !== now.get(f));
      if (changed.length === 0) continue;
      listChanged = true;
      if (notify) this.emit({ type: 'run', run: run.id, files: changed });
    }
    for (const id of this.stamps.keys()) if (!seen.has(id)) this.stamps.delete(id);
    if (notify && listChanged) this.emit({ type: 'runs', ids });
  }

  private emit(msg: LiveMessage): void {
    for (const l of this.listeners) {
      try {
        l(msg);
      } catch {
        // a page that went away; its stream closes on its own
      }
    }
  }
}
