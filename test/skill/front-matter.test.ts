/**
 * Skills in the shape of real `SKILL.md` files: YAML front matter (`name`, `description`, …)
 * between `---` lines, then the Markdown body. The front matter is protected: edits cannot touch
 * it, rewrites keep it byte for byte, appends go after the body.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { applyEdits } from '../../src/skill/edits.ts';
import {
  frontMatter,
  injectEmptyAppendix,
  keepProtectedRegions,
  replaceSlowUpdateField,
  SLOW_UPDATE_START,
  appendToAppendix,
} from '../../src/skill/regions.ts';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8');
const PDF = fixture('pdf-SKILL.md');
const FOLDED = fixture('folded-SKILL.md');
const head = (skill: string) => skill.slice(0, skill.indexOf('\n---\n') + 5);

describe('front matter of a SKILL.md', () => {
  it('is found exactly: from the opening --- to the closing line, with a folded description and blank lines inside', () => {
    assert.equal(frontMatter(PDF), head(PDF));
    assert.ok(frontMatter(FOLDED).endsWith('allowed-tools: [Read, Grep]\n---\n'));
    assert.ok(FOLDED.startsWith(frontMatter(FOLDED)));
    assert.equal(frontMatter('---\n---\nBody'), '---\n---\n');
    assert.equal(frontMatter('---\r\nname: x\r\n...\r\nBody'), '---\r\nname: x\r\n...\r\n');
    // Not front matter: a rule that opens the document, text that is not a YAML mapping, no closing line.
    assert.equal(frontMatter('---\n# Title\n---\nBody'), '');
    assert.equal(frontMatter('---\nJust a sentence here.\n---\n'), '');
    assert.equal(frontMatter('---\nname: x\nBody without a closing line\n'), '');
    assert.equal(frontMatter('# Title\n---\nname: x\n---\n'), '');
  });

  it("an insert_after aimed at --- does not land inside it, and replace 'name: pdf' does not rename the skill", () => {
    const { skill, reports } = applyEdits(PDF, [
      { op: 'insert_after', target: '---', content: 'Always check the page count first.' },
      { op: 'replace', target: 'name: pdf', content: 'name: pdf-tools' },
      { op: 'delete', target: 'license: Proprietary. LICENSE.txt has complete terms' },
      {
        op: 'replace',
        target: 'Use this skill whenever the user wants to work with PDF files',
        content: 'Use for PDFs',
      },
    ]);
    assert.equal(skill, PDF);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['skipped_protected_region', 'skipped_protected_region', 'skipped_protected_region', 'skipped_protected_region'],
    );
    for (const r of reports) assert.match(r.reason!, /front matter .* which edits cannot change/);
  });

  it('edits of the body apply, and append goes after the body, not before the front matter', () => {
    const { skill, reports } = applyEdits(PDF, [
      { op: 'append', content: '## Checks\n\nCount the pages before and after a merge.' },
      { op: 'insert_after', target: '## Quick Start', content: 'Open files in binary mode.' },
      { op: 'replace', target: 'the text page by page', content: 'the text page by page, keeping the layout' },
    ]);
    assert.deepEqual(
      reports.map((r) => r.status),
      ['applied_append', 'applied_insert_after', 'applied_replace'],
    );
    assert.ok(skill.startsWith(frontMatter(PDF)), 'the front matter is unchanged, at the start');
    assert.ok(
      skill.endsWith('- For form filling, see FORMS.md\n\n## Checks\n\nCount the pages before and after a merge.\n'),
    );
    assert.match(skill, /## Quick Start\n\nOpen files in binary mode\.\n\nRead the file/);
  });

  it('a --- in the body is a target like any other; the one in the front matter is not', () => {
    const { skill, reports } = applyEdits(FOLDED, [
      { op: 'insert_after', target: '---', content: 'Write in the past tense.' },
    ]);
    assert.equal(reports[0]!.status, 'applied_insert_after');
    assert.ok(skill.startsWith(frontMatter(FOLDED)));
    assert.match(skill, /# Release notes\n\n---\n\nWrite in the past tense\.\n\nGroup the changes/);
  });

  it('an edit whose target spans the end of the front matter and the body is refused', () => {
    const { skill, reports } = applyEdits(PDF, [
      { op: 'replace', target: '---\n\n# PDF Processing Guide', content: '# PDF' },
    ]);
    assert.equal(skill, PDF);
    assert.equal(reports[0]!.status, 'skipped_protected_region');
  });

  it('made editable, the front matter takes edits like the body', () => {
    const { skill, reports } = applyEdits(PDF, [{ op: 'replace', target: 'name: pdf', content: 'name: pdf-tools' }], {
      frontMatter: 'editable',
    });
    assert.equal(reports[0]!.status, 'applied_replace');
    assert.match(skill, /^---\nname: pdf-tools\n/);
  });

  it('a rewrite keeps the front matter byte for byte, whatever front matter the rewrite wrote or dropped', () => {
    const renamed = `---\nname: something-else\ndescription: changed\n---\n\n# PDF guide\n\nNew body.\n`;
    assert.equal(keepProtectedRegions(PDF, renamed), `${frontMatter(PDF)}\n# PDF guide\n\nNew body.\n`);
    assert.equal(
      keepProtectedRegions(FOLDED, '# Notes\n\nBody only.\n'),
      `${frontMatter(FOLDED)}\n# Notes\n\nBody only.\n`,
    );
    // With a slow-update region as well: front matter first, body, then the region.
    const withRegion = replaceSlowUpdateField(FOLDED, 'guidance');
    const kept = keepProtectedRegions(withRegion, '# Notes\n');
    assert.ok(kept.startsWith(`${frontMatter(FOLDED)}\n# Notes\n\n${SLOW_UPDATE_START}\nguidance\n`));
  });

  it('the slow-update field and the appendix go after the body and leave the front matter as it was (blank lines included)', () => {
    const slow = replaceSlowUpdateField(replaceSlowUpdateField(FOLDED, 'first'), 'second');
    assert.ok(slow.startsWith(frontMatter(FOLDED)));
    assert.equal(slow.split(SLOW_UPDATE_START).length, 2);
    const notes = appendToAppendix(injectEmptyAppendix(FOLDED), ['Check the dates']);
    assert.ok(notes.startsWith(frontMatter(FOLDED)));
    const { skill } = applyEdits(notes, [{ op: 'append', content: 'Last rule.' }]);
    assert.ok(skill.startsWith(frontMatter(FOLDED)));
    assert.ok(skill.indexOf('Last rule.') < skill.indexOf('<!-- APPENDIX_START -->'));
  });
});
