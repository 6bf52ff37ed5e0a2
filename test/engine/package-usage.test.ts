/**
 * Which package files the rollouts used: counted once per rollout and file from the traces,
 * and shown to the analysts beside each file, the used files' text first.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Trajectory } from '../../src/envs/types.ts';
import type { AgentTrace } from '../../src/model/harness/trace.ts';
import { packageView } from '../../src/engine/optimizer-model/package-view.ts';
import { packageUsage, useText } from '../../src/engine/stages/package-usage.ts';
import type { PackageFile, PackageFiles } from '../../src/skill/package/package.ts';

const trace = (read: string[], ran: string[] = []): AgentTrace => ({
  agent: 'codex',
  steps: [],
  files: [],
  package: { read, ran },
  errors: [],
  durationMs: 1,
  exitCode: 0,
});

const rollout = (id: string, traces: AgentTrace[], error = false): Trajectory => ({
  id,
  hard: 0,
  soft: 0,
  traces,
  ...(error ? { error: { kind: 'timeout', message: 'took too long' } } : {}),
});

describe('package usage', () => {
  it('counts each rollout once per file, apart for reads and runs, and leaves out rollouts that did not run', () => {
    const usage = packageUsage([
      // Two turns of one rollout read the same reference: one read.
      rollout('a', [trace(['references/forms.md']), trace(['references/forms.md'], ['scripts/fill.py'])]),
      rollout('b', [trace(['references/forms.md', 'SKILL.md'])]),
      rollout('c', []),
      rollout('d', [trace(['references/other.md'])], true),
      undefined,
    ]);
    assert.deepEqual(usage, {
      rollouts: 3,
      files: {
        'SKILL.md': { read: 1, ran: 0 },
        'references/forms.md': { read: 2, ran: 0 },
        'scripts/fill.py': { read: 0, ran: 1 },
      },
    });
    assert.equal(useText(usage.files['references/forms.md'], 3), 'read by 2 of 3 rollouts');
    assert.equal(useText(usage.files['scripts/fill.py'], 3), 'ran by 1 of 3 rollouts');
    assert.equal(useText({ read: 1, ran: 1 }, 1), 'read by 1, ran by 1 of 1 rollout');
    assert.equal(useText(undefined, 3), '');
  });

  it('shows the analysts each file with its use, and the used files first when the budget is short', () => {
    const text = (t: string): PackageFile => ({ kind: 'text', text: t, mode: 0o644 });
    const files: PackageFiles = new Map([
      ['references/small.md', text(`SMALL-FILE ${'note '.repeat(10)}`)],
      ['references/used.md', text(`USED-FILE ${'word '.repeat(60)}`)],
      ['assets/logo.png', { kind: 'binary', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47]), mode: 0o644 }],
    ]);
    const usage = { rollouts: 4, files: { 'references/used.md': { read: 3, ran: 0 } } };
    const view = packageView(files, usage, 70);
    assert.match(view, /- references\/used\.md \(text, [^;]+; read by 3 of 4 rollouts\)/);
    assert.match(view, /- references\/small\.md \(text, [^;)]+\)\n/);
    assert.match(view, /- assets\/logo\.png \(binary, 4 bytes\)/);
    // 70 tokens hold one of the two (64 and 15 tokens): the one the rollouts read, though the other is smaller.
    assert.match(view, /USED-FILE/);
    assert.doesNotMatch(view, /SMALL-FILE/);
    assert.match(view, /1 more text file\(s\) not shown/);
    // Without usage, smallest first as before.
    const plain = packageView(files, undefined, 70);
    assert.match(plain, /SMALL-FILE/);
    assert.doesNotMatch(plain, /USED-FILE/);
  });
});
