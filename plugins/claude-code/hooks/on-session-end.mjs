// Records that a Claude Code session ended (time, session id, project folder) in Sleep's
// activity log, so the night knows there is something to learn from. Reads nothing else,
// calls no model, never fails the session.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

try {
  let input = {};
  try {
    input = JSON.parse(fs.readFileSync(0, 'utf8') || '{}');
  } catch {}
  const dir = process.env.SKILLOPT_SLEEP_STATE || path.join(os.homedir(), '.skillopt-sleep');
  fs.mkdirSync(dir, { recursive: true });
  const line = { at: new Date().toISOString(), agent: 'claude', session_id: String(input.session_id ?? ''), cwd: String(input.cwd ?? process.cwd()), reason: String(input.reason ?? '') };
  fs.appendFileSync(path.join(dir, 'session-end.log'), `${JSON.stringify(line)}\n`);
} catch {}
