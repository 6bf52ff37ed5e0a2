import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SleepConfigSchema } from '../../src/sleep/config.ts';
import { readDigests } from '../../src/sleep/harvest/digests-file.ts';
import { resolveHarvest } from '../../src/sleep/harvest/options.ts';
import { runCli } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { fixtureHome, homeEnvironment, treeFingerprint } from './fixture-home.ts';

test('skillopt sleep dry-run: per agent, the sessions of the project, their size, time span and projects; what was left out and why; nothing written', () => {
  const fh = fixtureHome();
  const before = treeFingerprint(fh.home);
  const res = runCli(['sleep', 'dry-run', '--project', '/home/dev/acme', '--since', '2026-11-28'], {
    env: homeEnvironment(fh.home),
  });
  assert.equal(res.status, 0, res.stderr);
  assert.equal(treeFingerprint(fh.home), before, 'the home folder (and no state folder in it) is as it was');
  const out = res.stdout;
  assert.match(out, /^Dry run: what Sleep would harvest and learn \(nothing is written, no model is called\)\n/);
  assert.match(out, /window: since 2026-11-2[78] \d\d:00 UTC \(--since 2026-11-28\)/);
  assert.match(out, /projects: \/home\/dev\/acme\n/);
  assert.match(out, /source\s+sessions\s+size\s+time \(UTC\)\s+projects/);
  assert.match(out, /Claude Code\s+2\s+[\d.]+ KB\s+2026-11-28 09:00 – 2026-11-30 19:05\s+\/home\/dev\/acme \(2\)/);
  assert.match(out, /Codex\s+1\s/);
  assert.match(out, /Copilot CLI\s+1\s+[\d.]+ KB\s+2026-11-30 19:05 – 19:09\s+\/home\/dev\/acme \(1\)/);
  assert.match(out, /Claude Code: left out 1 in other projects, 1 skillopt's own runs \(of 4 sessions found\)/);
  assert.match(out, /pi: left out 2 outside the time window, 1 unreadable \(of 3 sessions found\)/);
  assert.match(out, /\n\d+ sessions would be harvested\n/);
  assert.match(
    out,
    /\nDocuments a night would train \(models: none chosen\):\n {2}skill skillopt-sleep-learned: ~\/\.claude\/skills\/skillopt-sleep-learned\/SKILL\.md \(does not exist yet: a night proposes it\)\n/,
  );
  assert.match(
    out,
    /\nTasks it would learn from \(\d+; mined without a model here: a night lets the model rewrite them with rubrics and checks\):\n {2}\[(train|val)\/\w+\] /,
  );
  assert.match(out, /\nWhat a night would cost \(no model is called now\):\n/);
});

test('skillopt sleep harvest writes the digests, newest first, to the state folder (or --out), and says where', () => {
  const fh = fixtureHome({ agents: ['claude', 'codex'] });
  const env = homeEnvironment(fh.home);
  const res = runCli(['sleep', 'harvest', '--source', 'claude,codex', '--project', 'all', '--since', '2000-01-01'], {
    env,
  });
  assert.equal(res.status, 0, res.stderr);
  const harvests = path.join(fh.home, '.skillopt-sleep/harvests');
  const [file] = fs.readdirSync(harvests);
  assert.match(file!, /^\d{8}-\d{6}\.jsonl$/);
  assert.match(
    res.stdout,
    new RegExp(
      `wrote 7 session digests \\(secrets redacted\\) to ~/\\.skillopt-sleep/harvests/${file!.replace('.', '\\.')}\\n$`,
    ),
  );
  const digests = readDigests(path.join(harvests, file!));
  assert.equal(digests.length, 7);
  assert.deepEqual([...new Set(digests.map((d) => d.source))].sort(), ['claude', 'codex']);
  const ends = digests.map((d) => d.ended_at);
  assert.equal(
    ends[0],
    // biome-ignore lint/complexity/useMathMinMax: ISO timestamps, compared as strings
    ends.reduce((a, b) => (a > b ? a : b)),
    'the newest session first',
  );

  const out = path.join(tmpDir('skillopt-sleep-out-'), 'night.jsonl');
  const json = runCli(
    [
      'sleep',
      'harvest',
      '--source',
      'codex',
      '--project',
      '/home/dev/acme',
      '--since',
      '2000-01-01',
      '--out',
      out,
      '--json',
    ],
    { env },
  );
  assert.equal(json.status, 0, json.stderr);
  const report = JSON.parse(json.stdout);
  assert.equal(report.output, out);
  assert.equal(report.sessions, 3);
  assert.deepEqual(
    report.sources.map((s: { source: string; harvested: number; leftOut: object }) => [
      s.source,
      s.harvested,
      s.leftOut,
    ]),
    [['codex', 3, { 'sub-agent': 1, scope: 1 }]],
  );
  assert.equal(readDigests(out).length, 3);
  fh.close();
});

test("the Sleep config file in the user's config directory sets the defaults", () => {
  const fh = fixtureHome({ agents: ['claude', 'pi'] });
  const config = path.join(fh.home, '.config/skillopt/sleep.yaml');
  fs.mkdirSync(path.dirname(config), { recursive: true });
  fs.writeFileSync(config, 'harvest:\n  sources: [pi]\n  projects: all\n  lookback_hours: 0\n');
  const env = homeEnvironment(fh.home);
  const fromConfig = JSON.parse(runCli(['sleep', 'dry-run', '--json'], { env }).stdout);
  assert.equal(fromConfig.window.text, 'all history');
  assert.equal(fromConfig.scope, 'every project');
  assert.deepEqual(
    fromConfig.sources.map((s: { source: string }) => s.source),
    ['pi'],
  );
  assert.equal(fromConfig.sessions, 2);
  fh.close();
});

test('the command line wins over the config: agents, projects, window, session limit', () => {
  const config = SleepConfigSchema.parse({
    harvest: { sources: ['pi'], projects: 'all', lookback_hours: 0, max_sessions: 5 },
  });
  const now = Date.parse('2026-11-30T12:00:00Z');
  const fromConfig = resolveHarvest(config, {}, { environment: { HOME: '/home/dev' }, cwd: '/home/dev/acme', now });
  assert.deepEqual(
    [fromConfig.sources, fromConfig.scope, fromConfig.since, fromConfig.maxSessions, fromConfig.windowText],
    [['pi'], { kind: 'all' }, undefined, 5, 'all history'],
  );
  const fromFlags = resolveHarvest(
    config,
    { source: ['claude,codex', 'pi'], project: ['/home/dev/acme'], since: '7d', maxSessions: 0 },
    { environment: { HOME: '/home/dev' }, cwd: '/', now },
  );
  assert.deepEqual(fromFlags.sources, ['claude', 'codex', 'pi']);
  assert.deepEqual(fromFlags.scope, { kind: 'projects', roots: ['/home/dev/acme'] });
  assert.equal(fromFlags.since, Date.parse('2026-11-23T12:00:00Z'));
  assert.equal(fromFlags.maxSessions, 0);
  assert.deepEqual(resolveHarvest(config, { source: ['all'] }, { now }).sources.length, 8);
  assert.equal(resolveHarvest(SleepConfigSchema.parse({}), {}, { now }).since, now - 72 * 3_600_000);
  assert.throws(
    () => resolveHarvest(config, { source: ['claud'] }),
    /--source: unknown source 'claud' \(did you mean 'claude'\?\); the sources are claude, codex, copilot, copilot_cli, cursor, opencode, pi, devin \(or all\)/,
  );
  assert.throws(
    () => resolveHarvest(config, { since: 'last week' }),
    /--since: expected a duration back from now \(72h, 7d, 2w, 30m\) or a date \(2026-11-01, 2026-11-01T09:00\), got 'last week'/,
  );
});

test('bad input is refused with what was expected, and writes nothing', () => {
  const fh = fixtureHome({ agents: ['pi'] });
  const env = homeEnvironment(fh.home);
  const cases: [string[], RegExp][] = [
    [['--source', 'claud'], /--source: unknown source 'claud' \(did you mean 'claude'\?\)/],
    [['--max-sessions', 'many'], /--max-sessions expects a whole number/],
  ];
  for (const [args, message] of cases) {
    const res = runCli(['sleep', 'harvest', ...args], { env });
    assert.equal(res.status, 2, `${args.join(' ')}: ${res.stderr}`);
    assert.match(res.stderr, message);
  }
  fs.mkdirSync(path.join(fh.home, '.config/skillopt'), { recursive: true });
  fs.writeFileSync(path.join(fh.home, '.config/skillopt/sleep.yaml'), 'harvest:\n  max_session: 10\n');
  const res = runCli(['sleep', 'harvest'], { env });
  assert.equal(res.status, 2);
  assert.equal(
    res.stderr,
    `skillopt: ${path.join(fh.home, '.config/skillopt/sleep.yaml')}: unknown key 'harvest.max_session' (did you mean 'max_sessions'?)\n`,
  );
  assert.ok(!fs.existsSync(path.join(fh.home, '.skillopt-sleep')));
  fh.close();
});
