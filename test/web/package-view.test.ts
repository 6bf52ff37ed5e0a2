/**
 * The dashboard's view of a skill package: a step's candidate against the skill it started from,
 * file by file (added, removed, edited, unchanged; binaries by size only), with the read counts of
 * the step's rollouts and one file's diff; a single-document run shows no package.
 */
import '../../src/builtins.ts';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { runTraining } from '../../src/app/train.ts';
import { loadConfig } from '../../src/config/load.ts';
import { RunDir } from '../../src/run/layout.ts';
import { writeSkillFile } from '../../src/run/skill-files.ts';
import type { PackageFile } from '../../src/skill/package/package.ts';
import { DiffPool } from '../../src/web/files/diff-pool.ts';
import { diffPackageFile, packageTree } from '../../src/web/runs/package-view.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { apiClient, FIXTURES } from './helpers.ts';

const PACKAGE_CONFIG = path.join(ROOT, 'configs/sim/package.yaml');

describe('package view (a trained package demo)', () => {
  const root = tmpDir('skillopt-web-package-');
  const out = path.join(root, 'pkg');
  const get = apiClient([root]);
  let step = 0;
  before(async () => {
    const loaded = loadConfig(PACKAGE_CONFIG, { environment: {} });
    await runTraining({ loaded, outRoot: out, configFile: PACKAGE_CONFIG, console: false });
    const history = JSON.parse(fs.readFileSync(path.join(out, 'history.json'), 'utf8')) as {
      step: number;
      candidate_hash?: string;
      package_usage?: { files: Record<string, { read: number }> };
    }[];
    // A step with a candidate whose rollouts opened a reference.
    step = history.find(
      (r) => r.candidate_hash && Object.values(r.package_usage?.files ?? {}).some((f) => f.read > 0),
    )!.step;
  });

  it("lists the candidate's files with their change and the rollouts' read counts", async () => {
    const { status, body } = await get(`/api/step?run=0/pkg&step=${step}`);
    assert.equal(status, 200);
    const tree = body.package;
    assert.ok(tree, 'a package step has a package view');
    assert.equal(tree.files[0].path, 'SKILL.md');
    assert.ok(tree.files.some((f: { path: string }) => f.path.startsWith('references/')));
    assert.ok(
      tree.files.some((f: { change: string }) => f.change !== 'unchanged'),
      'the step changed a file',
    );
    assert.equal(tree.rollouts, body.record.package_usage.rollouts);
    for (const f of tree.files) {
      const used = body.record.package_usage.files[f.path] ?? { read: 0, ran: 0 };
      assert.deepEqual([f.read, f.ran], [used.read, used.ran], f.path);
    }
    assert.ok(
      tree.files.some((f: { read: number }) => f.read > 0),
      'some file was read',
    );
    const edited = tree.files.find(
      (f: { change: string; kind: string }) => f.change !== 'unchanged' && f.kind === 'text',
    );
    const diff = await get(
      `/api/package-diff?run=0/pkg&a=${encodeURIComponent(tree.a)}&b=${encodeURIComponent(tree.b)}&file=${encodeURIComponent(edited.path)}`,
    );
    assert.equal(diff.status, 200);
    assert.ok(diff.body.added + diff.body.removed > 0 && diff.body.lines.some((l: { t: string }) => l.t !== '@'));
  });

  it('a single-document run has no package view', async () => {
    const { body } = await apiClient([FIXTURES])('/api/step?run=0/finished-run&step=1');
    assert.equal(body.package, undefined);
    assert.ok(body.diff);
  });
});

describe('package tree of two versions', () => {
  const text = (t: string, mode = 0o644): PackageFile => ({ kind: 'text', text: t, mode });
  const bin = (n: number): PackageFile => ({ kind: 'binary', bytes: Buffer.alloc(n, 7), mode: 0o644 });
  const run = new RunDir(tmpDir('skillopt-web-tree-'));
  writeSkillFile(run, run.skill(0), {
    skill: '# s\n',
    files: new Map([
      ['references/a.md', text('one\ntwo\n')],
      ['scripts/run.sh', text('#!/bin/sh\necho hi\n', 0o644)],
      ['assets/font.ttf', bin(1234)],
      ['assets/logo.png', bin(10)],
      ['assets/old.pdf', bin(99)],
    ]),
  });
  fs.mkdirSync(run.step(1), { recursive: true });
  writeSkillFile(run, run.step(1, 'candidate_skill.md'), {
    skill: '# s\n',
    files: new Map([
      ['references/a.md', text('one\nthree\n')],
      ['scripts/run.sh', text('#!/bin/sh\necho hi\n', 0o755)],
      ['assets/font.ttf', bin(1310)],
      ['assets/logo.png', bin(10)],
      ['references/new.md', text('new\n')],
    ]),
  });

  it('says what changed in each file, binaries by their sizes, modes included', () => {
    const tree = packageTree(run, 'v:0', 'cand:1', { rollouts: 8, files: { 'references/a.md': { read: 3, ran: 0 } } })!;
    const by = Object.fromEntries(tree.files.map((f) => [f.path, f]));
    assert.deepEqual(
      tree.files.map((f) => [f.path, f.change]),
      [
        ['SKILL.md', 'unchanged'],
        ['assets/font.ttf', 'edited'],
        ['assets/logo.png', 'unchanged'],
        ['assets/old.pdf', 'removed'],
        ['references/a.md', 'edited'],
        ['references/new.md', 'added'],
        ['scripts/run.sh', 'edited'],
      ],
    );
    assert.deepEqual(
      [by['assets/font.ttf']!.kind, by['assets/font.ttf']!.sizeBefore, by['assets/font.ttf']!.sizeAfter],
      ['binary', 1234, 1310],
    );
    assert.equal(by['scripts/run.sh']!.mode, '0644 → 0755');
    assert.deepEqual([by['references/a.md']!.read, by['assets/logo.png']!.read, tree.rollouts], [3, 0, 8]);
  });

  it('diffs a text file and refuses to diff a binary one', async () => {
    const pool = new DiffPool();
    const d = await diffPackageFile(run, pool, 'v:0', 'cand:1', 'references/a.md');
    assert.deepEqual(
      d.lines.filter((l) => l.t === '+' || l.t === '-').map((l) => `${l.t}${l.text}`),
      ['-two', '+three'],
    );
    const added = await diffPackageFile(run, pool, 'v:0', 'cand:1', 'references/new.md');
    assert.deepEqual([added.added, added.removed], [1, 0]);
    await assert.rejects(diffPackageFile(run, pool, 'v:0', 'cand:1', 'assets/font.ttf'), /binary file: .*never diffed/);
    await assert.rejects(diffPackageFile(run, pool, 'v:0', 'cand:1', 'nope.md'), /has a file nope\.md/);
  });
});
