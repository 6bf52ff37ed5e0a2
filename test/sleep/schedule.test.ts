import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parse as parsePlist } from 'plist';
import { runCli } from '../helpers/cli.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import { BLOCK_END, BLOCK_START } from '../../src/sleep/schedule/crontab.ts';
import { nightlyJob, shellCommand } from '../../src/sleep/schedule/job.ts';
import { schtasksCreate } from '../../src/sleep/schedule/windows.ts';

/** A stand-in `crontab` that keeps the table in a file, answering `-l` and `-` as the real one does. */
function fakeCrontab(dir: string, existing?: string): { bin: string; table: string } {
  const table = path.join(dir, 'crontab.txt');
  if (existing !== undefined) fs.writeFileSync(table, existing);
  const bin = path.join(dir, 'crontab');
  fs.writeFileSync(
    bin,
    `#!/bin/sh\nT='${table}'\nif [ "$1" = "-l" ]; then\n  if [ -f "$T" ]; then cat "$T"; else echo "no crontab for tester" >&2; exit 1; fi\nelif [ "$1" = "-" ]; then cat > "$T"\nelse exit 2; fi\n`,
    { mode: 0o755 },
  );
  return { bin, table };
}

function setup(existing?: string) {
  const dir = tmpDir();
  const project = path.join(dir, "my project's");
  fs.mkdirSync(project);
  const state = path.join(dir, 'state');
  writeFiles(dir, { 'sleep.yaml': `state_dir: ${JSON.stringify(state)}\n` });
  const cron = fakeCrontab(dir, existing);
  const env = { SKILLOPT_CRONTAB: cron.bin, SKILLOPT_SLEEP_CONFIG: path.join(dir, 'sleep.yaml') };
  return { dir, project, state, cron, env };
}

test("schedule adds one crontab line in the managed block, keeps the user's lines, and re-scheduling replaces it", () => {
  const mine = '# my jobs\n0 * * * * /usr/bin/backup --quiet\n';
  const s = setup(mine);
  let r = runCli(['sleep', 'schedule', '--project', s.project, '--scheduler', 'cron'], { env: s.env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /every night at 03:17/);
  r = runCli(['sleep', 'schedule', '--project', s.project, '--scheduler', 'cron', '--hour', '4', '--minute', '5'], {
    env: s.env,
  });
  assert.equal(r.status, 0, r.stderr);
  const table = fs.readFileSync(s.cron.table, 'utf8');
  assert.ok(table.startsWith(mine), table);
  const managed = table.slice(table.indexOf(BLOCK_START)).split('\n');
  assert.equal(managed[0], BLOCK_START);
  assert.equal(managed[2], BLOCK_END);
  assert.match(
    managed[1]!,
    /^5 4 \* \* \* mkdir -p .* sleep run --project '.*my project'\\''s' >> \S*nightly\.log 2>&1 # skillopt-sleep project-sha256=[0-9a-f]{64}$/,
  );
  // The marker carries the digest only, never the path.
  assert.ok(!managed[1]!.slice(managed[1]!.indexOf('#')).includes("project's"));
  r = runCli(['sleep', 'unschedule', '--project', s.project], { env: s.env });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.readFileSync(s.cron.table, 'utf8'), mine);
  r = runCli(['sleep', 'unschedule', '--project', s.project], { env: s.env });
  assert.match(r.stdout, /No nightly job is scheduled/);
});

test('a user without a crontab gets one holding only the managed block', () => {
  const s = setup();
  const r = runCli(['sleep', 'schedule', '--project', s.project, '--scheduler', 'cron'], { env: s.env });
  assert.equal(r.status, 0, r.stderr);
  const lines = fs.readFileSync(s.cron.table, 'utf8').split('\n');
  assert.deepEqual([lines[0], lines[2], lines[3], lines.length], [BLOCK_START, BLOCK_END, '', 4]);
  assert.match(lines[1]!, /^17 3 \* \* \* /);
});

test('systemd: a service and a daily timer in the unit folder, enabled; unschedule disables and removes exactly those', () => {
  const s = setup();
  const units = path.join(s.dir, 'units');
  const calls = path.join(s.dir, 'systemctl.log');
  const systemctl = path.join(s.dir, 'systemctl');
  fs.writeFileSync(systemctl, `#!/bin/sh\necho "$@" >> '${calls}'\n`, { mode: 0o755 });
  writeFiles(units, { 'other.timer': '[Timer]\n' });
  const env = {
    ...s.env,
    SKILLOPT_SYSTEMCTL: systemctl,
    SKILLOPT_SYSTEMD_UNIT_DIR: units,
    SKILLOPT_HOME: path.join(s.dir, '50% "home"'),
  };
  let r = runCli(
    ['sleep', 'schedule', '--project', s.project, '--scheduler', 'systemd', '--hour', '2', '--minute', '0'],
    { env },
  );
  assert.equal(r.status, 0, r.stderr);
  const names = fs.readdirSync(units).sort();
  assert.equal(names.length, 3);
  const timer = names.find((n) => n.startsWith('skillopt-sleep-') && n.endsWith('.timer'))!;
  assert.match(fs.readFileSync(path.join(units, timer), 'utf8'), /OnCalendar=\*-\*-\* 02:00:00\nPersistent=true/);
  const service = fs.readFileSync(path.join(units, timer.replace('.timer', '.service')), 'utf8');
  assert.match(service, /ExecStart=.* sleep run --project "[^"]*my project's"/);
  // Quoted as systemd.exec(5) reads Environment=: the % doubled, the quote escaped.
  assert.ok(
    service.includes(`\nEnvironment="SKILLOPT_HOME=${path.join(s.dir, '50%% \\"home\\"')}"\nExecStart=`),
    service,
  );
  assert.deepEqual(fs.readFileSync(calls, 'utf8').trim().split('\n'), [
    '--user daemon-reload',
    `--user enable --now ${timer}`,
  ]);
  r = runCli(['sleep', 'unschedule', '--project', s.project], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(units), ['other.timer']);
  assert.match(fs.readFileSync(calls, 'utf8'), new RegExp(`--user disable --now ${timer}\n--user daemon-reload\n$`));
});

test('launchd: a LaunchAgent property list that launchd reads (Label, ProgramArguments, StartCalendarInterval, the logs), loaded; unschedule unloads and removes it', () => {
  const s = setup();
  // Characters XML must escape, in the project's path.
  const project = path.join(s.dir, 'R&D <tools>');
  fs.mkdirSync(project);
  const agents = path.join(s.dir, 'LaunchAgents');
  const calls = path.join(s.dir, 'launchctl.log');
  const launchctl = path.join(s.dir, 'launchctl');
  fs.writeFileSync(launchctl, `#!/bin/sh\necho "$@" >> '${calls}'\n`, { mode: 0o755 });
  const home = path.join(s.dir, 'skillopt home');
  const env = { ...s.env, SKILLOPT_LAUNCHCTL: launchctl, SKILLOPT_LAUNCH_AGENT_DIR: agents, SKILLOPT_HOME: home };
  let r = runCli(
    ['sleep', 'schedule', '--project', project, '--scheduler', 'launchd', '--hour', '4', '--minute', '5'],
    { env },
  );
  assert.equal(r.status, 0, r.stderr);
  const [name] = fs.readdirSync(agents);
  const file = path.join(agents, name!);
  // As launchd.plist(5) describes the job: every key one launchd knows, with the type it expects.
  const agent = parsePlist(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(agent).sort(), [
    'EnvironmentVariables',
    'Label',
    'ProgramArguments',
    'StandardErrorPath',
    'StandardOutPath',
    'StartCalendarInterval',
    'WorkingDirectory',
  ]);
  // The night finds the runs' activity markers where they do.
  assert.deepEqual(agent.EnvironmentVariables, { SKILLOPT_HOME: home });
  assert.match(agent.Label as string, /^com\.skillopt\.sleep\.[0-9a-f]{20}$/);
  assert.equal(name, `${agent.Label}.plist`, 'the file is named by its label');
  const args = agent.ProgramArguments as string[];
  assert.deepEqual(args.slice(2), ['sleep', 'run', '--project', project]);
  assert.equal(args[0], process.execPath);
  assert.ok(path.isAbsolute(args[1]!) && fs.existsSync(args[1]!), `the program is a file: ${args[1]}`);
  assert.deepEqual(agent.StartCalendarInterval, { Hour: 4, Minute: 5 });
  const log = path.join(s.state, 'logs', 'nightly.log');
  assert.deepEqual([agent.StandardOutPath, agent.StandardErrorPath, agent.WorkingDirectory], [log, log, project]);
  assert.ok(fs.statSync(path.dirname(log)).isDirectory(), 'launchd does not make the log folder: it exists');
  assert.deepEqual(fs.readFileSync(calls, 'utf8').trim().split('\n'), [`load -w ${file}`]);

  r = runCli(['sleep', 'unschedule', '--project', project], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(fs.readdirSync(agents), []);
  assert.equal(fs.readFileSync(calls, 'utf8').trim().split('\n').at(-1), `unload -w ${file}`);
});

test('a project path with a control character, or an hour out of range, is refused before anything is written', () => {
  const s = setup();
  const bad = path.join(s.dir, 'evil\nname');
  fs.mkdirSync(bad);
  let r = runCli(['sleep', 'schedule', '--project', bad, '--scheduler', 'cron'], { env: s.env });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /control character/);
  r = runCli(['sleep', 'schedule', '--project', s.project, '--hour', '24'], { env: s.env });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--hour expects a whole number from 0 to 23/);
  assert.equal(fs.existsSync(s.cron.table), false);
  assert.equal(fs.existsSync(path.join(s.state, 'schedule.json')), false);
});

test('Windows: the schtasks command names a task by the project digest and runs at the time given', () => {
  const job = nightlyJob(
    { hour: 3, minute: 7, project: 'C:\\Users\\me\\proj', stateDir: 'C:\\Users\\me\\.skillopt-sleep' },
    { node: 'C:\\Program Files\\nodejs\\node.exe', bin: 'C:\\skillopt\\bin\\skillopt.js' },
  );
  const cmd = schtasksCreate(job);
  assert.match(cmd, /^schtasks \/create \/tn SkillOpt-Sleep-[0-9a-f]{20} \/tr ".*" \/sc daily \/st 03:07 \/f$/);
  assert.match(cmd, /\\"C:\\Program Files\\nodejs\\node.exe\\"/);
});

test('the job runs `sleep run` in the project with the SKILLOPT_HOME of the shell that scheduled it, made absolute; none when it is unset', () => {
  const dir = tmpDir();
  const project = path.join(dir, "it's a project");
  fs.mkdirSync(project);
  // A stand-in node that writes where it ran, what it was given and the SKILLOPT_HOME it saw.
  const seen = path.join(dir, 'seen.txt');
  const node = path.join(dir, 'node');
  fs.writeFileSync(node, `#!/bin/sh\n{ pwd; echo "$@"; echo "home=\${SKILLOPT_HOME-unset}"; } > '${seen}'\n`, {
    mode: 0o755,
  });
  const run = (environment: Record<string, string | undefined>) => {
    const job = nightlyJob(
      { hour: 3, minute: 17, project, stateDir: path.join(dir, 'state'), node, bin: 'skillopt.js', environment },
      { node, bin: 'skillopt.js' },
    );
    const r = spawnSync('sh', ['-c', shellCommand(job)], { cwd: dir, env: { PATH: process.env.PATH } });
    assert.equal(r.status, 0, String(r.stderr));
    return fs.readFileSync(seen, 'utf8').trim().split('\n');
  };
  const relative = "homes/my 'home'";
  assert.deepEqual(run({ SKILLOPT_HOME: relative }), [
    project,
    `skillopt.js sleep run --project ${project}`,
    `home=${path.resolve(relative)}`,
  ]);
  assert.deepEqual(run({}), [project, `skillopt.js sleep run --project ${project}`, 'home=unset']);
  const windows = schtasksCreate(
    nightlyJob(
      { hour: 3, minute: 7, project: 'C:\\proj', stateDir: 'C:\\state', environment: { SKILLOPT_HOME: 'C:\\sk home' } },
      { node: 'node.exe', bin: 'skillopt.js' },
    ),
  );
  // (Resolved here as on the system that schedules; on Windows, C:\\sk home itself.)
  assert.ok(
    windows.includes(`&& set \\"SKILLOPT_HOME=${path.resolve('C:\\sk home')}\\" && node.exe skillopt.js sleep run`),
    windows,
  );
});
