/**
 * Skill packages in the shape public ones have (anthropics/skills `pdf`, `canvas-design`): a
 * long `SKILL.md` with `license`, `allowed-tools` and `metadata` in its front matter,
 * `LICENSE.txt`, reference documents (one nested), scripts in Python, JS and shell with their
 * modes, and binary assets (an image with NUL bytes, a font that is not UTF-8); and runs whose
 * `best_skill/` holds one, as `skillopt train` leaves a trained package.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { tmpDir } from '../helpers/tmp.ts';

export type Tree = Record<string, string | Buffer | { data: string | Buffer; mode: number }>;

/** Deterministic bytes that are not UTF-8 text. */
function bytes(seed: string, n: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; out.length * 32 < n; i++) out.push(createHash('sha256').update(`${seed}:${i}`).digest());
  const b = Buffer.concat(out).subarray(0, n);
  b[0] = 0xff; // never valid UTF-8
  return b;
}

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]),
  bytes('png', 300),
]);

const SKILL = (rule: string) => `---
name: pdf-forms
description: Fill in PDF forms and extract their fields. Use when the user gives a PDF form to complete.
license: Proprietary. LICENSE.txt has complete terms
allowed-tools: Read, Bash(python3 scripts/*:*)
metadata:
  version: "1.2"
---

# PDF forms

## Overview

This guide covers filling PDF forms with the scripts of this skill.

${rule}

## Fields

Read [the field reference](references/fields.md) before filling a form.
For long documents see [notes](references/deep/notes.md).

| Task | Script |
|---|---|
| check fields | \`python3 scripts/check_fields.py form.pdf\` |
| render | \`node scripts/render.js\` |
| batch | \`bash scripts/batch.sh\` |
${'\nKeep the original file; write the filled one beside it.\n'.repeat(20)}`;

/** The older version of the package: what is installed before a deployment. */
export const OLD_PACKAGE: Tree = {
  'SKILL.md': SKILL('Always check the fields first.'),
  'LICENSE.txt': 'Copyright the authors.\nAll rights reserved.\n',
  'references/fields.md': '# Fields\n\nText fields take strings.\n',
  'references/deep/notes.md': '# Notes\n\nLong documents are split.\n',
  'references/obsolete.md': '# Obsolete\n',
  'scripts/check_fields.py': { data: 'import sys\nprint(sys.argv[1])\n', mode: 0o755 },
  'scripts/render.js': { data: "console.log('render');\n", mode: 0o644 },
  'scripts/batch.sh': { data: '#!/bin/sh\nfor f in *.pdf; do echo "$f"; done\n', mode: 0o755 },
  'assets/logo.png': PNG,
  'assets/fonts/Serif.ttf': bytes('font', 2000),
  // What a package leaves out, still part of the folder a rollback restores.
  'scripts/__pycache__/check_fields.cpython-312.pyc': bytes('pyc', 64),
};

/** The trained version: SKILL.md and one reference edited, one file gone, one added, a script's mode and a font changed. */
export const NEW_PACKAGE: Tree = {
  'SKILL.md': SKILL('Always check the fields first, then fill the required ones.'),
  'LICENSE.txt': OLD_PACKAGE['LICENSE.txt']!,
  'references/fields.md': '# Fields\n\nText fields take strings.\nCheck boxes take /Yes or /Off.\n',
  'references/deep/notes.md': OLD_PACKAGE['references/deep/notes.md']!,
  'references/dates.md': '# Dates\n\nWrite dates as YYYY-MM-DD.\n',
  'scripts/check_fields.py': OLD_PACKAGE['scripts/check_fields.py']!,
  'scripts/render.js': { data: "console.log('render');\n", mode: 0o755 },
  'scripts/batch.sh': OLD_PACKAGE['scripts/batch.sh']!,
  'assets/logo.png': PNG,
  'assets/fonts/Serif.ttf': bytes('font-2', 2100),
};

export function writeTree(dir: string, tree: Tree): void {
  for (const [rel, value] of Object.entries(tree)) {
    const file = path.join(dir, ...rel.split('/'));
    const { data, mode } = typeof value === 'string' || Buffer.isBuffer(value) ? { data: value, mode: 0o644 } : value;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, data);
    fs.chmodSync(file, mode);
  }
}

/** A finished run whose skill is a package: `best_skill/` beside `best_skill.md` (its SKILL.md). */
export function packageRun(tree: Tree, config: Record<string, unknown> = { env: { name: 'pdf' } }): string {
  const run = fs.realpathSync(tmpDir('skillopt-deploy-run-'));
  writeTree(path.join(run, 'best_skill'), tree);
  fs.writeFileSync(path.join(run, 'best_skill.md'), fs.readFileSync(path.join(run, 'best_skill', 'SKILL.md')));
  fs.writeFileSync(path.join(run, 'config.json'), JSON.stringify({ config }));
  return run;
}

/** Every file, link and folder under `dir` (lstat: links not followed) with its mode and its bytes' hash; null when `dir` is absent. */
export function tree(dir: string): Record<string, string> | null {
  if (!fs.existsSync(dir)) return null;
  const out: Record<string, string> = {};
  const visit = (abs: string, rel: string) => {
    for (const name of fs.readdirSync(abs).sort()) {
      const full = path.join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(full);
      const mode = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[r] = `link:${fs.readlinkSync(full)}`;
      else if (st.isDirectory()) {
        out[`${r}/`] = `dir:${mode}`;
        visit(full, r);
      } else out[r] = `${mode}:${createHash('sha256').update(fs.readFileSync(full)).digest('hex').slice(0, 16)}`;
    }
  };
  visit(dir, '');
  return out;
}

/** The tree a package's files make (what `tree` gives for a folder holding exactly them). */
export function expectedTree(files: Tree): Record<string, string> {
  const dir = tmpDir('skillopt-expected-');
  writeTree(dir, files);
  const out = tree(dir)!;
  // Folder modes are whatever the umask makes: compare files only.
  return Object.fromEntries(Object.entries(out).filter(([k]) => !k.endsWith('/')));
}

/** `tree` without the folders' own entries. */
export function filesOf(t: Record<string, string> | null): Record<string, string> | null {
  return t && Object.fromEntries(Object.entries(t).filter(([k]) => !k.endsWith('/')));
}
