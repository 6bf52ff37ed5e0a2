import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { agentTempRoot } from '../../../src/model/harness/temp-root.ts';
import { bubblewrap } from '../../../src/skill/package/checks/sandbox.ts';
import type { PackageFile, SkillPackage } from '../../../src/skill/package/package.ts';
import {
  type PackageCheck,
  packageValidationSchema,
  type ValidateOptions,
  validatePackage,
  validationFailure,
} from '../../../src/skill/package/validate.ts';

const text = (t: string, mode = 0o644): PackageFile => ({ kind: 'text', text: t, mode });
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);

const SKILL = `---
name: pdf-forms
description: Fill PDF forms from a data file. Use when the user asks to fill or check a PDF form.
license: Proprietary. LICENSE.txt has complete terms
allowed-tools: Bash, Read
metadata:
  version: "1.2"
  selftest: python3 scripts/fill_form.py --selftest && bash scripts/setup.sh
---

# PDF forms

Read [the form guide](references/forms.md) first, and [its field table](references/forms.md#fields).
The [template](<assets/blank form.json>) and the ![logo](./assets/logo.png) are in [assets](assets/).
Run [scripts/fill_form.py][fill]; see also [the site](https://example.com/pdf) or [mail us](mailto:a@example.com).
Back to [the top](#pdf-forms).

\`[not a link](nowhere.md)\` is code, and so is this block:

\`\`\`md
[example](missing/example.md)
\`\`\`

[fill]: scripts/fill_form.py "the filler"
`;

/** A package in the shape of a public skill: nested folders, scripts in three languages, data, a binary asset. */
function goodPackage(): Map<string, PackageFile> {
  return new Map<string, PackageFile>([
    ['LICENSE.txt', text('All rights reserved.\n')],
    [
      'references/forms.md',
      text('# Forms\n\n## Fields\n\nSee [the skill](../SKILL.md) and [the schema](../assets/schema.yaml).\n'),
    ],
    [
      'scripts/fill_form.py',
      text(
        '#!/usr/bin/env python3\nimport json, sys\n\ndef fill(fields: dict) -> dict:\n    return {k: str(v) for k, v in fields.items()}\n\nif __name__ == "__main__":\n    if "--selftest" in sys.argv:\n        assert fill({"a": 1}) == {"a": "1"}\n        print("fill ok")\n',
        0o755,
      ),
    ],
    [
      'scripts/render.mjs',
      text('import fs from "node:fs";\nexport function render(x) {\n  return `<p>${x}</p>`;\n}\n'),
    ],
    ['scripts/esm.js', text('import path from "node:path";\nexport const base = path.basename("/a/b");\n')],
    [
      'scripts/cjs.js',
      text('const fs = require("node:fs");\nmodule.exports = { read: (p) => fs.readFileSync(p, "utf8") };\n'),
    ],
    [
      'scripts/setup.sh',
      text('#!/bin/bash\nset -euo pipefail\nfor f in scripts/*; do\n  test -f "$f"\ndone\necho "setup ok"\n', 0o755),
    ],
    ['bin/check-env', text('#!/bin/sh\nif [ -n "$HOME" ]; then\n  echo home\nfi\n', 0o755)],
    ['assets/logo.png', { kind: 'binary', bytes: PNG, mode: 0o644 }],
    ['assets/blank form.json', text('{\n  "fields": [{ "name": "date", "type": "text" }]\n}\n')],
    ['assets/schema.yaml', text('fields:\n  - name: date\n    type: text\n---\nsecond: document\n')],
  ]);
}

/** SKILL without its self-test: the checks of one file, without the self-test that runs the scripts. */
const UNTESTED = SKILL.replace(/ {2}selftest: .*\n/, '');

const pkg = (files = goodPackage(), skill = UNTESTED): SkillPackage => ({ skill, files });
const withFile = (p: string, content: string, skill = UNTESTED): SkillPackage => {
  const files = goodPackage();
  files.set(p, text(content, files.get(p)?.mode ?? 0o644));
  return pkg(files, skill);
};
const withSelftest = (command: string, base = pkg(goodPackage(), SKILL)): SkillPackage => ({
  ...base,
  skill: base.skill.replace(/selftest: .*/, `selftest: ${JSON.stringify(command)}`),
});

/** The good package without its scripts (and the links to them), so that only the self-test takes time. */
function scriptless(skill = UNTESTED): SkillPackage {
  const files = goodPackage();
  for (const p of [...files.keys()]) if (p.startsWith('scripts/') || p.startsWith('bin/')) files.delete(p);
  return { skill: skill.replace(/Run \[scripts.*\n/, '').replace(/\[fill\]: .*\n/, ''), files };
}

/** The one failed check; the test fails when there is none or more than one. */
async function onlyFailure(p: SkillPackage, options?: ValidateOptions): Promise<PackageCheck> {
  const v = await validatePackage(p, options);
  const failures = v.checks.filter((c) => !c.ok);
  assert.equal(v.ok, false, 'the package should fail validation');
  assert.equal(failures.length, 1, JSON.stringify(failures, null, 2));
  assert.equal(validationFailure(v), failures[0]!.message);
  return failures[0]!;
}

test('a package with scripts in three languages, data files and links passes every check', async () => {
  const v = await validatePackage(pkg(goodPackage(), SKILL));
  assert.deepEqual(
    v.checks.filter((c) => !c.ok),
    [],
  );
  assert.equal(v.ok, true);
  assert.equal(validationFailure(v), undefined);
  packageValidationSchema.parse(v);
  // Each check ran on its file (a check that was skipped would leave no record), SKILL.md's first, the self-test last.
  const ran = v.checks.map((c) => `${c.check} ${c.file ?? ''}`.trim());
  assert.deepEqual([...ran].sort(), [
    'front-matter SKILL.md',
    'javascript scripts/cjs.js',
    'javascript scripts/esm.js',
    'javascript scripts/render.mjs',
    'json assets/blank form.json',
    'links SKILL.md',
    'links references/forms.md',
    'python scripts/fill_form.py',
    'selftest',
    'shell bin/check-env',
    'shell scripts/setup.sh',
    'yaml assets/schema.yaml',
  ]);
  assert.deepEqual(ran.slice(0, 2), ['front-matter SKILL.md', 'links SKILL.md']);
  assert.equal(ran.at(-1), 'selftest');
  assert.match(v.checks.find((c) => c.file === 'SKILL.md' && c.check === 'links')!.message, /6 relative links/);
  const selftest = v.checks.find((c) => c.check === 'selftest')!;
  assert.match(selftest.output!, /fill ok\nsetup ok/);
  // No copy of the package (nor the bytecode compiled into its folder) is left behind.
  assert.deepEqual(leftovers(), []);
});

/** The package copies of the checks still on disk. */
function leftovers(): string[] {
  return fs.readdirSync(agentTempRoot()).filter((n) => /^skillopt-(check|selftest)-/.test(n));
}

test('a Python syntax error fails the python check of that file, with its line', async () => {
  const f = await onlyFailure(withFile('scripts/fill_form.py', 'import sys\n\ndef fill(fields:\n    return fields\n'));
  assert.equal(f.check, 'python');
  assert.equal(f.file, 'scripts/fill_form.py');
  assert.match(f.message, /^scripts\/fill_form\.py does not compile: line 3: SyntaxError: /);
});

test('Python files are all checked in one go, each named', async () => {
  const files = goodPackage();
  files.set('scripts/a.py', text('x = 1\n'));
  files.set('scripts/b.py', text('print "python 2"\n'));
  files.set('scripts/c.py', text('def f():\nreturn 1\n'));
  const v = await validatePackage(pkg(files));
  const python = v.checks.filter((c) => c.check === 'python');
  assert.deepEqual(
    python.map((c) => [c.file, c.ok]),
    [
      ['scripts/a.py', true],
      ['scripts/b.py', false],
      ['scripts/c.py', false],
      ['scripts/fill_form.py', true],
    ],
  );
  assert.match(python[1]!.message, /line 1: SyntaxError: Missing parentheses/);
  assert.match(python[2]!.message, /line 2: IndentationError: /);
});

test('a JavaScript syntax error fails the javascript check, whether the file is CommonJS or an ES module', async () => {
  const cases: [string, string, RegExp][] = [
    [
      'scripts/render.mjs',
      'export function render(x) {\n  return x +;\n}\n',
      /line 2: SyntaxError: Unexpected token ';'/,
    ],
    [
      'scripts/cjs.js',
      'const fs = require("node:fs");\nmodule.exports = {\n',
      /line 3: SyntaxError: Unexpected end of input/,
    ],
    // `node --check` alone lets this one through: it reads the file as a module and does not look further.
    [
      'scripts/esm.js',
      'import path from "node:path";\nexport const base = ;\n',
      /as an ES module \(line 2: SyntaxError: Unexpected token ';'\)/,
    ],
  ];
  for (const [file, content, message] of cases) {
    const f = await onlyFailure(withFile(file, content));
    assert.equal(f.check, 'javascript');
    assert.equal(f.file, file);
    assert.match(f.message, message);
  }
});

test('a package.json with "type": "module" makes its .js files ES modules', async () => {
  const files = goodPackage();
  files.set('scripts/package.json', text('{ "type": "module" }\n'));
  files.delete('scripts/cjs.js');
  files.set('scripts/esm.js', text('export const a = 1;\nexport default a +;\n'));
  const f = await onlyFailure(pkg(files));
  assert.equal(f.file, 'scripts/esm.js');
  assert.match(f.message, /^scripts\/esm\.js fails node --check: line 2: SyntaxError/);
});

test('a shell syntax error fails the shell check, for a .sh file and for a script told by its shebang', async () => {
  for (const file of ['scripts/setup.sh', 'bin/check-env']) {
    const f = await onlyFailure(withFile(file, '#!/bin/sh\nif [ -n "$HOME" ]; then\n  echo home\n'));
    assert.equal(f.check, 'shell');
    assert.equal(f.file, file);
    assert.match(f.message, new RegExp(`^${file} fails bash -n: line 4: syntax error`));
  }
});

test('bad JSON and bad YAML fail their checks, naming the file and the line', async () => {
  const json = await onlyFailure(
    withFile('assets/blank form.json', '{\n  "fields": [\n    { "name": "date", },\n  ]\n}\n'),
  );
  assert.equal(json.check, 'json');
  assert.equal(json.file, 'assets/blank form.json');
  assert.match(json.message, /^assets\/blank form\.json is not valid JSON: line 3: /);
  const yaml = await onlyFailure(withFile('assets/schema.yaml', 'fields:\n  - name: date\n    type: [text\n'));
  assert.equal(yaml.check, 'yaml');
  assert.equal(yaml.file, 'assets/schema.yaml');
  assert.match(yaml.message, /^assets\/schema\.yaml is not valid YAML: line \d: /);
  // An error in the second document of a file counts too.
  const second = await onlyFailure(withFile('assets/schema.yaml', 'a: 1\n---\nb: c: d\n'));
  assert.match(second.message, /line 3: /);
});

test('a link to a file the package does not hold fails the links check of the linking file', async () => {
  const missing = await onlyFailure(
    pkg(goodPackage(), UNTESTED.replace('references/forms.md#fields', 'references/form.md#fields')),
  );
  assert.equal(missing.check, 'links');
  assert.equal(missing.file, 'SKILL.md');
  assert.match(
    missing.message,
    /line 12: 'references\/form\.md#fields' names references\/form\.md, no file of the package/,
  );

  // Links are relative to the linking file's folder: from references/, 'SKILL.md' is references/SKILL.md.
  const relative = await onlyFailure(withFile('references/forms.md', '# Forms\n\nBack to [the skill](SKILL.md).\n'));
  assert.equal(relative.file, 'references/forms.md');
  assert.match(relative.message, /line 3: 'SKILL\.md' names references\/SKILL\.md, no file of the package/);

  const outside = await onlyFailure(withFile('references/forms.md', 'See ![x](../../elsewhere/a.png).\n'));
  assert.match(outside.message, /'\.\.\/\.\.\/elsewhere\/a\.png' leads out of the package/);

  const definition = await onlyFailure(
    pkg(goodPackage(), UNTESTED.replace('[fill]: scripts/fill_form.py', '[fill]: scripts/fill.py')),
  );
  assert.match(definition.message, /'scripts\/fill\.py' names no file of the package/);
});

test('front matter that breaks the Agent Skills rules fails the front-matter check', async () => {
  const f = await onlyFailure(pkg(goodPackage(), UNTESTED.replace('name: pdf-forms', 'name: PDF_Forms')));
  assert.equal(f.check, 'front-matter');
  assert.equal(f.file, 'SKILL.md');
  assert.match(f.message, /the skill name 'PDF_Forms' holds other characters/);
  // A package with files must have front matter at all.
  const none = await validatePackage({ skill: '# PDF\n', files: new Map([['references/a.md', text('# A\n')]]) });
  assert.equal(none.ok, false);
  assert.match(validationFailure(none)!, /has no front matter/);
});

test('a plain document is held to no package rule; one with front matter is', async () => {
  const plain = await validatePackage({ skill: '# Dates\n\nSee [the guide](guide.md).\n' });
  assert.deepEqual(plain, { ok: true, checks: [] });
  const skillMd = await validatePackage({
    skill: '---\nname: dates\ndescription: x\n---\n\nSee [the guide](guide.md).\n',
  });
  assert.equal(skillMd.ok, false);
  assert.deepEqual(
    skillMd.checks.map((c) => [c.check, c.ok]),
    [
      ['front-matter', true],
      ['links', false],
    ],
  );
});

test('a missing tool fails the check by name, never passes it', async () => {
  const v = await validatePackage(pkg(), { tools: { python: '/nonexistent/python3', bash: '/nonexistent/bash' } });
  assert.equal(v.ok, false);
  const failures = v.checks.filter((c) => !c.ok).map((c) => c.message);
  assert.deepEqual(failures, [
    '/nonexistent/bash not found: cannot check bin/check-env',
    '/nonexistent/python3 not found: cannot check scripts/fill_form.py',
    '/nonexistent/bash not found: cannot check scripts/setup.sh',
  ]);
  const node = await validatePackage(pkg(), { tools: { node: '/nonexistent/node' } });
  assert.equal(node.checks.filter((c) => !c.ok && /node not found: cannot check scripts\//.test(c.message)).length, 3);
});

test('a package without scripts or self-test starts no process', async () => {
  // Every tool is missing: a check that started one would fail.
  const missing = { python: '/nonexistent/python3', node: '/nonexistent/node', bash: '/nonexistent/bash' };
  const v = await validatePackage(scriptless(), { tools: missing, sandbox: 'bubblewrap' });
  assert.equal(v.ok, true, validationFailure(v));
  assert.deepEqual(
    v.checks.map((c) => c.check),
    ['front-matter', 'links', 'json', 'yaml', 'links'],
  );
});

test('a failing self-test fails the package, with the end of its output', async () => {
  const f = await onlyFailure(withSelftest('echo checking forms; echo "no form found" >&2; exit 3'));
  assert.equal(f.check, 'selftest');
  assert.match(f.message, /^the self-test `echo checking forms; .*` failed with exit code 3 after/);
  assert.match(f.output!, /checking forms\nno form found/);
  // It runs in a copy of the package: the scripts are there, and what it writes goes with the copy.
  const v = await validatePackage(
    withSelftest('test -x scripts/fill_form.py && test -f "assets/blank form.json" && touch made'),
  );
  assert.equal(v.ok, true, validationFailure(v));
  assert.deepEqual(leftovers(), []);
  const bad = await validatePackage(pkg(goodPackage(), SKILL.replace(/selftest: .*/, 'selftest: [1, 2]')));
  assert.match(validationFailure(bad)!, /metadata\.selftest in SKILL\.md must be a shell command/);
});

test('a self-test that outlasts its time limit is stopped, with all it started, soon after the limit', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'selftest-timeout-'));
  const late = path.join(dir, 'late');
  try {
    // It ignores SIGTERM, and leaves a child behind that would write a file after the limit.
    const command = `trap "" TERM; (sleep 4; touch ${late}) & sleep 30`;
    const started = Date.now();
    const f = await onlyFailure(withSelftest(command, scriptless(SKILL)), { selftestTimeoutMs: 1000, sandbox: 'none' });
    const took = Date.now() - started;
    assert.equal(f.check, 'selftest');
    assert.match(f.message, /did not finish within 1\.0 s and was stopped/);
    assert.ok(took < 1000 + 3500, `stopped after ${took} ms`);
    await new Promise((r) => setTimeout(r, 4500));
    assert.equal(fs.existsSync(late), false, 'a process the self-test started outlived it');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const started = Date.now();
  const sandboxed = await onlyFailure(withSelftest('sleep 30', scriptless(SKILL)), { selftestTimeoutMs: 1000 });
  assert.match(sandboxed.message, /did not finish within 1\.0 s/);
  assert.ok(Date.now() - started < 1000 + 3500, `stopped after ${Date.now() - started} ms`);
});

test("a self-test sees none of the parent's keys and tokens, and a home of its own", async () => {
  const names = ['SKILLOPT_TEST_API_KEY', 'OPENAI_API_KEY', 'GITHUB_TOKEN'];
  const saved = names.map((n) => process.env[n]);
  for (const n of names) process.env[n] = 'sk-parent-secret-1234';
  try {
    for (const sandbox of ['none', 'auto'] as const) {
      const command = `env; test -z "$SKILLOPT_TEST_API_KEY$OPENAI_API_KEY$GITHUB_TOKEN" && test "$HOME" != "${os.homedir()}" && test -d "$HOME" && test -d "$TMPDIR"`;
      const v = await validatePackage(withSelftest(command, scriptless(SKILL)), { sandbox });
      const selftest = v.checks.find((c) => c.check === 'selftest')!;
      assert.equal(selftest.ok, true, `${sandbox}: ${selftest.message}\n${selftest.output}`);
      assert.doesNotMatch(selftest.output!, /sk-parent-secret/);
      const variables = selftest.output!.split('\n').map((l) => l.split('=')[0]);
      for (const name of variables)
        assert.ok(
          ['PATH', 'HOME', 'LANG', 'TMPDIR', 'PWD', 'OLDPWD', 'SHLVL', '_', 'SKILLOPT_AGENT_RUN'].includes(name!),
          name,
        );
    }
  } finally {
    names.forEach((n, i) => {
      if (saved[i] === undefined) delete process.env[n];
      else process.env[n] = saved[i];
    });
  }
});

test('in bubblewrap, a self-test cannot see the temp folder outside its own, nor reach the network', async (t) => {
  const sandbox = await bubblewrap();
  if (!sandbox.ok) return t.skip(sandbox.why);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'selftest-outside-'));
  try {
    fs.writeFileSync(path.join(dir, 'other-run.txt'), 'another candidate');
    const command = `test ! -e ${dir}/other-run.txt && touch own-file && ! touch /usr/skillopt-selftest 2>/dev/null && ! (echo > /dev/tcp/127.0.0.1/9) 2>/dev/null`;
    const v = await validatePackage(withSelftest(`bash -c '${command}'`, scriptless(SKILL)), { sandbox: 'bubblewrap' });
    const selftest = v.checks.find((c) => c.check === 'selftest')!;
    assert.equal(selftest.ok, true, `${selftest.message}\n${selftest.output}`);
    assert.match(selftest.message, /in a bubblewrap sandbox/);
    // The home is out of sight but for the folders that hold a PATH entry (read-only).
    const home = os.homedir();
    const listing = await validatePackage(withSelftest(`ls -A "${home}"`, scriptless(SKILL)), {
      sandbox: 'bubblewrap',
    });
    const seen = listing.checks
      .find((c) => c.check === 'selftest')!
      .output!.split('\n')
      .filter(Boolean);
    const pathFolders = (process.env.PATH ?? '')
      .split(':')
      .filter((p) => p.startsWith(`${home}/`))
      .map((p) => p.slice(home.length + 1).split('/')[0]);
    for (const name of seen) assert.ok(pathFolders.includes(name), `${home}/${name} is visible in the sandbox`);
    // The same command without the sandbox sees the file: the test above can fail.
    const outside = await validatePackage(withSelftest(`bash -c '${command}'`, scriptless(SKILL)), { sandbox: 'none' });
    assert.equal(outside.ok, false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the checks stop when the signal fires, without waiting for the self-test', async () => {
  const controller = new AbortController();
  const started = Date.now();
  setTimeout(() => controller.abort(new Error('stopped by the user')), 500);
  await assert.rejects(
    validatePackage(withSelftest('sleep 30', scriptless(SKILL)), { signal: controller.signal, sandbox: 'none' }),
    /stopped by the user/,
  );
  assert.ok(Date.now() - started < 500 + 3500, `stopped after ${Date.now() - started} ms`);
  assert.deepEqual(leftovers(), []);
});

test('a file at a path outside the package fails the path check and is written nowhere', async () => {
  const name = `escaped-${process.pid}-${Date.now()}.sh`;
  const files = goodPackage();
  files.set(`../../../${name}`, text('#!/bin/sh\necho out\n'));
  const v = await validatePackage(withSelftest('true', pkg(files, SKILL)));
  const failures = v.checks.filter((c) => !c.ok);
  assert.deepEqual(
    failures.map((c) => [c.check, c.file]),
    [['path', `../../../${name}`]],
  );
  assert.match(failures[0]!.message, /leaves the package/);
  assert.equal(v.checks[0]!.check, 'path');
  for (const dir of [os.tmpdir(), agentTempRoot(), path.dirname(os.tmpdir())])
    assert.equal(fs.existsSync(path.join(dir, name)), false, dir);
});

test("a package's checks run at the same time", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slow-bash-'));
  try {
    // A `bash -n` that takes 3 s: one after the other, two scripts and a 3 s self-test take 9 s,
    // the scripts side by side and then the self-test 6 s; all at once, 3 s.
    const slow = path.join(dir, 'bash');
    fs.writeFileSync(slow, '#!/bin/sh\nsleep 3\n', { mode: 0o755 });
    const base = scriptless(SKILL);
    const files = new Map(base.files);
    files.set('scripts/a.sh', text('echo a\n'));
    files.set('scripts/b.sh', text('echo b\n'));
    const started = Date.now();
    const v = await validatePackage(withSelftest('sleep 3', { skill: base.skill, files }), {
      tools: { bash: slow },
      sandbox: 'none',
    });
    const took = Date.now() - started;
    assert.equal(v.ok, true, validationFailure(v));
    assert.equal(v.checks.filter((c) => c.check === 'shell').length, 2);
    assert.ok(took < 5500, `took ${took} ms`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
