import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SOURCE_NAMES, type SourceName } from '../../../src/sleep/harvest/digest.ts';
import { harvest, type HarvestOptions } from '../../../src/sleep/harvest/harvest.ts';
import { inScope, scopeOf } from '../../../src/sleep/harvest/scope.ts';
import { fixtureHome, treeFingerprint } from '../fixture-home.ts';
import { tmpDir } from '../../helpers/tmp.ts';
import { locationsOf } from './locations-of.ts';

function run(home: string, over: Partial<HarvestOptions> = {}) {
  return harvest({
    sources: SOURCE_NAMES,
    locations: locationsOf(home, { devin_workspaces: ['/home/dev/acme'] }),
    scope: { kind: 'all' },
    maxSessions: 0,
    ...over,
  });
}

const bySource = (r: ReturnType<typeof run>) =>
  Object.fromEntries(r.sources.map((s) => [s.source, { harvested: s.harvested, leftOut: s.leftOut }]));

test('every agent read at once, read-only: the home folder (databases with a live write-ahead log among it) is byte for byte and time for time as before', () => {
  const fh = fixtureHome();
  const before = treeFingerprint(fh.home);
  const r = run(fh.home);
  assert.equal(treeFingerprint(fh.home), before);
  assert.deepEqual(bySource(r), {
    claude: { harvested: 3, leftOut: { own: 1 } },
    codex: { harvested: 4, leftOut: { 'sub-agent': 1 } },
    copilot: { harvested: 2, leftOut: {} },
    copilot_cli: { harvested: 2, leftOut: {} },
    cursor: { harvested: 3, leftOut: {} },
    opencode: { harvested: 2, leftOut: {} },
    pi: { harvested: 2, leftOut: { unreadable: 1 } },
    devin: { harvested: 1, leftOut: {} },
  });
  assert.equal(r.digests.length, 19);
  // Newest first across agents, by the time each source knows without reading.
  const sources = new Set(r.digests.map((d) => d.source));
  assert.equal(sources.size, SOURCE_NAMES.length);
  fh.close();
});

test("a project's sessions: its folder and what is inside it (a session run in a subfolder counts); other projects' are left out", () => {
  const fh = fixtureHome();
  const r = run(fh.home, { scope: scopeOf(['/home/dev/acme']) });
  assert.ok(
    r.digests.every((d) => d.project === '/home/dev/acme' || d.project.startsWith('/home/dev/acme/')),
    JSON.stringify(r.digests.map((d) => d.project)),
  );
  assert.ok(r.digests.some((d) => d.project === '/home/dev/acme/web'));
  const leftOut = Object.fromEntries(r.sources.map((s) => [s.source, s.leftOut.scope ?? 0]));
  // Claude, Codex, Cursor (matched by its folder's name) and OpenCode each have a session of /home/dev/other; VS Code a chat with no folder.
  assert.deepEqual(leftOut, {
    claude: 1,
    codex: 1,
    copilot: 1,
    copilot_cli: 0,
    cursor: 1,
    opencode: 1,
    pi: 0,
    devin: 0,
  });
  assert.deepEqual(r.sources.find((s) => s.source === 'claude')!.projects, { '/home/dev/acme': 2 });
  fh.close();
});

test('the project of the working directory is its git root, so a session in the home folder does not belong to every project below it', () => {
  const root = tmpDir('skillopt-sleep-git-');
  fs.mkdirSync(path.join(root, 'repo/.git'), { recursive: true });
  fs.mkdirSync(path.join(root, 'repo/src/deep'), { recursive: true });
  const scope = scopeOf('invoked', path.join(root, 'repo/src/deep'));
  assert.equal(scope.kind, 'projects');
  assert.ok(scope.kind === 'projects' && scope.roots.includes(path.join(root, 'repo')));
  assert.deepEqual(scopeOf('invoked', path.join(root, 'repo')), scope);
  assert.ok(inScope(scope, path.join(root, 'repo/src')));
  assert.ok(!inScope(scope, root), 'a session in the folder above the repository');
  assert.ok(!inScope(scope, path.join(root, 'repo-other')));
  assert.ok(!inScope(scope, ''), 'a session that recorded no folder');
});

test('the time window: a session last active before it is left out, judged by its own times, and a file last written before it is not even read', () => {
  const fh = fixtureHome({ agents: ['claude', 'codex'] });
  const since = Date.parse('2026-11-29T00:00:00Z');
  // Every fixture file was just written; the sessions' own times decide.
  let r = run(fh.home, { sources: ['claude', 'codex'], since });
  assert.deepEqual(r.digests.map((d) => d.session_id).sort(), [
    '01a22dd7-fea6-7f41-853b-9232f06eec23',
    '1ebf8700-a2e4-43d9-8b5c-f3c054723a84',
    'c3d9e1f0-2a4b-4c6d-8e0f-1a2b3c4d5e6f',
  ]);
  assert.deepEqual(bySource(r).claude!.leftOut, { window: 1, own: 1 });
  // A file written before the window is passed over unread (it would be unreadable if it were read).
  const old = path.join(fh.home, '.claude/projects/-home-dev-other/c3d9e1f0-2a4b-4c6d-8e0f-1a2b3c4d5e6f.jsonl');
  fs.writeFileSync(old, 'garbage\n');
  fs.utimesSync(old, new Date('2026-11-01T00:00:00Z'), new Date('2026-11-01T00:00:00Z'));
  r = run(fh.home, { sources: ['claude'], since });
  assert.deepEqual(bySource(r).claude!.leftOut, { window: 2, own: 1 });
  fh.close();
});

test('at most maxSessions, the newest; the rest are counted and not read', () => {
  const fh = fixtureHome({ agents: ['codex'] });
  const dir = path.join(fh.home, '.codex/sessions');
  const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  for (const [i, f] of files.sort().entries())
    fs.utimesSync(path.join(dir, f), new Date(Date.UTC(2026, 0, 1 + i)), new Date(Date.UTC(2026, 0, 1 + i)));
  const archived = path.join(fh.home, '.codex/archived_sessions');
  for (const f of fs.readdirSync(archived))
    fs.utimesSync(path.join(archived, f), new Date(Date.UTC(2025, 0, 1)), new Date(Date.UTC(2025, 0, 1)));
  const r = run(fh.home, { sources: ['codex'], maxSessions: 2 });
  assert.equal(r.digests.length, 2);
  // The two newest files: the sub-agent's thread (left out) and the recorded session, then the one of September 2025.
  assert.deepEqual(
    r.digests.map((d) => d.session_id),
    ['01a22dd7-fea6-7f41-853b-9232f06eec23', '0199470e-1c2b-7d40-9a51-5d2f7a3b9c10'],
  );
  assert.deepEqual(bySource(r).codex!.leftOut, { 'sub-agent': 1, limit: 2 });
  fh.close();
});

test("skillopt's own runs are never harvested back: a harness folder in the temp directory, or the replay marker opening the first prompt", () => {
  const fh = fixtureHome({ agents: ['claude'] });
  const file = path.join(fh.home, '.claude/projects/-home-dev-acme/5f0c2a1e-7b3d-4c9e-8a21-6d4f0e9b3c57.jsonl');
  fs.writeFileSync(
    file,
    fs
      .readFileSync(file, 'utf8')
      .replace(
        '"The date test in tests/test_report.py',
        '"[skillopt-sleep replay]\\nThe date test in tests/test_report.py',
      ),
  );
  const r = run(fh.home, { sources: ['claude'] });
  assert.deepEqual(bySource(r).claude!.leftOut, { own: 2 });
  assert.ok(!r.digests.some((d) => d.project.includes('skillopt-claude-code')));
  fh.close();
});

test("sessions whose first prompt holds a configured marker (another tool's sub-agent) are left out", () => {
  const fh = fixtureHome({ agents: ['claude'] });
  const r = run(fh.home, { sources: ['claude'], excludeMarkers: ['--verbose flag'] });
  assert.deepEqual(bySource(r).claude!.leftOut, { own: 1, excluded: 1 });
  fh.close();
});

test('only the agents asked for are read; an agent that is not installed is reported as not present', () => {
  const fh = fixtureHome({ agents: ['pi'] });
  const sources: SourceName[] = ['pi', 'cursor'];
  const r = run(fh.home, { sources });
  assert.deepEqual(
    r.sources.map((s) => [s.source, s.present, s.found]),
    [
      ['cursor', false, 0],
      ['pi', true, 3],
    ],
  );
  fh.close();
});
