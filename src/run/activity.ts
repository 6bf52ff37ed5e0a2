/**
 * Which skillopt processes are working on this machine, for Sleep: a night started while a
 * training run or an evaluation goes is skipped, so that it neither slows the run nor competes
 * for its rate limits. Each such process leaves a marker, `~/.skillopt/running/<kind>-<pid>.json`
 * (a place every process of the user finds, whatever its configs say, cron's included; the
 * environment variable `SKILLOPT_HOME` names another folder in place of `~/.skillopt`), naming
 * itself and its directory; it removes it when it ends. A marker whose process is gone (killed,
 * or the machine restarted) is ignored and removed by whoever reads it. A process that cannot
 * write its marker works anyway (it warns once): only Sleep loses sight of it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from './atomic.ts';
import { LockOwnerSchema, me, ownerState, type LockOwner } from './lock.ts';

export type ActivityKind = 'train' | 'eval';

const MarkerSchema = z.object({ kind: z.enum(['train', 'eval']), dir: z.string(), owner: LockOwnerSchema });
export type Activity = z.infer<typeof MarkerSchema>;

/** The folder of the markers: `running/` in `$SKILLOPT_HOME`, else in `~/.skillopt`. */
export function activityDir(environment: Record<string, string | undefined> = process.env): string {
  const home = environment.SKILLOPT_HOME?.trim();
  return path.join(home ? path.resolve(home) : path.join(os.homedir(), '.skillopt'), 'running');
}

let warned = false;
/** The markers of this process, removed at its exit if not before. */
const mine = new Set<string>();
let exitHook = false;

/**
 * Marks this process as doing `kind` work in `dir` until `release()` (or its exit). Never throws:
 * when the marker cannot be written, `warn` is told once per process.
 */
export function markActivity(
  kind: ActivityKind,
  dir: string,
  warn: (message: string) => void,
  folder = activityDir(),
): { release(): void } {
  const owner = me();
  const file = path.join(folder, `${kind}-${owner.pid}-${crypto.randomBytes(4).toString('hex')}.json`);
  try {
    fs.mkdirSync(folder, { recursive: true });
    writeJsonAtomic(file, { kind, dir: path.resolve(dir), owner } satisfies Activity);
  } catch (err) {
    if (!warned) {
      warned = true;
      warn(
        `cannot mark this ${kind === 'train' ? 'training run' : 'evaluation'} as running in ${folder} (${(err as Error).message}): a Sleep night started meanwhile will not know to wait`,
      );
    }
    return { release: () => {} };
  }
  mine.add(file);
  // Markers of processes killed before they could remove theirs go now, so that they do not pile up between nights.
  runningActivities(folder);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const f of mine) fs.rmSync(f, { force: true });
    });
  }
  return {
    release() {
      mine.delete(file);
      fs.rmSync(file, { force: true });
    },
  };
}

/**
 * Whether a marker's process is working on this machine now. Gone: no process with its pid (and
 * start time), or the machine restarted since. A process of another host or container is not
 * this machine's to judge; it is left alone. Unlike a lock's owner, one whose start time cannot
 * be checked counts as working: a night waits rather than disturb a run.
 */
function liveness(owner: LockOwner, self: LockOwner): 'alive' | 'gone' | 'elsewhere' {
  const state = ownerState(owner, self);
  if (state === 'dead' || state === 'restarted') return 'gone';
  return state === 'other_host' || state === 'other_container' ? 'elsewhere' : 'alive';
}

/** The training runs and evaluations working on this machine now; markers of processes gone are removed. */
export function runningActivities(folder = activityDir()): Activity[] {
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((n) => /^(train|eval)-\d+-[0-9a-f]+\.json$/.test(n));
  } catch {
    return [];
  }
  const self = me();
  const out: Activity[] = [];
  for (const name of names) {
    const file = path.join(folder, name);
    let parsed: ReturnType<typeof MarkerSchema.safeParse>;
    try {
      parsed = MarkerSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    } catch {
      continue; // removed meanwhile, or not ours to judge
    }
    if (!parsed.success) continue;
    const state = liveness(parsed.data.owner, self);
    if (state === 'alive') out.push(parsed.data);
    else if (state === 'gone') fs.rmSync(file, { force: true });
  }
  return out;
}

/** Why a night does not run now, in words: "a training run was going: <dir>". */
export function describeActivity(a: Activity): string {
  return `${a.kind === 'train' ? 'a training run' : 'an evaluation'} was going: ${a.dir}`;
}
