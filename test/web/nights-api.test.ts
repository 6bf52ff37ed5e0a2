/**
 * Sleep nights in the dashboard's API: a night run on the simulator (`skillopt sleep run --backend
 * sim`) listed beside the runs with its state, gate scores and edits, and a night skipped because
 * the machine was busy; a night's page with each document's staged diff; adopting and rolling back
 * through the actions layer (the token, the same origin, a night named by its id, its pins).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parsePatch } from 'diff';
import { acquireRunLock } from '../../src/run/lock.ts';
import { startDashboard, type RunningDashboard } from '../../src/web/server/server.ts';
import { DEPOT_SKILL, PROJECT, simNightHome, type SimNightHome } from '../sleep/sim-night.ts';
import { copyFixture } from './helpers.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const TOKEN = 'x-skillopt-token';

describe('Sleep nights in the dashboard', () => {
  let home: SimNightHome;
  let stateDir: string;
  let dash: RunningDashboard;
  let id = '';
  const refused: string[] = [];
  const call = async (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Json }> => {
    const res = await fetch(`http://127.0.0.1:${dash.port}${url}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
  const withToken = () => ({ [TOKEN]: dash.access.token });
  const skillFiles = () =>
    ['depot-records', 'skillopt-sleep-learned'].map((n) => path.join(home.home, '.claude/skills', n, 'SKILL.md'));
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : null);

  before(async () => {
    home = simNightHome('mine:\n  seed: 3\ndocuments:\n  fanout: true\n');
    stateDir = path.join(home.home, '.skillopt-sleep');
    const run = home.sleep('run', '--project', PROJECT, '--since', '2026-11-01', '--backend', 'sim');
    assert.equal(run.status, 0, run.stderr);
    // A second night finds the first one's lock held (by this process): it is skipped.
    const lock = acquireRunLock(path.join(stateDir, 'locks', 'night'), { what: 'a Sleep night' });
    try {
      assert.match(home.sleep('run', '--project', PROJECT, '--backend', 'sim').stdout, /night skipped/);
    } finally {
      lock.release();
    }
    const { root } = copyFixture('finished-run', 'run');
    dash = await startDashboard({
      roots: [root],
      host: '127.0.0.1',
      port: 0,
      sleepStateDir: stateDir,
      configRoots: [],
      log: (l) => refused.push(l),
    });
  });
  after(() => dash?.close());

  it('lists the night beside the runs: its date, state, gate scores and edits; and the night skipped, with why', async () => {
    const { status, body } = await call('GET', '/api/nights');
    assert.equal(status, 200);
    assert.equal(body.stateDir, stateDir);
    const [skipped, staged] = body.nights;
    assert.equal(skipped.state, 'skipped');
    assert.match(skipped.reason, /a Sleep night is in use by process \d+/);
    assert.equal(skipped.project, PROJECT);

    const [nightDir] = fs.readdirSync(path.join(stateDir, 'nights'));
    id = nightDir!;
    assert.equal(staged.id, id);
    assert.equal(staged.state, 'staged');
    assert.equal(staged.night, 1);
    const report = JSON.parse(fs.readFileSync(path.join(stateDir, 'nights', id, 'report.json'), 'utf8'));
    assert.equal(staged.at, report.started_at);
    const applied = (name: string) =>
      report.documents.find((d: Json) => d.document === name).edits.filter((e: Json) => e.status.startsWith('applied'))
        .length;
    assert.deepEqual(
      staged.documents.map((d: Json) => [d.name, d.staged, d.baseline, d.candidate, d.edits]),
      report.documents.map((d: Json) => [d.document, true, d.baseline.gate, d.candidate.gate, applied(d.document)]),
    );
    assert.ok(staged.edits > 0);
    assert.equal(staged.edits, applied('depot-records') + applied('skillopt-sleep-learned'));
    assert.equal((await call('GET', '/api/runs')).body.runs.length, 1, 'the training run is listed as before');
  });

  it("shows a night's staged diff per document, as diff.patch holds it", async () => {
    const { status, body } = await call('GET', `/api/night?night=${id}`);
    assert.equal(status, 200);
    const patches = parsePatch(fs.readFileSync(path.join(stateDir, 'nights', id, 'diff.patch'), 'utf8'));
    for (const doc of body.documents) {
      const patch = patches.find((p) => p.newFileName === doc.live_path)!;
      const added = patch.hunks
        .flatMap((h) => h.lines)
        .filter((l) => l.startsWith('+'))
        .map((l) => l.slice(1));
      assert.deepEqual(
        doc.diff.lines.filter((l: Json) => l.t === '+').map((l: Json) => l.text),
        added,
        doc.name,
      );
      assert.equal(doc.diff.added, added.length);
    }
    const depot = body.documents.find((d: Json) => d.name === 'depot-records');
    const raw = fs.readFileSync(path.join(stateDir, 'nights', id, 'diff.patch'), 'utf8').split('\n');
    assert.deepEqual(
      body.documents.flatMap((d: Json) => d.diff.lines.filter((l: Json) => l.t === '@').map((l: Json) => l.text)),
      raw.filter((l) => l.startsWith('@@')),
      'the hunk headers as the patch has them',
    );
    assert.deepEqual(depot.diff.lines.slice(0, 3), [
      { t: '@', text: depot.diff.lines[0].text },
      { t: ' ', text: '# Depot records' },
      { t: ' ', text: '' },
    ]);
    assert.deepEqual(
      depot.diff.lines.find((l: Json) => l.t === '+' && l.text.startsWith('<!--')),
      { t: '+', text: '<!-- SKILLOPT-SLEEP:LEARNED START -->' },
    );
    assert.deepEqual(body.pending.sort(), ['depot-records', 'skillopt-sleep-learned']);
    assert.match(body.report, /# /);
    for (const [night, code] of [
      ['20991231-000000', 404],
      ['../state', 400],
      ['%2Fetc%2Fpasswd', 400],
    ] as const) {
      assert.equal((await call('GET', `/api/night?night=${night}`)).status, code, night);
    }
  });

  it('refuses an adoption without the token, from another origin, of an unknown night, or of a night whose pins no longer match; nothing changes', async () => {
    const before = skillFiles().map(read);
    const cases: [string, unknown, Record<string, string>, number, RegExp][] = [
      ['no token', { night: id }, {}, 403, /token is missing or wrong/],
      ['another origin', { night: id }, { ...withToken(), origin: 'http://evil.example' }, 403, /another origin/],
      ['an unknown night', { night: '20991231-000000' }, withToken(), 404, /no night 20991231-000000/],
      ['a path for a night', { night: path.join(stateDir, 'nights', id) }, withToken(), 400, /not a night id/],
    ];
    for (const [what, body, headers, status, why] of cases) {
      const res = await call('POST', '/api/action/night/adopt', body, headers);
      assert.equal(res.status, status, what);
      assert.match(res.body.error, why, what);
    }
    assert.equal(refused.length, 2, 'the refusals of the guard are reported');
    // The user edits the skill after the night read it: the night's pin no longer matches.
    const [depot] = skillFiles();
    fs.appendFileSync(depot!, 'my own line\n');
    const edited = await call('POST', '/api/action/night/adopt', { night: id }, withToken());
    assert.equal(edited.status, 409);
    assert.match(
      edited.body.error,
      /nothing adopted:[\s\S]*depot-records\/SKILL\.md \(depot-records\) was edited since the night read it/,
    );
    assert.deepEqual(skillFiles().map(read), [`${DEPOT_SKILL}my own line\n`, null]);
    fs.writeFileSync(depot!, DEPOT_SKILL);
    assert.deepEqual(skillFiles().map(read), before);
    assert.equal((await call('GET', '/api/nights')).body.nights[1].state, 'staged');
  });

  it('adopts the night (the skill files on disk change, backups kept) and rolls it back (the files as they were)', async () => {
    const before = skillFiles().map(read);
    const manifest = JSON.parse(fs.readFileSync(path.join(stateDir, 'nights', id, 'manifest.json'), 'utf8'));
    const proposed = skillFiles().map((f) =>
      fs.readFileSync(
        path.join(stateDir, 'nights', id, manifest.documents.find((d: Json) => d.live_path === f).proposed_file),
        'utf8',
      ),
    );
    const adopted = await call('POST', '/api/action/night/adopt', { night: id }, withToken());
    assert.equal(adopted.status, 200, adopted.body.error);
    assert.deepEqual(adopted.body.adopted.map((a: Json) => a.name).sort(), ['depot-records', 'skillopt-sleep-learned']);
    assert.deepEqual(skillFiles().map(read), proposed);
    assert.equal(
      fs.readFileSync(path.join(stateDir, 'nights', id, 'backup', 'skill-depot-records.md'), 'utf8'),
      DEPOT_SKILL,
    );
    const view = (await call('GET', `/api/night?night=${id}`)).body;
    assert.equal(view.state, 'adopted');
    assert.deepEqual(view.pending, []);
    assert.equal(view.canRollback, true);
    assert.match(
      (await call('POST', '/api/action/night/adopt', { night: id }, withToken())).body.error,
      /adopted already/,
    );

    const back = await call('POST', '/api/action/night/rollback', { night: id }, withToken());
    assert.equal(back.status, 200, back.body.error);
    assert.deepEqual(skillFiles().map(read), before);
    assert.equal((await call('GET', '/api/nights')).body.nights[1].state, 'rolled_back');
    assert.equal((await call('POST', '/api/action/night/rollback', { night: id }, withToken())).status, 409);
  });
});
