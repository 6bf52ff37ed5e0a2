/**
 * A run lock: one process trains into a run directory at a time.
 *
 * The lock is `run.lock`, a complete file that names its owner. It is taken with `link()` of a
 * finished file, which fails when the lock exists, so no process ever sees a half-written lock.
 * A lock is taken over only when its owner is proven gone: same host, same boot, same PID
 * namespace, and no process with its pid and start time. The takeover itself is exclusive: the
 * taker first claims `run.lock.takeover-<digest of the dead lock>` (by the same `link()`), checks
 * that the dead lock is still in place, then renames its own lock over it in one step.
 * A lock whose owner cannot be judged (another host, another container) is refused, with the
 * owner shown; `forceUnlock` takes it over when the user knows that owner is gone.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../errors.ts';

export const LockOwnerSchema = z
  .object({
    pid: z.number().int(),
    host: z.string(),
    started: z.string().optional(),
    /** The kernel's boot id: a pid means nothing across a restart. */
    boot_id: z.string().optional(),
    /** The PID namespace (a container has its own): a pid means nothing outside it. */
    pid_ns: z.string().optional(),
    /** The process's start time in clock ticks since boot (/proc/<pid>/stat): tells a reused pid apart. */
    proc_start: z.string().optional(),
    /** Unique per lock taken. */
    nonce: z.string().optional(),
  })
  .loose();
export type LockOwner = z.infer<typeof LockOwnerSchema>;

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), where /proc exists. */
function processStart(pid: number): string | undefined {
  const stat = readOr(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
}

function pidNamespace(): string | undefined {
  try {
    return fs.readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/** This process as a lock (or marker) names its owner. */
export function me(): LockOwner {
  return {
    pid: process.pid,
    host: os.hostname(),
    started: new Date().toISOString(),
    boot_id: readOr('/proc/sys/kernel/random/boot_id'),
    pid_ns: pidNamespace(),
    proc_start: processStart(process.pid),
    nonce: crypto.randomBytes(8).toString('hex'),
  };
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What this process can tell of a lock's (or a marker's) owner: where it ran, and whether it
 * still runs. `start_unknown`: another process of that pid runs, and the owner did not record its
 * start time; `start_unreadable`: it did, but this one cannot be read.
 */
export type OwnerState =
  | 'alive'
  | 'dead'
  | 'other_host'
  | 'restarted'
  | 'other_container'
  | 'start_unknown'
  | 'start_unreadable';

export function ownerState(owner: LockOwner, self: LockOwner): OwnerState {
  if (owner.host !== self.host) return 'other_host';
  if (owner.boot_id && self.boot_id && owner.boot_id !== self.boot_id) return 'restarted';
  if (owner.pid_ns && self.pid_ns && owner.pid_ns !== self.pid_ns) return 'other_container';
  if (!processExists(owner.pid)) return 'dead';
  if (owner.proc_start === undefined) return owner.pid === self.pid ? 'alive' : 'start_unknown';
  const start = processStart(owner.pid);
  if (start === undefined) return 'start_unreadable';
  return start === owner.proc_start ? 'alive' : 'dead';
}

type Judgement = { state: 'alive' | 'dead' } | { state: 'unknown'; why: string };

/** Whether the owner of a lock still runs, as far as this process can prove either way. */
function judge(owner: LockOwner | undefined, self: LockOwner): Judgement {
  if (!owner) return { state: 'unknown', why: 'the lock file does not name its owner' };
  const state = ownerState(owner, self);
  switch (state) {
    case 'alive':
    case 'dead':
      return { state };
    case 'other_host':
      return { state: 'unknown', why: `it was taken on another host (${owner.host})` };
    case 'restarted':
      return {
        state: 'unknown',
        why: 'it was taken before this machine restarted, or on another machine of the same name',
      };
    case 'other_container':
      return { state: 'unknown', why: 'it was taken in another container (PID namespace)' };
    case 'start_unknown':
      return { state: 'unknown', why: `a process ${owner.pid} runs, but the lock does not say when its owner started` };
    case 'start_unreadable':
      return { state: 'unknown', why: `a process ${owner.pid} runs, and its start time cannot be read` };
  }
}

function parseOwner(raw: string): LockOwner | undefined {
  try {
    const parsed = LockOwnerSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Links `from` to `to` unless `to` exists. */
function linkNew(from: string, to: string): boolean {
  try {
    fs.linkSync(from, to);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

type Attempt = { held: true; replaced?: LockOwner | string } | { held: false; owner: string; judgement: Judgement };

/**
 * Takes `file` for the owner written in `mine` (a complete file beside it). `force` takes over
 * a lock whose owner cannot be judged; a lock whose owner is alive is never taken.
 */
function take(file: string, mine: string, self: LockOwner, force: boolean, depth = 0): Attempt {
  for (let attempt = 0; ; attempt++) {
    if (linkNew(mine, file)) return { held: true };
    const raw = readOr(file);
    if (raw === undefined) {
      // Released in between: try again, unless the lock keeps changing hands.
      if (attempt > 50) throw new UserError(`could not lock ${file}: other processes keep taking and releasing it`);
      continue;
    }
    const owner = parseOwner(raw);
    const judgement = judge(owner, self);
    const takeOver = judgement.state === 'dead' || (force && judgement.state === 'unknown');
    if (!takeOver || depth > 3 || attempt > 50) return { held: false, owner: raw, judgement };
    // Only one process may replace this dead lock: the one that claims its takeover marker.
    const marker = `${file}.takeover-${crypto.createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;
    const claim = take(marker, mine, self, false, depth + 1);
    if (!claim.held) {
      // Another process is replacing it right now: look again once it is done.
      pause(5);
      continue;
    }
    try {
      if (readOr(file) !== raw) continue;
      // A second name of our own lock file, renamed over the dead lock in one step.
      const replacement = `${mine}.r${depth}`;
      fs.rmSync(replacement, { force: true });
      fs.linkSync(mine, replacement);
      fs.renameSync(replacement, file);
      return { held: true, replaced: owner ?? raw };
    } finally {
      fs.rmSync(marker, { force: true });
    }
  }
}

function describe(owner: LockOwner | undefined, raw: string): string {
  if (!owner) return `an unreadable lock (${JSON.stringify(raw.slice(0, 80))})`;
  return `process ${owner.pid} on ${owner.host}${owner.started ? ` (since ${owner.started})` : ''}`;
}

/**
 * The owner named by a lock file's content (parsed JSON) when it provably runs on this machine
 * now: same host, boot and PID namespace, and a process with its pid and start time. Undefined
 * otherwise (gone, or not provable from here): a signal sent to that pid would reach the run.
 */
export function runningOwner(lockContent: unknown): LockOwner | undefined {
  const parsed = LockOwnerSchema.safeParse(lockContent);
  if (!parsed.success) return undefined;
  return judge(parsed.data, me()).state === 'alive' ? parsed.data : undefined;
}

const held = new Set<() => void>();
let exitHook = false;

export interface RunLock {
  release(): void;
  /** The owner whose lock was taken over (a dead process's, or one given up with `forceUnlock`), in words. */
  readonly replaced?: string;
}

export interface LockOptions {
  /** Take over a lock whose owner cannot be proven dead (another host or container): the user says it is gone. */
  forceUnlock?: boolean;
  /** What the lock guards, in messages (default: `run directory <dir>`). */
  what?: string;
  /** The alternative to waiting, in messages (default: choosing another output directory). */
  otherwise?: string;
}

export function acquireRunLock(dir: string, options: LockOptions = {}): RunLock {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'run.lock');
  const self = me();
  const content = JSON.stringify(self);
  const mine = `${file}.claim-${self.nonce}`;
  fs.writeFileSync(mine, content, { flag: 'wx' });
  let result: Attempt;
  try {
    result = take(file, mine, self, options.forceUnlock === true);
  } finally {
    fs.rmSync(mine, { force: true });
  }
  if (!result.held) {
    const owner = parseOwner(result.owner);
    const who = describe(owner, result.owner);
    const j = result.judgement;
    const what = options.what ?? `run directory ${dir}`;
    const otherwise = options.otherwise ?? 'choose another output directory';
    if (j.state === 'dead')
      throw new UserError(
        `${what}: another process is taking over the lock of ${who}, which is gone; try again in a moment`,
      );
    if (j.state === 'unknown') {
      throw new UserError(
        `${what} is in use by ${who}, which cannot be checked from here: ${j.why}. ` +
          `If that process is gone, run the same command with --force-unlock to take the lock over; otherwise wait for it to finish or ${otherwise}`,
      );
    }
    const hint = options.forceUnlock ? ' (--force-unlock does not take a lock from a process that is running)' : '';
    throw new UserError(`${what} is in use by ${who}${hint}; wait for it to finish or ${otherwise}`);
  }
  removeDeadClaims(dir, self);

  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    held.delete(release);
    if (readOr(file) === content) fs.rmSync(file, { force: true });
  };
  held.add(release);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const r of [...held]) r();
    });
  }
  const replaced =
    result.replaced === undefined
      ? undefined
      : typeof result.replaced === 'string'
        ? describe(undefined, result.replaced)
        : describe(result.replaced, '');
  return { release, ...(replaced ? { replaced: `took over the lock of ${replaced}` } : {}) };
}

/** Claim and takeover files left by processes killed while taking the lock. */
function removeDeadClaims(dir: string, self: LockOwner): void {
  for (const name of fs.readdirSync(dir)) {
    if (!/^run\.lock\.(claim-[0-9a-f]+(\.r\d)?|takeover-[0-9a-f]+)$/.test(name)) continue;
    const file = path.join(dir, name);
    const raw = readOr(file);
    if (raw !== undefined && judge(parseOwner(raw), self).state === 'dead') fs.rmSync(file, { force: true });
  }
}
