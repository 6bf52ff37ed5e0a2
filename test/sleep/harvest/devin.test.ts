import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { defaultDevinTranscripts, parseDevinTrajectory } from '../../../src/sleep/harvest/devin.ts';
import { TRANSCRIPTS } from '../fixture-home.ts';

const FILE = path.join(TRANSCRIPTS, 'devin/transcripts/devin-5e2a9c1f-7b3d-4e8a-9f0c-1d2e3f4a5b6c.json');
const trajectory = JSON.parse(fs.readFileSync(FILE, 'utf8'));

test("a Devin trajectory (ATIF): the user's and the agent's messages (a message as a string or as parts), tools; system steps, reasoning and observations not read", () => {
  const r = parseDevinTrajectory(trajectory, FILE, ['/home/dev/acme', '/home/dev/other']);
  assert.ok('digest' in r);
  const d = r.digest;
  assert.equal(d.session_id, 'devin-5e2a9c1f-7b3d-4e8a-9f0c-1d2e3f4a5b6c');
  assert.deepEqual(d.user_prompts, [
    'In the acme repo, fix the NullPointerException in OrderService.persist()',
    'lgtm, thanks',
  ]);
  assert.deepEqual(d.tools_used, ['read_file', 'run_command']);
  assert.equal(d.assistant_finals.length, 2);
  assert.ok(
    !JSON.stringify(d).includes('You are Devin') &&
      !JSON.stringify(d).includes('BUILD SUCCESS') &&
      !JSON.stringify(d).includes('OrderRepository.findById'),
  );
  // The workspace is the one whose folder name the first prompt mentions.
  assert.equal(d.project, '/home/dev/acme');
});

test('the workspace of a trajectory: its own record of the folder, else the one named in the first prompt, else the only one configured, else none', () => {
  const project = (t: object, ws: string[]) => {
    const r = parseDevinTrajectory(t, FILE, ws);
    assert.ok('digest' in r);
    return r.digest.project;
  };
  assert.equal(project({ ...trajectory, extra: { cwd: '/srv/shop' } }, ['/home/dev/acme']), '/srv/shop');
  assert.equal(project(trajectory, ['/home/dev/other']), '/home/dev/other');
  assert.equal(project(trajectory, ['/home/dev/other', '/home/dev/third']), '');
  assert.equal(project(trajectory, []), '');
});

test('a JSON file that is not a trajectory is passed over', () => {
  assert.deepEqual(parseDevinTrajectory({ steps: [] }, FILE), { skipped: 'unreadable' });
  assert.deepEqual(parseDevinTrajectory([1, 2], FILE), { skipped: 'unreadable' });
});

test("the Devin CLI's trajectories folder on each platform", () => {
  assert.equal(defaultDevinTranscripts({}, 'linux', '/home/dev'), '/home/dev/.local/share/devin/cli/transcripts');
  assert.equal(
    defaultDevinTranscripts({}, 'darwin', '/Users/dev'),
    '/Users/dev/Library/Application Support/devin/cli/transcripts',
  );
  assert.equal(
    defaultDevinTranscripts({ LOCALAPPDATA: 'C:\\Users\\dev\\AppData\\Local' }, 'win32', 'C:\\Users\\dev').includes(
      'devin',
    ),
    true,
  );
});
