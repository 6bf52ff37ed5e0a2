/**
 * The nightly job as a crontab line, inside a block of lines skillopt manages; every other line
 * of the user's crontab is kept as it was. Read with `crontab -l`, written with `crontab -`.
 */
import { spawnSync } from 'node:child_process';
import { UserError } from '../../errors.ts';
import { shellCommand, type NightlyJob } from './job.ts';

export const BLOCK_START = '# >>> skillopt sleep (managed) >>>';
export const BLOCK_END = '# <<< skillopt sleep (managed) <<<';
const marker = (digest: string) => `# skillopt-sleep project-sha256=${digest}`;

export function cronLine(job: NightlyJob): string {
  return `${job.minute} ${job.hour} * * * ${shellCommand(job)} ${marker(job.digest)}`;
}

/** The crontab with `line` for `digest` (undefined: removed); the block goes when it empties. */
export function withJob(crontab: string, digest: string, line: string | undefined): string {
  const lines = crontab.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const start = lines.indexOf(BLOCK_START);
  const end = start >= 0 ? lines.indexOf(BLOCK_END, start) : -1;
  const outside = start >= 0 && end > start ? [...lines.slice(0, start), ...lines.slice(end + 1)] : lines;
  const block = start >= 0 && end > start ? lines.slice(start + 1, end) : [];
  const kept = block.filter((l) => !l.endsWith(marker(digest)));
  if (line) kept.push(line);
  const result = kept.length ? [...outside, BLOCK_START, ...kept, BLOCK_END] : outside;
  return result.length ? `${result.join('\n')}\n` : '';
}

/** The managed lines of a crontab. */
export function managedLines(crontab: string): string[] {
  const lines = crontab.split('\n');
  const start = lines.indexOf(BLOCK_START);
  const end = start >= 0 ? lines.indexOf(BLOCK_END, start) : -1;
  return start >= 0 && end > start ? lines.slice(start + 1, end) : [];
}

export class Crontab {
  constructor(private readonly command = 'crontab') {}

  read(): string {
    const r = spawnSync(this.command, ['-l'], { encoding: 'utf8' });
    if (r.error) throw new UserError(`cannot run ${this.command}: ${r.error.message}`);
    if (r.status === 0) return r.stdout;
    // `crontab -l` of a user without a crontab: exit 1, "no crontab for <user>".
    if (/no crontab/i.test(r.stderr)) return '';
    throw new UserError(`${this.command} -l failed: ${r.stderr.trim() || `exit ${r.status}`}`);
  }

  write(content: string): void {
    const r = spawnSync(this.command, ['-'], { input: content, encoding: 'utf8' });
    if (r.error || r.status !== 0)
      throw new UserError(`${this.command} - failed: ${r.error?.message ?? (r.stderr.trim() || `exit ${r.status}`)}`);
  }

  schedule(job: NightlyJob): string {
    const line = cronLine(job);
    this.write(withJob(this.read(), job.digest, line));
    return line;
  }

  /** Whether a job of this project was there (and is now gone). */
  unschedule(digest: string): boolean {
    const before = this.read();
    if (!managedLines(before).some((l) => l.endsWith(marker(digest)))) return false;
    this.write(withJob(before, digest, undefined));
    return true;
  }
}
