/**
 * The nightly job as a launchd agent on macOS: a property list in `~/Library/LaunchAgents` with
 * a calendar interval, loaded with `launchctl`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../errors.ts';
import { writeFileAtomic } from '../../run/atomic.ts';
import type { NightlyJob } from './job.ts';

export const agentLabel = (digest: string) => `com.skillopt.sleep.${digest.slice(0, 20)}`;

const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function environment(env: Record<string, string>): string {
  const entries = Object.entries(env);
  if (entries.length === 0) return '';
  return `  <key>EnvironmentVariables</key>\n  <dict>\n${entries.map(([k, v]) => `    <key>${xml(k)}</key>\n    <string>${xml(v)}</string>\n`).join('')}  </dict>\n`;
}

export function launchAgent(job: NightlyJob): string {
  const strings = (items: string[]) => items.map((i) => `    <string>${xml(i)}</string>`).join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>${agentLabel(job.digest)}</string>
  <key>ProgramArguments</key>
  <array>
${strings(job.argv)}
  </array>
${environment(job.env)}  <key>WorkingDirectory</key>
  <string>${xml(job.project)}</string>
  <key>StandardOutPath</key>
  <string>${xml(job.logFile)}</string>
  <key>StandardErrorPath</key>
  <string>${xml(job.logFile)}</string>
  <key>StartCalendarInterval</key>
  <dict>
    <key>Hour</key>
    <integer>${job.hour}</integer>
    <key>Minute</key>
    <integer>${job.minute}</integer>
  </dict>
</dict>
</plist>
`;
}

export class LaunchAgent {
  readonly agentDir: string;
  private readonly launchctl: string;

  constructor(options: { agentDir?: string; launchctl?: string } = {}) {
    this.agentDir = options.agentDir ?? path.join(os.homedir(), 'Library', 'LaunchAgents');
    this.launchctl = options.launchctl ?? 'launchctl';
  }

  file(digest: string): string {
    return path.join(this.agentDir, `${agentLabel(digest)}.plist`);
  }

  private run(args: string[], tolerate = false): void {
    const r = spawnSync(this.launchctl, args, { encoding: 'utf8' });
    if (!tolerate && (r.error || r.status !== 0))
      throw new UserError(
        `${this.launchctl} ${args.join(' ')} failed: ${r.error?.message ?? (r.stderr.trim() || `exit ${r.status}`)}`,
      );
  }

  schedule(job: NightlyJob): string[] {
    const file = this.file(job.digest);
    fs.mkdirSync(this.agentDir, { recursive: true });
    fs.mkdirSync(path.dirname(job.logFile), { recursive: true });
    // A job scheduled before is unloaded first so the new time takes effect.
    if (fs.existsSync(file)) this.run(['unload', file], true);
    writeFileAtomic(file, launchAgent(job));
    this.run(['load', '-w', file]);
    return [file];
  }

  unschedule(digest: string): boolean {
    const file = this.file(digest);
    if (!fs.existsSync(file)) return false;
    this.run(['unload', '-w', file], true);
    fs.rmSync(file);
    return true;
  }
}
