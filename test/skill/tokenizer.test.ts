/**
 * The tokenizer of the build: the byte-pair table that scripts/build.js writes as JSON is the
 * package's own, and the compiled program counts with it exactly as gpt-tokenizer does.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { buildIsCurrent } from '../../bin/entry.js';
import { ROOT } from '../helpers/cli.ts';

const require = createRequire(import.meta.url);

describe('the tokenizer of the build', () => {
  if (!buildIsCurrent(ROOT)) spawnSync(process.execPath, [path.join(ROOT, 'scripts/build.js')], { stdio: 'inherit' });

  it("holds the package's byte-pair table, and counts every text as the package does", async () => {
    const compiled = (await import(
      pathToFileURL(path.join(ROOT, 'dist/skill/document.js')).href
    )) as typeof import('../../src/skill/document.ts');
    assert.ok(compiled.TOKENIZER_TABLE.startsWith(path.join(ROOT, 'dist')), compiled.TOKENIZER_TABLE);
    const table = JSON.parse(fs.readFileSync(compiled.TOKENIZER_TABLE, 'utf8')) as unknown[];
    const own = (require('gpt-tokenizer/bpeRanks/o200k_base') as { default: unknown[] }).default;
    assert.equal(table.length, own.length);
    assert.deepEqual(table, own);

    const pkg = require('gpt-tokenizer') as typeof import('gpt-tokenizer');
    const texts = [
      fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'),
      fs.readFileSync(path.join(ROOT, 'configs/sim/seed_skill.md'), 'utf8'),
      ...(fs.readdirSync(path.join(ROOT, 'prompts'), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.md'))
        .map((f) => fs.readFileSync(path.join(ROOT, 'prompts', f), 'utf8')),
      'Zürich, 東京, Москва, 🙂🚀, \u0000\ufeff tabs\tand\r\nlines',
    ];
    // A special token in a skill or a task is text: counted, never an error.
    assert.equal(
      compiled.countTokens('a <|endoftext|> b'),
      pkg.countTokens('a <|endoftext|> b', { disallowedSpecial: new Set() }),
    );
    assert.ok(compiled.countTokens('<|endoftext|>') > 1);
    for (const text of texts) assert.equal(compiled.countTokens(text), pkg.countTokens(text), text.slice(0, 60));
  });
});
