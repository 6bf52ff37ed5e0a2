import assert from 'node:assert/strict';
import { test } from 'node:test';
import { skillHash } from '../../../src/skill/document.ts';
import {
  fileFromBytes,
  packageEntries,
  packageHash,
  packagePathProblem,
  type PackageFile,
} from '../../../src/skill/package/package.ts';

const text = (t: string, mode = 0o644): PackageFile => ({ kind: 'text', text: t, mode });

test('a single document hashes as its text always has', () => {
  assert.equal(packageHash({ skill: '# Dates\nUse ISO dates.\n' }), skillHash('# Dates\nUse ISO dates.\n'));
  assert.equal(packageHash({ skill: 'x', files: new Map() }), skillHash('x'));
});

test("a package's hash covers every file's path, mode and bytes", () => {
  const base = { skill: 'x', files: new Map([['references/a.md', text('A')]]) };
  const hashes = new Set([
    packageHash({ skill: 'x' }),
    packageHash(base),
    packageHash({ skill: 'x', files: new Map([['references/b.md', text('A')]]) }),
    packageHash({ skill: 'x', files: new Map([['references/a.md', text('A', 0o755)]]) }),
    packageHash({ skill: 'x', files: new Map([['references/a.md', text('B')]]) }),
  ]);
  assert.equal(hashes.size, 5);
  // Order of insertion does not matter.
  const two = (order: [string, PackageFile][]) => packageHash({ skill: 'x', files: new Map(order) });
  assert.equal(
    two([
      ['a', text('1')],
      ['b', text('2')],
    ]),
    two([
      ['b', text('2')],
      ['a', text('1')],
    ]),
  );
});

test('files are told text or binary by content, not by name', () => {
  assert.equal(fileFromBytes(Buffer.from('print("hi")\n')).kind, 'text');
  assert.equal(fileFromBytes(Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0x01])).kind, 'binary');
  // Latin-1 bytes that are not UTF-8.
  assert.equal(fileFromBytes(Buffer.from([0x63, 0x61, 0x66, 0xe9])).kind, 'binary');
  const entries = packageEntries({ skill: 'doc', files: new Map([['z.bin', fileFromBytes(Buffer.from([0, 1, 2]))]]) });
  assert.deepEqual(
    entries.map((e) => [e.path, e.kind, e.size]),
    [
      ['SKILL.md', 'text', 3],
      ['z.bin', 'binary', 3],
    ],
  );
});

test('package paths stay inside the package', () => {
  for (const bad of ['../x', 'a/../../x', '/etc/passwd', 'C:/x', 'a\\b', 'a//b', './a', '', 'SKILL.md'])
    assert.ok(packagePathProblem(bad), bad);
  for (const good of ['references/forms.md', 'scripts/fill.py', 'LICENSE.txt', 'a/b/c.ttf'])
    assert.equal(packagePathProblem(good), undefined, good);
});

test('front matter is held to the Agent Skills rules', async () => {
  const { frontMatterProblems } = await import('../../../src/skill/agent-skill.ts');
  const ok =
    '---\nname: pdf\ndescription: Fill PDF forms.\nlicense: Proprietary. LICENSE.txt has complete terms\nallowed-tools: Bash, Read\nmetadata:\n  version: "1.0"\n---\n\n# PDF\n';
  assert.deepEqual(frontMatterProblems(ok), []);
  assert.match(frontMatterProblems('# no block\n')[0]!, /no front matter/);
  assert.match(frontMatterProblems('---\nname: pdf\ndescription: x\nversion: 2\n---\n')[0]!, /'version'.*allow only/);
  assert.match(frontMatterProblems('---\nname: PDF_tools\ndescription: x\n---\n')[0]!, /lower-case/);
  assert.match(frontMatterProblems('---\nname: pdf\ndescription: use <b>\n---\n')[0]!, /'<' or '>'/);
  assert.match(frontMatterProblems(`---\nname: pdf\ndescription: ${'x'.repeat(1025)}\n---\n`)[0]!, /1,025 characters/);
  assert.match(frontMatterProblems('---\nname: pdf\n---\n')[0]!, /no 'description'/);
  assert.match(frontMatterProblems('---\nname: pdf\ndescription: a: b: c\n---\n')[0]!, /not valid YAML/);
});
