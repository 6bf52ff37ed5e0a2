/**
 * The nightly job as a systemd user timer: a oneshot service and its daily timer in the user's
 * unit folder (`~/.config/systemd/user`), enabled with `systemctl --user`. `Persistent=true`
 * runs a night the machine slept through when it wakes.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { writeFileAtomic } from '../../run/atomic.ts';
import { pad2, type NightlyJob } from './job.ts';

export const unitName = (digest: string) => `skillopt-sleep-${digest.slice(0, 20)}`;

/** A word of a unit's ExecStart line, quoted the way systemd reads it. */
function unitWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)
    ? word.replace(/%/g, '%%')
    : `"${word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\$/g, '$$$$')}"`;
}

/** An `Environment=` assignment, quoted: systemd expands specifiers (`%`) there, not variables. */
function envWord(assignment: string): string {
  return `"${assignment.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')}"`;
}

export function serviceUnit(job: NightlyJob): string {
  return [
    '[Unit]',
    "Description=skillopt sleep: learn from the day's agent sessions",
    '',
    '[Service]',
    'Type=oneshot',
    `WorkingDirectory=${unitWord(job.project)}`,
    `ExecStartPre=/bin/mkdir -p ${unitWord(path.dirname(job.logFile))}`,
    ...Object.entries(job.env).map(([k, v]) => `Environment=${envWord(`${k}=${v}`)}`),
    `ExecStart=${job.argv.map(unitWord).join(' ')}`,
    `StandardOutput=append:${job.logFile}`,
    `StandardError=append:${job.logFile}`,
    '',
  ].join('\n');
}

export function timerUnit(job: NightlyJob): string {
  return [
    '[Unit]',
    'Description=skillopt sleep, nightly',
    '',
    '[Timer]',
    `OnCalendar=*-*-* ${pad2(job.hour)}:${pad2(job.minute)}:00`,
    'Persistent=true',
    '',
    '[Install]',
    'WantedBy=timers.target',
    '',
  ].join('\n');
}

export class SystemdTimer {
  readonly unitDir: string;

  constructor(options: { unitDir?: string; systemctl?: string } = {}) {
    this.unitDir =
      options.unitDir ??
      path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'systemd', 'user');
    this.systemctl = options.systemctl ?? 'systemctl';
  }

  private readonly systemctl: string;

  private run(args: string[]): void {
    const r = spawnSync(this.systemctl, ['--user', ...args], { encoding: 'utf8' });
    if (r.error || r.status !== 0)
      throw new UserError(
        `${this.systemctl} --user ${args.join(' ')} failed: ${r.error?.message ?? (r.stderr.trim() || `exit ${r.status}`)}`,
      );
  }

  files(digest: string): { service: string; timer: string } {
    const base = path.join(this.unitDir, unitName(digest));
    return { service: `${base}.service`, timer: `${base}.timer` };
  }

  schedule(job: NightlyJob): string[] {
    const f = this.files(job.digest);
    fs.mkdirSync(this.unitDir, { recursive: true });
    writeFileAtomic(f.service, serviceUnit(job));
    writeFileAtomic(f.timer, timerUnit(job));
    this.run(['daemon-reload']);
    this.run(['enable', '--now', path.basename(f.timer)]);
    return [f.service, f.timer];
  }

  unschedule(digest: string): boolean {
    const f = this.files(digest);
    if (!fs.existsSync(f.timer) && !fs.existsSync(f.service)) return false;
    if (fs.existsSync(f.timer)) this.run(['disable', '--now', path.basename(f.timer)]);
    fs.rmSync(f.timer, { force: true });
    fs.rmSync(f.service, { force: true });
    this.run(['daemon-reload']);
    return true;
  }
}
