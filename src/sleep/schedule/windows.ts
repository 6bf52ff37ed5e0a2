/** On Windows the nightly job is a Task Scheduler task; skillopt prints the command that creates it. */
import { pad2, type NightlyJob } from './job.ts';

export const taskName = (digest: string) => `SkillOpt-Sleep-${digest.slice(0, 20)}`;

/** A word of a Windows command line, quoted as the C runtime reads it back. */
function winWord(word: string): string {
  return /^[A-Za-z0-9_:.\\/-]+$/.test(word)
    ? word
    : `"${word.replace(/(\\*)"/g, '$1$1\\"').replace(/(\\+)$/, '$1$1')}"`;
}

export function schtasksCreate(job: NightlyJob): string {
  const env = Object.entries(job.env)
    .map(([k, v]) => `set "${k}=${v}" && `)
    .join('');
  const run = `cmd /c "cd /d ${winWord(job.project)} && ${env}${job.argv.map(winWord).join(' ')} >> ${winWord(job.logFile)} 2>&1"`;
  return `schtasks /create /tn ${taskName(job.digest)} /tr ${winWord(run)} /sc daily /st ${pad2(job.hour)}:${pad2(job.minute)} /f`;
}

export const schtasksDelete = (digest: string) => `schtasks /delete /tn ${taskName(digest)} /f`;
