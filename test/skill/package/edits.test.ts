import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countTokens } from '../../../src/skill/document.ts';
import { applyEdits, EditSchema, type Edit, type EditReport, skipReasons } from '../../../src/skill/edits.ts';
import { applyPackageEdits } from '../../../src/skill/package/edits.ts';
import { type PackageFile, packageHash, type SkillPackage } from '../../../src/skill/package/package.ts';
import { APPENDIX_END, APPENDIX_START, SLOW_UPDATE_END, SLOW_UPDATE_START } from '../../../src/skill/regions.ts';

const SKILL = [
  '---',
  'name: pdf-forms',
  'description: Fill PDF forms. Use when the user asks to fill a form.',
  '---',
  '# PDF forms',
  '',
  '## Rules',
  '- Read references/forms.md before filling a form.',
  '- Run scripts/fill.py with the field values.',
  '',
].join('\n');
const FORMS = [
  '---',
  'title: Forms',
  '---',
  '# Forms',
  '',
  '- Check boxes take "Yes" or "Off".',
  '',
  APPENDIX_START,
  '- Dates are DD/MM/YYYY.',
  APPENDIX_END,
  '',
].join('\n');
const FILL = '#!/usr/bin/env python3\nimport sys\n\nprint(sys.argv[1])\n';
// The first bytes of a PNG: a NUL among them, so binary by content.
const LOGO = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48]);

const text = (t: string, mode = 0o644): PackageFile => ({ kind: 'text', text: t, mode });

function fixture(): SkillPackage {
  return {
    skill: SKILL,
    files: new Map<string, PackageFile>([
      ['references/forms.md', text(FORMS)],
      ['scripts/fill.py', text(FILL, 0o755)],
      ['assets/logo.png', { kind: 'binary', bytes: LOGO, mode: 0o644 }],
    ]),
  };
}

const statuses = (reports: EditReport[]) => reports.map((r) => r.status);
const fileText = (pkg: SkillPackage, path: string) => {
  const f = pkg.files?.get(path);
  assert.equal(f?.kind, 'text', `${path} is a text file of the package`);
  return f.text;
};

describe('text ops on any file of a package', () => {
  it('edit the file they name, keep its mode, and leave SKILL.md alone', () => {
    const pkg = fixture();
    const { package: out, reports } = applyPackageEdits(pkg, [
      { op: 'replace', file: 'scripts/fill.py', target: 'print(sys.argv[1])', content: 'print(sys.argv[1].strip())' },
      { op: 'append', file: 'references/forms.md', content: '- Text fields take plain text.' },
      { op: 'insert_after', file: 'references/forms.md', target: '# Forms', content: 'Every field, by kind.' },
      { op: 'delete', file: 'references/forms.md', target: '- Check boxes take "Yes" or "Off".\n\n' },
    ]);
    assert.deepEqual(statuses(reports), [
      'applied_replace',
      'applied_append_before_protected_region',
      'applied_insert_after',
      'applied_delete',
    ]);
    assert.deepEqual(
      reports.map((r) => r.file),
      ['scripts/fill.py', 'references/forms.md', 'references/forms.md', 'references/forms.md'],
    );
    assert.equal(out.skill, SKILL);
    assert.equal(
      fileText(out, 'scripts/fill.py'),
      '#!/usr/bin/env python3\nimport sys\n\nprint(sys.argv[1].strip())\n',
    );
    assert.equal(out.files?.get('scripts/fill.py')?.mode, 0o755);
    assert.equal(
      fileText(out, 'references/forms.md'),
      [
        '---',
        'title: Forms',
        '---',
        '# Forms',
        '',
        'Every field, by kind.',
        '',
        '- Text fields take plain text.',
        '',
        APPENDIX_START,
        '- Dates are DD/MM/YYYY.',
        APPENDIX_END,
        '',
      ].join('\n'),
    );
    assert.deepEqual(out.files?.get('assets/logo.png'), pkg.files?.get('assets/logo.png'));
  });

  it('honour protected regions in every text file; only SKILL.md guards its front matter', () => {
    const { package: out, reports } = applyPackageEdits(fixture(), [
      { op: 'replace', file: 'references/forms.md', target: 'Dates are DD/MM/YYYY.', content: 'Dates are ISO.' },
      { op: 'replace', file: 'references/forms.md', target: 'title: Forms', content: 'title: PDF forms' },
      { op: 'replace', target: 'name: pdf-forms', content: 'name: forms' },
      { op: 'append', file: 'scripts/fill.py', content: `${SLOW_UPDATE_START}\n# kept\n${SLOW_UPDATE_END}` },
    ]);
    assert.deepEqual(statuses(reports), [
      'skipped_protected_region',
      'applied_replace',
      'skipped_protected_region',
      'applied_append',
    ]);
    assert.match(reports[2]!.reason!, /front matter/);
    assert.ok(fileText(out, 'references/forms.md').startsWith('---\ntitle: PDF forms\n---\n'));
    assert.ok(fileText(out, 'references/forms.md').includes('- Dates are DD/MM/YYYY.'));
    assert.equal(out.skill, SKILL);
    assert.equal(fileText(out, 'scripts/fill.py'), `${FILL}\n# kept\n`);
  });

  it('the front matter of SKILL.md is editable only when made so', () => {
    const { package: out, reports } = applyPackageEdits(
      fixture(),
      [{ op: 'replace', file: 'SKILL.md', target: 'name: pdf-forms', content: 'name: forms' }],
      { frontMatter: 'editable' },
    );
    assert.equal(reports[0]!.status, 'applied_replace');
    assert.ok(out.skill.startsWith('---\nname: forms\n'));
  });

  it('a reason names the file the target was looked for in', () => {
    const { reports } = applyPackageEdits(fixture(), [
      { op: 'replace', file: 'references/forms.md', target: 'No such text', content: 'x' },
      { op: 'delete', target: 'No such text' },
    ]);
    assert.deepEqual(statuses(reports), ['skipped_replace_target_not_found', 'skipped_delete_target_not_found']);
    assert.equal(reports[0]!.reason, "the target text is not in 'references/forms.md'");
    assert.equal(reports[1]!.reason, 'the target text is not in the skill');
  });
});

describe('create_file and delete_file', () => {
  it('create_file writes the content as given, 0644, or 0755 for a script that starts with #!', () => {
    const { package: out, reports } = applyPackageEdits(fixture(), [
      { op: 'create_file', file: 'references/dates.md', content: '# Dates\n\nUse ISO 8601.\n' },
      { op: 'create_file', file: 'scripts/check.sh', content: '#!/bin/sh\nexit 0\n' },
      { op: 'create_file', file: 'scripts/lib/util.py', content: 'X = 1' },
    ]);
    assert.deepEqual(statuses(reports), ['applied_create_file', 'applied_create_file', 'applied_create_file']);
    assert.deepEqual(out.files?.get('references/dates.md'), text('# Dates\n\nUse ISO 8601.\n', 0o644));
    assert.deepEqual(out.files?.get('scripts/check.sh'), text('#!/bin/sh\nexit 0\n', 0o755));
    assert.deepEqual(out.files?.get('scripts/lib/util.py'), text('X = 1', 0o644));
    assert.equal(out.files?.size, 6);
  });

  it('create_file cannot open a protected region', () => {
    const { package: out } = applyPackageEdits(fixture(), [
      { op: 'create_file', file: 'references/notes.md', content: `${APPENDIX_START}\n- a note\n${APPENDIX_END}\n` },
    ]);
    assert.equal(fileText(out, 'references/notes.md'), '\n- a note\n\n');
  });

  it('delete_file removes a text or a binary file', () => {
    const { package: out, reports } = applyPackageEdits(fixture(), [
      { op: 'delete_file', file: 'references/forms.md' },
      { op: 'delete_file', file: 'assets/logo.png' },
    ]);
    assert.deepEqual(statuses(reports), ['applied_delete_file', 'applied_delete_file']);
    assert.deepEqual([...(out.files?.keys() ?? [])], ['scripts/fill.py']);
    assert.equal(out.skill, SKILL);
  });

  it('the last file deleted leaves a single document', () => {
    const pkg: SkillPackage = { skill: 'S\n', files: new Map([['a.md', text('A')]]) };
    const { package: out } = applyPackageEdits(pkg, [{ op: 'delete_file', file: 'a.md' }]);
    assert.deepEqual(out, { skill: 'S\n' });
    assert.equal(packageHash(out), packageHash({ skill: 'S\n' }));
  });
});

describe('refusals: skipped with the status and the reason, the package unchanged', () => {
  const cases: [string, Edit, string, RegExp][] = [
    [
      'a path that leaves the package',
      { op: 'replace', file: '../x.md', target: 'a', content: 'b' },
      'skipped_bad_path',
      /leaves the package/,
    ],
    [
      'a path through ..',
      { op: 'create_file', file: 'references/../../x.md', content: 'x' },
      'skipped_bad_path',
      /leaves the package/,
    ],
    ['an absolute path', { op: 'create_file', file: '/etc/cron.d/x', content: 'x' }, 'skipped_bad_path', /absolute/],
    ['a drive path', { op: 'delete_file', file: 'C:/x.md' }, 'skipped_bad_path', /absolute/],
    [
      'an empty segment',
      { op: 'append', file: 'references//forms.md', content: 'x' },
      'skipped_bad_path',
      /empty or '\.' segment/,
    ],
    [
      'a . segment',
      { op: 'append', file: './references/forms.md', content: 'x' },
      'skipped_bad_path',
      /empty or '\.' segment/,
    ],
    ['a backslash', { op: 'create_file', file: 'scripts\\x.py', content: 'x' }, 'skipped_bad_path', /backslash/],
    ['a file op with no file', { op: 'create_file', content: 'x' }, 'skipped_bad_path', /needs `file`/],
    [
      'a path through a file',
      { op: 'create_file', file: 'scripts/fill.py/x.py', content: 'x' },
      'skipped_bad_path',
      /runs through the file 'scripts\/fill\.py'/,
    ],
    [
      'a new file where a folder is',
      { op: 'create_file', file: 'scripts', content: 'x' },
      'skipped_bad_path',
      /is a folder/,
    ],
    [
      'a text edit into a binary file',
      { op: 'append', file: 'assets/logo.png', content: 'x' },
      'skipped_binary_file',
      /binary file/,
    ],
    [
      'a replace in a binary file',
      { op: 'replace', file: 'assets/logo.png', target: 'PNG', content: 'x' },
      'skipped_binary_file',
      /never edited/,
    ],
    [
      'a new file with a NUL byte',
      { op: 'create_file', file: 'assets/x.bin', content: 'a\0b' },
      'skipped_binary_file',
      /NUL/,
    ],
    [
      'create_file over a file',
      { op: 'create_file', file: 'references/forms.md', content: 'x' },
      'skipped_file_exists',
      /replace.*delete_file it first/,
    ],
    [
      'create_file over a binary file',
      { op: 'create_file', file: 'assets/logo.png', content: 'x' },
      'skipped_file_exists',
      /exists/,
    ],
    [
      'create_file over SKILL.md',
      { op: 'create_file', file: 'SKILL.md', content: 'x' },
      'skipped_file_exists',
      /exists/,
    ],
    [
      'create_file differing only in case',
      { op: 'create_file', file: 'References/Forms.md', content: 'x' },
      'skipped_file_exists',
      /only in case/,
    ],
    [
      'create_file of skill.md',
      { op: 'create_file', file: 'skill.md', content: 'x' },
      'skipped_file_exists',
      /only in case/,
    ],
    [
      'create_file with no content',
      { op: 'create_file', file: 'references/x.md', content: ' \n' },
      'skipped_empty_content',
      /nothing to write/,
    ],
    ['delete_file of SKILL.md', { op: 'delete_file', file: 'SKILL.md' }, 'skipped_protected_file', /not deleted/],
    [
      'delete_file of a missing file',
      { op: 'delete_file', file: 'references/none.md' },
      'skipped_missing_file',
      /no file 'references\/none\.md'/,
    ],
    ['delete_file of a folder', { op: 'delete_file', file: 'references' }, 'skipped_missing_file', /is a folder/],
    [
      'a text op on a missing file',
      { op: 'replace', file: 'references/none.md', target: 'a', content: 'b' },
      'skipped_missing_file',
      /no file/,
    ],
    ['an unknown op', { op: 'rename_file', file: 'scripts/fill.py' }, 'skipped_unknown_op', /create_file, delete_file/],
  ];
  for (const [what, edit, status, reason] of cases) {
    it(what, () => {
      const pkg = fixture();
      const { package: out, reports } = applyPackageEdits(pkg, [edit]);
      assert.equal(reports[0]!.status, status);
      assert.match(reports[0]!.reason ?? '', reason);
      assert.equal(packageHash(out), packageHash(pkg));
    });
  }

  it('the skipped edits are counted in words', () => {
    const { reports } = applyPackageEdits(
      fixture(),
      cases.map(([, edit]) => edit),
    );
    assert.equal(
      skipReasons(reports),
      '10 bad path, 3 binary file, 5 file exists, 1 no content, 1 SKILL.md cannot be deleted, 3 no such file, 1 unknown op',
    );
  });

  it('applying never changes the package it is given', () => {
    const pkg = fixture();
    const before = packageHash(pkg);
    applyPackageEdits(pkg, [
      { op: 'delete_file', file: 'scripts/fill.py' },
      { op: 'append', file: 'references/forms.md', content: 'x' },
      { op: 'create_file', file: 'a.md', content: 'a' },
      { op: 'append', content: 'y' },
    ]);
    assert.equal(packageHash(pkg), before);
    assert.equal(pkg.files?.size, 3);
  });
});

describe('a patch over several files', () => {
  it('applies in order across files, each edit to the result of the ones before', () => {
    const { package: out, reports } = applyPackageEdits(fixture(), [
      { op: 'create_file', file: 'references/dates.md', content: '# Dates\n\nUse ISO 8601.\n' },
      {
        op: 'insert_after',
        target: '- Read references/forms.md before filling a form.',
        content: '- Read references/dates.md when a field holds a date.',
      },
      { op: 'append', file: 'references/dates.md', content: 'Never two-digit years.' },
      // The created file is text this patch wrote: a targeted edit in it overlaps.
      { op: 'replace', file: 'references/dates.md', target: 'Use ISO 8601.', content: 'Use RFC 3339.' },
      { op: 'delete_file', file: 'references/forms.md' },
      { op: 'append', file: 'references/forms.md', content: 'too late' },
      { op: 'create_file', file: 'references/forms.md', content: '# Forms\n' },
      // Overlap is per file: the same words edited in another file are not the SKILL.md edit's.
      { op: 'replace', target: 'Run scripts/fill.py', content: 'Run python3 scripts/fill.py' },
      { op: 'replace', file: 'scripts/fill.py', target: 'import sys', content: 'import sys  # Run scripts/fill.py' },
    ]);
    assert.deepEqual(statuses(reports), [
      'applied_create_file',
      'applied_insert_after',
      'applied_append',
      'skipped_overlapping_edit',
      'applied_delete_file',
      'skipped_missing_file',
      'applied_create_file',
      'applied_replace',
      'applied_replace',
    ]);
    assert.equal(
      out.skill,
      SKILL.replace(
        '- Read references/forms.md before filling a form.\n',
        '- Read references/forms.md before filling a form.\n\n- Read references/dates.md when a field holds a date.\n',
      ).replace('Run scripts/fill.py', 'Run python3 scripts/fill.py'),
    );
    assert.equal(fileText(out, 'references/dates.md'), '# Dates\n\nUse ISO 8601.\n\nNever two-digit years.\n');
    assert.deepEqual(out.files?.get('references/forms.md'), text('# Forms\n'));
    assert.ok(fileText(out, 'scripts/fill.py').includes('import sys  # Run scripts/fill.py'));
    assert.equal(reports[1]!.file, undefined, 'an edit that names no file is reported without one');
  });
});

describe('token limits', () => {
  const long = 'This reference paragraph is long enough to cost a good many tokens in any tokenizer at all.';

  it('maxTokens bounds SKILL.md only', () => {
    const limit = countTokens(SKILL) + 3;
    const { package: out, reports } = applyPackageEdits(
      fixture(),
      [
        { op: 'append', content: long },
        { op: 'append', file: 'references/forms.md', content: long },
        { op: 'create_file', file: 'references/long.md', content: long },
      ],
      { maxTokens: limit },
    );
    assert.deepEqual(statuses(reports), [
      'skipped_length_limit',
      'applied_append_before_protected_region',
      'applied_create_file',
    ]);
    assert.equal(
      reports[0]!.reason,
      `the skill would grow to ${countTokens(`${SKILL.trimEnd()}\n\n${long}\n`)} tokens, over the limit of ${limit}`,
    );
    assert.equal(out.skill, SKILL);
  });

  it('maxPackageTokens bounds the text of all text files together', () => {
    const total = countTokens(SKILL) + countTokens(FORMS) + countTokens(FILL);
    const grown = total + countTokens(long);
    const { package: out, reports } = applyPackageEdits(
      fixture(),
      [
        { op: 'create_file', file: 'references/long.md', content: long },
        { op: 'append', file: 'scripts/fill.py', content: `# ${long}` },
        { op: 'append', content: long },
        { op: 'delete', file: 'references/forms.md', target: '- Check boxes take "Yes" or "Off".' },
        { op: 'create_file', file: 'references/short.md', content: 'Short.' },
      ],
      { maxPackageTokens: total + 4 },
    );
    assert.deepEqual(statuses(reports), [
      'skipped_length_limit',
      'skipped_length_limit',
      'skipped_length_limit',
      'applied_delete',
      'applied_create_file',
    ]);
    assert.equal(
      reports[0]!.reason,
      `the package's text would grow to ${grown} tokens, over the limit of ${total + 4}`,
    );
    assert.equal(out.files?.has('references/long.md'), false);
    assert.equal(fileText(out, 'scripts/fill.py'), FILL);
    assert.equal(out.skill, SKILL);
  });

  it('the package limit counts what earlier edits of the patch added and removed', () => {
    const total = countTokens(SKILL) + countTokens(FORMS) + countTokens(FILL);
    const { reports } = applyPackageEdits(
      fixture(),
      [
        { op: 'create_file', file: 'references/long.md', content: long },
        { op: 'create_file', file: 'references/more.md', content: 'More.' },
        { op: 'delete_file', file: 'references/forms.md' },
        { op: 'create_file', file: 'references/more.md', content: 'More.' },
      ],
      { maxPackageTokens: total + countTokens(long) },
    );
    assert.deepEqual(statuses(reports), [
      'applied_create_file',
      'skipped_length_limit',
      'applied_delete_file',
      'applied_create_file',
    ]);
  });

  it('an edit that shrinks the text applies even over the limit', () => {
    const { reports } = applyPackageEdits(
      fixture(),
      [{ op: 'delete', file: 'references/forms.md', target: '- Check boxes take "Yes" or "Off".' }],
      { maxPackageTokens: 5 },
    );
    assert.equal(reports[0]!.status, 'applied_delete');
  });
});

describe('a single document is a package with no other files', () => {
  const DOC = '# Skill\n\n## Rules\n- Answer briefly.\n- Cite sources.\n';
  const OLD_PATCH: Edit[] = [
    { op: 'replace', target: 'Answer briefly.', content: 'Answer in one line.' },
    { op: 'insert_after', target: 'Cite sources.', content: '- Prefer primary sources.' },
    { op: 'delete', target: '## Rules\n' },
    { op: 'append', content: '- Use metric units.' },
  ];
  const EXPECTED =
    '# Skill\n\n- Answer in one line.\n- Cite sources.\n\n- Prefer primary sources.\n\n- Use metric units.\n';

  it('an old-style patch gives the same bytes by either path, and the same reports', () => {
    const viaDocument = applyEdits(DOC, OLD_PATCH, { maxTokens: 100 });
    const viaPackage = applyPackageEdits({ skill: DOC }, OLD_PATCH, { maxTokens: 100 });
    const namingSkill = applyPackageEdits(
      { skill: DOC },
      OLD_PATCH.map((e) => ({ ...e, file: 'SKILL.md' })),
    );
    assert.equal(viaDocument.skill, EXPECTED);
    assert.deepEqual(viaPackage.package, { skill: EXPECTED });
    assert.equal(namingSkill.package.skill, EXPECTED);
    assert.deepEqual(viaDocument.reports, viaPackage.reports);
    assert.ok(
      viaDocument.reports.every((r) => !('file' in r)),
      'the reports of old-style edits have no file',
    );
  });

  it("the original's edit JSON parses with no file, and a file op keeps its file", () => {
    const [old, create] = [
      EditSchema.parse({ op: 'replace', target: 'a', content: 'b', support_count: '2' }),
      EditSchema.parse({ op: 'create_file', file: 'references/a.md', content: 'A' }),
    ];
    assert.deepEqual(old, { op: 'replace', target: 'a', content: 'b', support_count: 2 });
    assert.deepEqual(create, { op: 'create_file', file: 'references/a.md', content: 'A' });
  });

  it('applyEdits skips file ops, which need a package, and finds no other file', () => {
    const { skill, reports } = applyEdits(DOC, [
      { op: 'create_file', file: 'references/a.md', content: 'A' },
      { op: 'delete_file', file: 'references/a.md' },
      { op: 'append', file: 'references/a.md', content: 'A' },
    ]);
    assert.equal(skill, DOC);
    assert.deepEqual(statuses(reports), ['skipped_single_document', 'skipped_single_document', 'skipped_missing_file']);
    assert.match(reports[0]!.reason!, /needs a skill package/);
  });
});
