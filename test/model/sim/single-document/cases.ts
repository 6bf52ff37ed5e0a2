/**
 * Fixed cases of the simulator under single-document skills (no package files): the target's
 * answers and usage, and the optimizer's replies. `baseline.json` holds what they gave before
 * skill packages existed (`make.ts` writes it); a package-aware simulator must give the same.
 */
import { trajectoryView } from '../../../../src/engine/optimizer-model/trajectory-text.ts';
import { SimEnv } from '../../../../src/envs/sim/env.ts';
import { SimModel } from '../../../../src/model/sim/backend.ts';
import { optimizerReply } from '../../../../src/model/sim/optimizer.ts';
import type { OptimizerMeta, TrajectoryView, UpdateMode } from '../../../../src/protocol/optimizer.ts';
import { replaceAppendix } from '../../../../src/skill/regions.ts';
import { Rng } from '../../../../src/util/random.ts';

const TRAITS = { harmful: 0.3, irrelevant: 0.35, vague: 0.15, blame: 0.35 };

const LONG_FILLER = Array.from(
  { length: 30 },
  (_, i) => `- Keep answer ${i + 1} short and check it twice before replying.`,
).join('\n');

export const SKILLS: Record<string, string> = {
  empty: '',
  seed: '# Answering questions about our sites\n\nAnswer each question with the fact asked for, and nothing else.\n\n- Write every date as YYYY-MM-DD.\n',
  all_rules: [
    '# Site answers',
    '',
    '- Write every date as YYYY-MM-DD.',
    '- Write amounts and measurements with exactly two decimals (12.50, not 12.5).',
    '- Never use thousands separators: write 12345, not 12,345.',
    '- Leave a space between the number and its unit.',
    '- Names are answered in lower case (maple street depot).',
    '- Amounts of money end with a currency code such as USD.',
    '- Use the % symbol for percentages.',
  ].join('\n'),
  long: `# Site answers\n\n- Write every date as YYYY-MM-DD.\n- Use two digits after the decimal point for amounts and measurements.\n- Numbers are written without thousands separators.\n${LONG_FILLER}\n- Use lowercase for every name you give as an answer.\n`,
  harmful:
    '# Site answers\n\n- Write every date as YYYY-MM-DD.\n- Always answer in upper case so that the answer stands out.\n- Round every number to a whole value.\n- Use the % symbol for percentages.\n',
  appendix: replaceAppendix(
    `# Site answers\n\n- Write every date as YYYY-MM-DD.\n- Numbers are written without thousands separators.\n${LONG_FILLER}\n`,
    ['Re-check every answer: Write every date as YYYY-MM-DD.'],
  ),
  pointer_without_files:
    '# Site answers\n\nFor dates, read references/dates.md.\nFor names, open references/names.md first.\n- Use the % symbol for percentages.\n',
};

/** Every answer and the summed usage of each skill over a fixed test split, at noise 0 and 0.2. */
export async function targetCases(): Promise<Record<string, { answers: string[]; input: number; output: number }>> {
  const env = new SimEnv({ n_train: 10, n_val: 10, n_test: 30, noise: 0.1, data_seed: 7 });
  const { test } = await env.load();
  const out: Record<string, { answers: string[]; input: number; output: number }> = {};
  for (const noise of [0, 0.2]) {
    const target = new SimModel('sim-1', 42, 0, TRAITS, noise);
    for (const [name, skill] of Object.entries(SKILLS)) {
      for (const sample of noise ? [0, 1] : [0]) {
        const answers: string[] = [];
        let input = 0;
        let output = 0;
        for (const item of test) {
          const t = await env.rollout(item, skill, { target, seed: 1, sample });
          answers.push(t.predicted ?? '');
          input += t.usage?.input ?? 0;
          output += t.usage?.output ?? 0;
        }
        out[`${name}@noise=${noise},sample=${sample}`] = { answers, input, output };
      }
    }
  }
  return out;
}

/** Failed trajectories of a skill over the fixed split, as an analyst sees them. */
async function failures(skill: string): Promise<TrajectoryView[]> {
  const env = new SimEnv({ n_train: 30, n_val: 10, n_test: 10, noise: 0.1, data_seed: 7 });
  const { train } = await env.load();
  const target = new SimModel('sim-1', 42, 0, TRAITS);
  const views: TrajectoryView[] = [];
  for (const item of train) {
    const t = await env.rollout(item, skill, { target, seed: 1 });
    if (!t.hard) views.push(trajectoryView(t));
  }
  return views;
}

/** The optimizer's analyst and merge replies for fixed payloads, in each update mode. */
export async function optimizerCases(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const skillName of ['seed', 'long', 'harmful']) {
    const skill = SKILLS[skillName]!;
    const trajectories = await failures(skill);
    for (const mode of ['patch', 'rewrite_from_suggestions', 'full_rewrite_minibatch'] as UpdateMode[]) {
      for (const skillAware of [false, true]) {
        for (const seed of [1, 2, 3]) {
          const meta: OptimizerMeta = {
            kind: 'analyst',
            source: 'failure',
            mode,
            skill,
            budget: 4,
            trajectories: trajectories.slice(seed, seed + 6),
            stepBuffer: [],
            metaSkill: seed === 3 ? 'Avoid blanket style directives: they caused regressions.' : '',
            skillAware,
            analystGuide: '',
          };
          out[`analyst:${skillName}:${mode}:${skillAware}:${seed}`] = optimizerReply(meta, new Rng(seed), TRAITS);
        }
      }
    }
    const patches = [1, 2, 3].map((seed) => {
      const meta: OptimizerMeta = {
        kind: 'analyst',
        source: 'failure',
        mode: 'patch',
        skill,
        budget: 4,
        trajectories: trajectories.slice(seed * 2, seed * 2 + 6),
        stepBuffer: [],
        metaSkill: '',
        skillAware: false,
        analystGuide: '',
      };
      const reply = optimizerReply(meta, new Rng(seed), TRAITS) as { patch: { reasoning: string; edits: [] } };
      return { reasoning: reply.patch.reasoning, items: reply.patch.edits };
    });
    for (const level of ['failure', 'top'] as const) {
      out[`merge:${skillName}:${level}`] = optimizerReply(
        { kind: 'merge', level, mode: 'patch', skill, patches },
        new Rng(5),
        TRAITS,
      );
    }
  }
  return out;
}
