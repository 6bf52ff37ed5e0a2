/**
 * The README's own-tasks walkthrough, run as written, command by command, in a fresh clone of
 * this repository, against a fake OpenAI-compatible server on 127.0.0.1 (the only change to the
 * commands: the server's address). The fake plays both models of the example deterministically
 * (see ticket-responder.ts), so the run is expected to learn one routing rule.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.ts';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { runShell } from './shell.ts';
import { RULES, ticketResponder } from './ticket-responder.ts';

/** The commands of the walkthrough block, comments dropped. */
export function walkthroughCommands(readme: string): string[] {
  const block = /<!-- walkthrough:start -->\n```sh\n([\s\S]*?)```\n<!-- walkthrough:end -->/.exec(readme);
  if (!block) throw new Error('README.md has no walkthrough block');
  return block[1]!.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
}

describe('README walkthrough: your own tasks', () => {
  let fake: FakeProvider;
  before(async () => {
    fake = await startFakeProvider({ respond: (r) => ticketResponder(r.body) });
  });
  after(() => fake.close());

  it('runs from a fresh clone, command by command', async () => {
    const dir = tmpDir();
    const clone = path.join(dir, 'clone');
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
    const commands = walkthroughCommands(fs.readFileSync(path.join(clone, 'README.md'), 'utf8'));
    assert.ok(commands.length >= 4);
    // A clean home and cache; npm stays offline (npx runs the clone's own bin).
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      XDG_CACHE_HOME: path.join(dir, 'cache'),
      NO_COLOR: '1',
      npm_config_offline: 'true',
    };
    let script = '';
    for (const command of commands) {
      // The same shell for every command (exports carry over); stop at the first that fails.
      script += `${command.replace('http://127.0.0.1:8000/v1', `${fake.url}/v1`)}\nstatus=$?; if [ $status -ne 0 ]; then echo "FAILED ($status): ${command.replace(/["$`\\]/g, '\\$&')}" >&2; exit $status; fi\n`;
    }
    const r = await runShell(script, clone, env, 240_000);
    assert.equal(r.status, 0, `${r.stderr}\n${r.stdout.slice(-3000)}`);
    assert.match(r.stdout, /^\{"id": "t001", "message": /m, 'head shows the data');
    const best = fs.readFileSync(path.join(clone, 'outputs/tickets/best_skill.md'), 'utf8');
    assert.ok(best.includes(RULES.returns), 'the trained skill has the rule that fixes the validation failure');
    assert.ok(r.stdout.includes(RULES.returns), 'cat printed it');
    const summary = JSON.parse(fs.readFileSync(path.join(clone, 'outputs/tickets/summary.json'), 'utf8'));
    assert.ok(
      summary.test_hard > summary.baseline_test_hard,
      `test ${summary.baseline_test_hard} -> ${summary.test_hard}`,
    );
    const evalSummary = JSON.parse(fs.readFileSync(path.join(clone, 'outputs/tickets-eval/eval_summary.json'), 'utf8'));
    assert.deepEqual(
      evalSummary.cells.map((c: { skill_label: string }) => c.skill_label),
      ['seed_skill', 'best_skill'],
    );
    assert.ok(evalSummary.comparisons[0].hard.diff > 0);
    const models = new Set(fake.requests.map((q) => q.body.model));
    assert.deepEqual([...models].sort(), ['qwen3-32b', 'qwen3-8b']);
  });
});
