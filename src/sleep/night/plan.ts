/**
 * What a night would cost, before any model is called: the calls of each stage (mining, the
 * attempts, the judging, the optimizer's), their tokens (measured on the harvested sessions, the
 * documents and the prompts), and their price from the price table. Where the night depends on
 * answers not known yet, it assumes what `assumptions` says; the counts are for one night.
 */
import { costLines, stageCounter, type PlanTotal, type RolePrices, type StagePlan } from '../../app/plan.ts';
import type { Price } from '../../config/schema.ts';
import { priceOf } from '../../model/prices.ts';
import { loadPrompt } from '../../prompt-files.ts';
import { countTokens } from '../../skill/document.ts';
import type { SleepConfig } from '../config.ts';
import type { SessionDigest } from '../harvest/digest.ts';
import type { ModelChoice } from './models.ts';
import type { TaskRecord } from '../tasks/task.ts';

export interface NightPlan {
  stages: StagePlan[];
  total: PlanTotal;
  prices: RolePrices;
  budget: string;
  assumptions: string[];
}

const OUTPUT = { mine: 500, attempt: 300, judge: 60, analyst: 1200, merge: 900, ranking: 150 };

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function rolePrice(choice: ModelChoice, role: 'target' | 'optimizer'): { model: string; price: Price | undefined } {
  const rc = choice.config.model[role];
  if (choice.handoff) return { model: 'handoff (answered by you)', price: { input: 0, output: 0 } };
  if (!choice.chosen) return { model: '(no backend chosen)', price: undefined };
  if (rc.backend === 'sim') return { model: `sim:${rc.model}`, price: { input: 0, output: 0 } };
  return { model: `${rc.backend}:${rc.model}`, price: priceOf(rc.model, rc.price) };
}

export function planNight(input: {
  config: SleepConfig;
  choice: ModelChoice;
  digests: SessionDigest[];
  /** The tasks the heuristic miner finds (what the night would train on without a model miner). */
  tasks: TaskRecord[];
  /** Tokens of the documents the night trains, each. */
  documentTokens: number[];
}): NightPlan {
  const { config: c, choice, digests, tasks } = input;
  const prompt = (name: string) => countTokens(loadPrompt(name));
  const { add, priced } = stageCounter();
  const modelMiner = c.mine.miner === 'model' && choice.chosen;
  const mined = digests.filter((d) => d.user_prompts.length > 0).slice(0, c.mine.max_tasks * 3);
  if (modelMiner)
    add(
      'mine',
      'optimizer',
      mined.length,
      prompt('sleep/miner') +
        mean(
          mined.map((d) =>
            countTokens(d.user_prompts.slice(0, 6).join('\n') + (d.assistant_finals.at(-1) ?? '').slice(0, 400)),
          ),
        ) +
        60,
      OUTPUT.mine,
      true,
    );
  const n = tasks.length;
  const val = Math.round(n * c.mine.val_fraction);
  const test = Math.round(n * c.mine.test_fraction);
  const train = Math.max(0, n - val - test);
  const k = c.consolidate.samples;
  const taskTokens = mean(tasks.map((t) => countTokens(`${t.intent}\n${t.context_excerpt}`)));
  const judged =
    tasks.filter((t) => t.reference_kind === 'rubric' || t.reference_kind === 'none').length / Math.max(1, n);
  const M = c.consolidate.minibatch_size;
  for (const docTokens of input.documentTokens) {
    const attemptIn = prompt('sleep/attempt') + docTokens + taskTokens + 20;
    // train, then val for the baseline and the candidate, then test before and after (measured only)
    const attempts = (train + (c.consolidate.gate ? 2 * (val || train) : 0) + 2 * test) * k;
    add('attempt', 'target', attempts, attemptIn, OUTPUT.attempt, true);
    add(
      'judge',
      'optimizer',
      Math.round(attempts * judged),
      prompt('sleep/judge') + taskTokens + OUTPUT.attempt,
      OUTPUT.judge,
      true,
    );
    const minibatches = Math.ceil(Math.ceil(train / 2) / M) * 2;
    add(
      'analyst',
      'optimizer',
      minibatches,
      prompt('analyst_failure') + docTokens + M * (taskTokens + OUTPUT.attempt + 150),
      OUTPUT.analyst,
      true,
    );
    add(
      'merge',
      'optimizer',
      minibatches >= 2 ? 1 : 0,
      prompt('merge') + docTokens + 2 * OUTPUT.analyst,
      OUTPUT.merge,
      true,
    );
    add('ranking', 'optimizer', 1, prompt('ranking') + docTokens + 600, OUTPUT.ranking, true);
  }
  const prices = { target: rolePrice(choice, 'target'), optimizer: rolePrice(choice, 'optimizer') };
  const { stages, total } = priced(prices);
  const b = choice.config.budget;
  const limits = [
    b.max_tokens ? `${b.max_tokens.toLocaleString('en-US')} tokens` : '',
    b.max_usd ? `$${b.max_usd}` : '',
    b.max_minutes ? `${b.max_minutes} minutes` : '',
    b.max_calls ? `${b.max_calls} calls` : '',
  ].filter(Boolean);
  return {
    stages,
    total,
    prices,
    budget: limits.length
      ? `the night stops when it reaches ${limits.join(' or ')} (budget.*, --budget-*)`
      : 'no budget limit (budget.* or --budget-* set one)',
    assumptions: [
      modelMiner
        ? `the model miner reads ${mined.length} sessions; the night then trains on about as many tasks as the preview below (at most ${c.mine.max_tasks})`
        : 'tasks are mined without a model (as previewed)',
      `${n} tasks: ${train} train, ${val} val, ${test} test; ${k} attempt(s) per task; ${input.documentTokens.length} document(s) trained`,
      'half the train tasks fail; every stage runs (the gate scores the candidate on every val task); answers already in the response cache cost nothing',
      `output tokens per call: attempt ${OUTPUT.attempt}, judge ${OUTPUT.judge}, analyst ${OUTPUT.analyst}, merge ${OUTPUT.merge}, mining ${OUTPUT.mine}`,
    ],
  };
}

export function formatNightPlan(plan: NightPlan): string {
  const cost = costLines(plan, 'about');
  const lines = [
    'What a night would cost (no model is called now):',
    ...cost.table.map((l) => `  ${l}`),
    ...cost.prices.map((l) => `  ${l}`),
  ];
  lines.push(`  budget: ${plan.budget}`, '  assumed:', ...plan.assumptions.map((a) => `    - ${a}`));
  return lines.join('\n');
}
