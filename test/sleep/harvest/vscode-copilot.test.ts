import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  defaultVscodeStorage,
  parseVscodeChat,
  vscodeCopilotSource,
  workspaceFolder,
} from '../../../src/sleep/harvest/vscode-copilot.ts';
import { replayOpLog } from '../../../src/sleep/harvest/vscode-oplog.ts';
import { fixtureHome, TRANSCRIPTS } from '../fixture-home.ts';
import { locationsOf } from './locations-of.ts';

const WS = path.join(TRANSCRIPTS, 'vscode/workspaceStorage/6f1c2e9a0b7d4e3f8a5c1d2e3f4a5b6c');
const CHAT = path.join(WS, 'chatSessions/0f3b1c6e-5a7d-4e9f-b2c4-6d8e0a1b3c5d.jsonl');

test('the edit log replays: set, push, push after a cut, delete; a torn last line is passed over', () => {
  const log = [
    '{"kind":0,"v":{"requests":[],"title":"a"}}',
    '{"kind":2,"k":["requests"],"v":[{"response":[1,2,3]}]}',
    '{"kind":2,"k":["requests",0,"response"],"i":1,"v":[9]}',
    '{"kind":2,"k":["requests",0,"response"],"i":1}',
    '{"kind":1,"k":["title"],"v":"b"}',
    '{"kind":1,"k":["missing","deep"],"v":1}',
    '{"kind":3,"k":["requests",0,"gone"]}',
    '{"kind":1,"k":["requests",0,"gone"],"v":true}',
    '{"kind":3,"k":["requests",0,"gone"]}',
    '{"kind":1,"k":["title"],"v":"torn',
  ].join('\n');
  assert.deepEqual(replayOpLog(log), { requests: [{ response: [1] }], title: 'b' });
});

test("a Copilot chat: the user's prompts and the markdown answers after the log's edits; injected context, other extensions' and system requests left out", () => {
  const d = parseVscodeChat(fs.readFileSync(CHAT, 'utf8'), CHAT, '/home/dev/acme');
  assert.ok('digest' in d);
  const g = d.digest;
  assert.equal(g.session_id, '0f3b1c6e-5a7d-4e9f-b2c4-6d8e0a1b3c5d');
  assert.deepEqual(g.user_prompts, ['Why does test_report fail on Mondays?', 'still failing on Mondays, fix it']);
  // "Looking at the test" was cut by the push with i=1; thinking, tool input and the rendered context are not answers.
  assert.deepEqual(g.assistant_finals, [
    '`report.py` formats the weekday with `%a`, which depends on the locale. Use `isoformat()` and compare dates instead.',
    'Fixed: the test now freezes the date to a Wednesday.',
  ]);
  assert.deepEqual(g.tools_used, ['copilot_readFile']);
  assert.ok(
    !JSON.stringify(g).includes('orphan answer') &&
      !JSON.stringify(g).includes("another extension's") &&
      !JSON.stringify(g).includes('system-initiated'),
  );
  assert.equal(g.started_at, new Date(1764490000123).toISOString());
  assert.equal(g.ended_at, new Date(1764490412000).toISOString());
});

test("workspace.json: a folder URI (percent-encoded), a .code-workspace file's folder, and a remote workspace that has none here", () => {
  assert.equal(workspaceFolder({ folder: 'file:///home/dev/my%20app' }), '/home/dev/my app');
  assert.equal(workspaceFolder({ workspace: 'file:///home/dev/acme/acme.code-workspace' }), '/home/dev/acme');
  assert.equal(workspaceFolder({ folder: 'vscode-remote://ssh-remote%2Bbox/home/dev/acme' }), '');
});

test('chats are found in every workspace of the storage folder, with their folder, and in the chats of windows without one', () => {
  const fh = fixtureHome({ agents: ['vscode'] });
  const scan = vscodeCopilotSource.scan(locationsOf(fh.home));
  const digests = scan.candidates.map((c) => c.read()).map((r) => ('digest' in r ? r.digest : undefined));
  assert.deepEqual(digests.map((d) => d?.project).sort(), ['', '/home/dev/acme']);
  fh.close();
});

test("VS Code's storage folders: stable and Insiders on each platform, a portable install first", () => {
  const home = '/home/dev';
  assert.deepEqual(defaultVscodeStorage({}, 'linux', home), [
    '/home/dev/.config/Code/User/workspaceStorage',
    '/home/dev/.config/Code - Insiders/User/workspaceStorage',
  ]);
  assert.deepEqual(
    defaultVscodeStorage({ XDG_CONFIG_HOME: '/xdg' }, 'linux', home)[0],
    '/xdg/Code/User/workspaceStorage',
  );
  assert.equal(
    defaultVscodeStorage({}, 'darwin', home)[0],
    '/home/dev/Library/Application Support/Code/User/workspaceStorage',
  );
  assert.equal(
    defaultVscodeStorage({ VSCODE_PORTABLE: '/opt/vscode/data' }, 'linux', home)[0],
    '/opt/vscode/data/user-data/User/workspaceStorage',
  );
});
