/**
 * The simulated optimizer edits a skill package when the analyst request lists its files
 * (`meta.files`): rules go into reference files with a line in SKILL.md saying when to open them,
 * overlooked rules move out of a long SKILL.md, and it still errs, so the gate has work.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { trajectoryView } from '../../../src/engine/optimizer-model/trajectory-text.ts';
import { optimizerReply, type OptimizerTraits } from '../../../src/model/sim/optimizer.ts';
import { pointersIn } from '../../../src/model/sim/references.ts';
import { HARMFUL, IRRELEVANT } from '../../../src/model/sim/rules.ts';
import { conventionOf } from '../../../src/model/sim/world.ts';
import type { OptimizerMeta, TrajectoryView, UpdateMode } from '../../../src/protocol/optimizer.ts';
import { applyEdits, type Edit } from '../../../src/skill/edits.ts';
import type { PackageFile } from '../../../src/skill/package/package.ts';
import { Rng } from '../../../src/util/random.ts';
import { demoPackage, env, hardScore, rollAll, TRAITS, textFiles } from './package-helpers.ts';

const { train } = await env.load();
const CLEAN: OptimizerTraits = { harmful: 0, irrelevant: 0, vague: 0, blame: 0 };
const HEAD = '# Site answers\n\nAnswer each question with the fact asked for.\n';

function listing(skill: string, files: Map<string, PackageFile>) {
  return [
    { path: 'SKILL.md', kind: 'text', size: skill.length },
    ...[...files].map(([path, f]) => ({
      path,
      kind: f.kind,
      size: f.kind === 'text' ? f.text.length : f.bytes.length,
    })),
  ];
}

async function failures(skill: string, files: Map<string, PackageFile>, kind?: string): Promise<TrajectoryView[]> {
  const items = kind ? train.filter((i) => i.type === kind) : train;
  return (await rollAll(items, skill, files)).filter((t) => !t.hard).map(trajectoryView);
}

function analystMeta(skill: string, trajectories: TrajectoryView[], extra: Record<string, unknown> = {}) {
  return {
    kind: 'analyst',
    source: 'failure',
    mode: 'patch' as UpdateMode,
    skill,
    budget: 10,
    trajectories,
    stepBuffer: [],
    metaSkill: '',
    skillAware: false,
    analystGuide: '',
    ...extra,
  } as OptimizerMeta;
}

const editsOf = (reply: unknown) => (reply as { patch: { edits: Edit[] } }).patch.edits;

/** The package after `edits`, applied in order: SKILL.md's with applyEdits, files made, appended to or deleted. */
function applied(skill: string, files: Map<string, PackageFile>, edits: Edit[]) {
  let doc = skill;
  const out = new Map(files);
  for (const e of edits) {
    const file = typeof e.file === 'string' ? e.file : undefined;
    if (e.op === 'create_file') out.set(file!, { kind: 'text', text: e.content!, mode: 0o644 });
    else if (e.op === 'delete_file') out.delete(file!);
    else if (file) {
      const f = out.get(file);
      assert.equal(f?.kind, 'text', `${file} exists`);
      out.set(file, { kind: 'text', text: f?.kind === 'text' ? applyEdits(f.text, [e]).skill : '', mode: 0o644 });
    } else doc = applyEdits(doc, [e]).skill;
  }
  return { skill: doc, files: out };
}

describe('the sim optimizer on a skill package', () => {
  it('puts a missing rule into a new references/<kind>.md and says in SKILL.md when to open it; the target then follows it', async () => {
    const files = new Map<string, PackageFile>();
    const fails = await failures(HEAD, files, 'name');
    assert.ok(fails.length > 0);
    const edits = editsOf(optimizerReply(analystMeta(HEAD, fails, { files: listing(HEAD, files) }), new Rng(1), CLEAN));
    const made = edits.find((e) => e.op === 'create_file');
    assert.equal(made?.file, 'references/names.md');
    assert.equal(conventionOf(made!.content!)?.id, 'lower_case');
    const pointer = edits.find((e) => e.op === 'append' && e.file === undefined);
    assert.deepEqual(
      pointersIn(pointer!.content!, (p) => p === 'references/names.md'),
      [{ files: ['references/names.md'], kinds: ['name'] }],
    );
    const after = applied(HEAD, files, edits);
    assert.equal(
      hardScore(
        await rollAll(
          train.filter((i) => i.type === 'name'),
          after.skill,
          after.files,
        ),
      ),
      1,
    );
    assert.equal(after.skill.includes('lower'), false, 'the rule is in the reference, not in SKILL.md');
  });

  it('proposes only SKILL.md edits, as before packages, when the request lists no files or is not a patch', async () => {
    const files = new Map<string, PackageFile>();
    const fails = await failures(HEAD, files);
    for (const meta of [
      analystMeta(HEAD, fails),
      analystMeta(HEAD, fails, { mode: 'rewrite_from_suggestions', files: listing(HEAD, files) }),
    ]) {
      const reply = JSON.stringify(optimizerReply(meta, new Rng(1), CLEAN));
      assert.equal(/create_file|"file"/.test(reply), false, reply);
    }
  });

  it('says when to open a reference the package has but SKILL.md never points to, instead of making it again', async () => {
    const demo = demoPackage();
    const percent = train.filter((i) => i.type === 'percent');
    const fails = await failures(demo.skill, demo.files, 'percent');
    assert.equal(fails.length, percent.length, 'references/percentages.md holds the rule, unread');
    const edits = editsOf(
      optimizerReply(analystMeta(demo.skill, fails, { files: listing(demo.skill, demo.files) }), new Rng(1), CLEAN),
    );
    assert.deepEqual(
      edits.map((e) => [e.op, e.file, pointersIn(e.content ?? '', (p) => demo.files.has(p))]),
      [['append', undefined, [{ files: ['references/percentages.md'], kinds: ['percent'] }]]],
    );
    const after = applied(demo.skill, demo.files, edits);
    assert.equal(hardScore(await rollAll(percent, after.skill, after.files)), 1);
  });

  it('appends a missing rule to the reference SKILL.md already sends that kind to', async () => {
    const skill = `${HEAD}\nFor percentages, read references/percentages.md.\n`;
    const files = textFiles({ 'references/percentages.md': '# Percentages\n\nShares keep their one decimal.\n' });
    const fails = await failures(skill, files, 'percent');
    const edits = editsOf(
      optimizerReply(analystMeta(skill, fails, { files: listing(skill, files) }), new Rng(1), CLEAN),
    );
    assert.deepEqual(
      edits.map((e) => [e.op, e.file, conventionOf(e.content ?? '')?.id]),
      [['append', 'references/percentages.md', 'percent_symbol']],
    );
  });

  it('moves a rule a long SKILL.md states but the target overlooks into a reference, section and all', async () => {
    const demo = demoPackage();
    const fails = await failures(demo.skill, demo.files, 'date');
    assert.ok(fails.length > 0, 'the long SKILL.md makes the target overlook its date rule');
    const edits = editsOf(
      optimizerReply(analystMeta(demo.skill, fails, { files: listing(demo.skill, demo.files) }), new Rng(1), CLEAN),
    );
    const dateLine = demo.skill.split('\n').find((l) => l.startsWith('Write every date as YYYY-MM-DD'))!;
    assert.deepEqual(
      edits.map((e) => [e.op, e.file ?? 'SKILL.md']),
      [
        ['create_file', 'references/dates.md'],
        ['append', 'SKILL.md'],
        ['delete', 'SKILL.md'],
      ],
    );
    assert.ok(edits[0]!.content!.includes(dateLine));
    assert.equal(edits[2]!.target, `## Dates\n\n${dateLine}`);
    const after = applied(demo.skill, demo.files, edits);
    assert.ok(!after.skill.includes(dateLine) && after.skill.length < demo.skill.length);
    assert.equal(
      hardScore(
        await rollAll(
          train.filter((i) => i.type === 'date'),
          after.skill,
          after.files,
        ),
      ),
      1,
    );
  });

  it('sometimes errs inside the package, within the budget: a directive or advice in a reference, a reference deleted', async () => {
    const demo = demoPackage();
    const skill = `${demo.skill}\nFor percentages, read references/percentages.md.\n`;
    const fails = await failures(skill, demo.files);
    const seen = new Map<string, number>();
    const runs = 60;
    for (let seed = 1; seed <= runs; seed++) {
      const meta = analystMeta(skill, fails.slice(seed % 10, (seed % 10) + 6), {
        files: listing(skill, demo.files),
        budget: 4,
      });
      for (const e of editsOf(optimizerReply(meta, new Rng(seed), TRAITS))) {
        const text = (e.content ?? '').replace(/^- /, '');
        const kind =
          e.op === 'delete_file'
            ? 'reference deleted'
            : e.file && HARMFUL.some((h) => h.text === text)
              ? 'directive in a reference'
              : e.file && IRRELEVANT.includes(text)
                ? 'advice in a reference'
                : undefined;
        if (kind) seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }
    }
    assert.deepEqual([...seen.keys()].sort(), [
      'advice in a reference',
      'directive in a reference',
      'reference deleted',
    ]);
    // Sometimes, not always: most proposals are the useful ones.
    const total = [...seen.values()].reduce((a, b) => a + b, 0);
    assert.ok(total < runs / 2, `${total} missteps in ${runs} replies`);
  });

  it('refuses a file list of the wrong shape, naming meta.files', () => {
    const meta = analystMeta(HEAD, [], { files: [{ path: 'references/a.md', kind: 'text' }] });
    assert.throws(() => optimizerReply(meta, new Rng(1)), /meta\.files must be a list of \{path, kind.*size/);
  });

  it('merges two analysts making the same reference into one file with both rules, and their pointers into one', () => {
    const patch = (rule: string, pointer: string) => ({
      reasoning: '',
      items: [
        { op: 'create_file', file: 'references/money.md', content: `# Amounts of money\n\n- ${rule}\n` },
        { op: 'append', content: pointer },
      ],
    });
    const reply = optimizerReply(
      {
        kind: 'merge',
        level: 'final',
        mode: 'patch',
        skill: HEAD,
        patches: [
          patch(
            'Amounts of money end with a currency code such as USD.',
            'For amounts of money, read references/money.md.',
          ),
          patch(
            'Always show two decimal places for money and measured quantities.',
            'Before answering with an amount of money, consult references/money.md.',
          ),
        ],
      },
      new Rng(1),
    ) as { edits: Edit[] };
    assert.deepEqual(
      reply.edits.map((e) => [e.op, e.file, e.support_count]),
      [
        ['create_file', 'references/money.md', 2],
        ['append', undefined, 2],
      ],
    );
    assert.equal(
      reply.edits[0]!.content,
      '# Amounts of money\n\n- Amounts of money end with a currency code such as USD.\n- Always show two decimal places for money and measured quantities.\n',
    );
  });
});
