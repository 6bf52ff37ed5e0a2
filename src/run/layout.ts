/**
 * The layout of a run directory, as the original SkillOpt writes it (reference §16.5), plus
 * `events.jsonl` (the event log), `calls.jsonl` (the ledger of model calls) and `run.lock`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readJson, toJson, writeFileAtomic, writeJsonAtomic } from './atomic.ts';
import { HistorySchema, RuntimeStateSchema, type HistoryRecord, type RuntimeState } from './records.ts';
import { rebuildRuntimeState } from './state-rebuild.ts';

export const pad4 = (n: number) => String(n).padStart(4, '0');
export const pad2 = (n: number) => String(n).padStart(2, '0');
export const pad3 = (n: number) => String(n).padStart(3, '0');

export class RunDir {
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  path(...parts: string[]): string {
    return path.join(this.root, ...parts);
  }

  get config() {
    return this.path('config.json');
  }
  get history() {
    return this.path('history.json');
  }
  get runtimeState() {
    return this.path('runtime_state.json');
  }
  get summary() {
    return this.path('summary.json');
  }
  get bestSkill() {
    return this.path('best_skill.md');
  }
  get events() {
    return this.path('events.jsonl');
  }
  get calls() {
    return this.path('calls.jsonl');
  }
  skill(version: number): string {
    return this.path('skills', `skill_v${pad4(version)}.md`);
  }
  step(step: number, ...parts: string[]): string {
    return this.path('steps', `step_${pad4(step)}`, ...parts);
  }
  slowUpdate(epoch: number, ...parts: string[]): string {
    return this.path('slow_update', `epoch_${pad2(epoch)}`, ...parts);
  }
  metaSkill(epoch: number, ...parts: string[]): string {
    return this.path('meta_skill', `epoch_${pad2(epoch)}`, ...parts);
  }

  exists(): boolean {
    return fs.existsSync(this.root);
  }

  readText(file: string): string | undefined {
    try {
      return fs.readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Run state (history, runtime state, skills): atomic and flushed to disk. */
  writeText(file: string, text: string): void {
    writeFileAtomic(file, text);
  }

  writeJson(file: string, value: unknown): void {
    writeJsonAtomic(file, value);
  }

  /** A record of what a stage did (patches, reports): atomic, not flushed (a power cut may lose it). */
  writeArtifact(file: string, value: unknown): void {
    writeFileAtomic(file, typeof value === 'string' ? value : toJson(value), { durable: false });
  }

  readHistory(): HistoryRecord[] {
    const raw = readJson(this.history);
    if (raw === undefined) return [];
    const parsed = HistorySchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(`${this.history} is not a list of step records: ${parsed.error.issues[0]?.message}`);
    // The records as written (key order kept), once known to be valid.
    return raw as HistoryRecord[];
  }

  private loadRuntimeState(): { state: RuntimeState } | { problem: string } | undefined {
    let raw: unknown;
    try {
      raw = readJson(this.runtimeState);
    } catch (err) {
      return { problem: `is unreadable (${(err as Error).message.replace(`cannot read ${this.runtimeState}: `, '')})` };
    }
    if (raw === undefined) return undefined;
    const parsed = RuntimeStateSchema.safeParse(raw);
    if (parsed.success) return { state: parsed.data };
    const issue = parsed.error.issues[0]!;
    return {
      problem: `is not a valid run state (${issue.path.length ? `${issue.path.join('.')}: ` : ''}${issue.message})`,
    };
  }

  /**
   * What is wrong with `runtime_state.json`, in words, or undefined when it is valid or absent.
   * An empty object or `null` is wrong too: taken as no state, it would restart the run.
   */
  runtimeStateProblem(): string | undefined {
    const loaded = this.loadRuntimeState();
    return loaded && 'problem' in loaded ? loaded.problem : undefined;
  }

  /**
   * The state a resume starts from: `runtime_state.json`, or, when that file is unreadable or
   * invalid, the state rebuilt from the history and the skill files; undefined where no run has
   * committed a state. Throws, naming the file and what is wrong, when it cannot be rebuilt.
   */
  readRuntimeState(): RuntimeState | undefined {
    const loaded = this.loadRuntimeState();
    if (!loaded) return undefined;
    return 'problem' in loaded ? rebuildRuntimeState(this, loaded.problem) : loaded.state;
  }
}
