/**
 * The README's set-up is what CI does on a fresh machine: every command `.ci/run` runs (the
 * system packages' script included) is named in the README's "Set up" section, and the Node.js
 * version it asks for is the one package.json requires.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/cli.ts';

const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

function setUpSection(readme: string): string {
  const found = /^## Set up\n([\s\S]*?)^## /m.exec(readme);
  if (!found) throw new Error('README.md has no "## Set up" section');
  return found[1]!;
}

/** The commands a CI script runs, without their flags (`npm ci --no-audit` is `npm ci`). */
export function ciCommands(script: string): string[] {
  return script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#') && !/^(set|cd) /.test(l))
    .map((l) =>
      l
        .split(/\s+/)
        .filter((w) => !w.startsWith('-'))
        .join(' '),
    );
}

describe("the README's set-up", () => {
  it('names every command CI runs on a fresh machine', () => {
    const commands = ciCommands(fs.readFileSync(path.join(ROOT, '.ci/run'), 'utf8'));
    assert.ok(commands.includes('scripts/system-deps.sh') && commands.includes('npm test'), commands.join('; '));
    const section = setUpSection(README);
    assert.deepEqual(
      commands.filter((c) => !section.includes(c)),
      [],
    );
  });

  it("asks for the Node.js version package.json's engines require", () => {
    const engines = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node as string;
    const major = /\d+/.exec(engines)?.[0];
    assert.ok(major, engines);
    assert.match(setUpSection(README), new RegExp(`Node\\.js ${major}\\b`));
  });

  it('reads the commands of a CI script', () => {
    assert.deepEqual(ciCommands('#!/bin/sh\nset -e\ncd x\n# a comment\nnpm ci --no-audit\nscripts/a.sh\n'), [
      'npm ci',
      'scripts/a.sh',
    ]);
  });
});
