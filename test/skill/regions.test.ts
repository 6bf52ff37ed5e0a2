import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens, loadSkill, skillHash, unifiedDiff } from '../../src/skill/document.ts';
import {
  APPENDIX_START,
  SLOW_UPDATE_END,
  SLOW_UPDATE_START,
  appendToAppendix,
  extractAppendixNotes,
  extractSlowUpdateField,
  injectEmptyAppendix,
  injectEmptySlowUpdateField,
  replaceSlowUpdateField,
} from '../../src/skill/regions.ts';
import { UserError } from '../../src/errors.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';
import path from 'node:path';

describe('slow-update field', () => {
  it('inject is idempotent, replace leaves exactly one region at the end', () => {
    const once = injectEmptySlowUpdateField('Body.\n');
    assert.equal(once, `Body.\n\n${SLOW_UPDATE_START}\n${SLOW_UPDATE_END}\n`);
    assert.equal(injectEmptySlowUpdateField(once), once);
    const replaced = replaceSlowUpdateField(replaceSlowUpdateField(once, 'first'), 'second');
    assert.equal(replaced.split(SLOW_UPDATE_START).length, 2);
    assert.equal(extractSlowUpdateField(replaced), 'second');
    assert.ok(replaced.endsWith(`${SLOW_UPDATE_END}\n`));
  });
});

describe('appendix', () => {
  it('dedupes notes ignoring case, spacing and trailing punctuation, keeping order', () => {
    let s = injectEmptyAppendix('Body.');
    assert.equal(injectEmptyAppendix(s), s);
    s = appendToAppendix(s, ['go to fridge for ice water', 'Check units']);
    s = appendToAppendix(s, ['Go to fridge for  ice water.', '', 'Re-read the question']);
    assert.deepEqual(extractAppendixNotes(s), ['go to fridge for ice water', 'Check units', 'Re-read the question']);
    assert.equal(s.split(APPENDIX_START).length, 2);
  });
});

describe('skill document', () => {
  it('hashes as the original: 16 hex characters of SHA-256', () => {
    assert.equal(skillHash(''), 'e3b0c44298fc1c14');
    assert.match(skillHash('héllo\nworld'), /^[0-9a-f]{16}$/);
    assert.notEqual(skillHash('a'), skillHash('b'));
  });

  it('counts tokens', () => {
    assert.equal(countTokens(''), 0);
    assert.ok(countTokens('Write every date as YYYY-MM-DD.') > 5);
  });

  it('diffs two versions', () => {
    const d = unifiedDiff('a\nb\n', 'a\nc\n', { before: 'v1', after: 'v2' });
    assert.match(d, /--- v1/);
    assert.match(d, /-b\n\+c/);
  });

  it('a missing skill file is a clear error unless starting blank is allowed', () => {
    const dir = tmpDir();
    writeFiles(dir, { 's.md': 'Skill.' });
    assert.equal(loadSkill(path.join(dir, 's.md')), 'Skill.');
    assert.throws(
      () => loadSkill(path.join(dir, 'missing.md')),
      (e: unknown) => e instanceof UserError && /skill file not found/.test(e.message) && /start_blank/.test(e.message),
    );
    assert.throws(() => loadSkill(''), /env\.skill_init is not set/);
    assert.equal(loadSkill(path.join(dir, 'missing.md'), { startBlank: true }), '');
    assert.equal(loadSkill('', { startBlank: true }), '');
  });
});
