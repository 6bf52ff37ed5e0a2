/**
 * The console reporter: turns run events into readable lines (the original's log format,
 * scores with four decimals, timings per stage). On a terminal, long stages show a progress
 * bar; elsewhere only plain lines are printed.
 */
import path from 'node:path';
import { createRequire } from 'node:module';
import type cliProgress from 'cli-progress';
import { count } from '../util/plural.ts';
import type { EventLog, RunEvent } from './events.ts';
import { STEP_ACTION_WORDS } from './plain-words.ts';

export const STAGE_LABELS: Record<string, string> = {
  rollout: '1/6 ROLLOUT',
  reflect: '2/6 REFLECT',
  aggregate: '3/6 AGGREGATE',
  select: '4/6 SELECT',
  update: '5/6 UPDATE',
  evaluate: '6/6 EVALUATE',
};

export const f4 = (x: number | null | undefined) => (x == null ? 'n/a' : x.toFixed(4));

/** What the epoch-boundary actions mean, in words (the action's name follows in parentheses). */
const EPOCH_ACTIONS: Record<'slow_update' | 'meta_skill', Record<string, string>> = {
  slow_update: {
    inject_placeholder:
      'no earlier epoch to compare with yet; an empty guidance field is added to the skill for the next epochs',
    no_content: 'the skill is unchanged',
    over_length_limit: 'the guidance would take the skill over optimizer.max_skill_tokens; the skill is unchanged',
    force_accept: 'guidance from comparing the two epochs is written into the skill',
    accept_new_best: 'guidance written into the skill, which is the new best',
    accept: 'guidance written into the skill, which beats the current one',
    reject: 'guidance rejected: the skill with it did not beat the current one',
  },
  meta_skill: {
    skip_first_epoch: 'nothing yet: the notes for the optimizer compare two epochs, from the end of epoch 2 on',
    write_meta_skill: 'notes for the optimizer written, read by its prompts in the epochs that follow',
    no_content: 'no new notes; the latest notes stay in use',
  },
};

function formatRunStarted(event: Extract<RunEvent, { type: 'run_started' }>): string {
  const roles = [
    `target ${event.target}`,
    `optimizer ${event.optimizer}`,
    ...(event.judge ? [`judge ${event.judge}`] : []),
  ].join(', ');
  const d = event.data;
  const resumed =
    event.resume_from > event.total_steps
      ? `  resuming after the last step (${event.total_steps} of ${event.total_steps} done)`
      : event.resume_from > 1
        ? `  resuming at step ${event.resume_from} of ${event.total_steps}`
        : undefined;
  return [
    '='.repeat(60),
    `  skillopt train  env=${event.env}  ${roles}`,
    ...(d
      ? [
          `  data: ${d.train} train items, selection ${d.selection} of ${d.val} val items, test ${d.test_used} of ${d.test} items`,
        ]
      : []),
    `  ${count(event.epochs, 'epoch')} x ${count(event.steps_per_epoch, 'step')} = ${count(event.total_steps, 'step')}${event.batch_size ? ` (batch ${event.batch_size})` : ''}` +
      (event.budget ? `; budget: ${event.budget.length ? event.budget.join(', ') : 'no limit'}` : ''),
    `  run directory: ${event.out_root}`,
    ...(event.config_path ? [`  full config: ${event.config_path} (--verbose prints it)`] : []),
    ...(resumed ? [resumed] : []),
    '='.repeat(60),
  ].join('\n');
}

/** What a finished run reached and where its skill is (a rerun of a finished run prints this). */
export function formatFinishedRun(dir: string, summary: Record<string, unknown>): string {
  const n = (k: string) => (typeof summary[k] === 'number' ? (summary[k] as number) : null);
  return [
    `This run is finished: ${dir}`,
    `  best skill from step ${n('best_step') ?? '?'} (selection ${f4(n('best_selection_hard'))}): ${path.join(dir, 'best_skill.md')}`,
    `  test: initial=${f4(n('baseline_test_hard'))}  best=${f4(n('test_hard'))}  final=${f4(n('final_test_hard'))}`,
    'Nothing was run. To train again, choose another output directory (--out).',
  ].join('\n');
}

/** Where the console lines go: a stream such as `process.stdout` (a terminal also gets progress bars). */
export interface ConsoleOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** How the console speaks: in words (the default), or with the records' codes too (`--verbose`). */
export interface ReportOptions {
  verbose?: boolean;
}

export function formatEvent(event: RunEvent, options: ReportOptions = {}): string | undefined {
  const { verbose = false } = options;
  // With --verbose, a stage's detail is followed by the codes behind it.
  const codes = (stats: Record<string, unknown> | undefined) =>
    verbose && stats
      ? ` [${Object.entries(stats)
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ')}]`
      : '';
  switch (event.type) {
    case 'run_started':
      return formatRunStarted(event);
    case 'stage_started': {
      const label = STAGE_LABELS[event.stage];
      const detail = event.detail && `${event.detail}${codes(event.stats)}`;
      if (!label) return `  [${event.stage.toUpperCase().replace(/_/g, ' ')}]${detail ? ` ${detail}` : ''}`;
      return `    [${label}]${detail ? ` ${detail}` : ''}`;
    }
    case 'stage_finished': {
      const label = STAGE_LABELS[event.stage];
      const head = label ? `    [${label.split(' ')[0]} done]` : `  [${event.stage.replace(/_/g, ' ')} done]`;
      // A detail of several lines (a table) goes below the line with the timing.
      const [firstLine = '', ...rest] = (event.detail ?? '').split('\n');
      const first = firstLine + codes(event.stats);
      return `${head}${first ? ` ${first}` : ''}  (${event.seconds.toFixed(1)}s)${rest.length ? `\n${rest.join('\n')}` : ''}`;
    }
    case 'gate_decision': {
      const verdict: Record<string, string> = {
        accept_new_best: 'ACCEPT (new best)',
        accept: 'ACCEPT',
        reject: 'REJECT',
        force_accept: 'FORCE-ACCEPT (gate disabled)',
      };
      const cmp = event.action === 'reject' ? '<=' : '>';
      const against =
        event.action === 'accept_new_best' ? `prev best ${f4(event.best_score)}` : `current=${f4(event.current_score)}`;
      const saved = `selection rollouts used=${event.rollouts_used} saved=${event.rollouts_saved}${event.early_stopped ? ', stopped early: at most this score' : ''}`;
      if (event.action === 'force_accept')
        return `    [6/6 EVALUATE] ${verdict[event.action]} ${event.metric}=${f4(event.candidate_score)}  (${saved})`;
      if (event.test) {
        const t = event.test;
        const evidence = `paired ${t.method}: effect ${t.effect >= 0 ? '+' : ''}${t.effect.toFixed(4)} per item, p=${t.p.toPrecision(3)} ${t.p <= t.alpha ? '<=' : '>'} alpha=${t.alpha}, n=${t.n}`;
        const scored = event.early_stopped
          ? `at most ${f4(event.candidate_score)}, stopped once the test could no longer pass`
          : f4(event.candidate_score);
        return `    [6/6 EVALUATE] ${verdict[event.action] ?? event.action} ${event.metric}=${scored} vs current=${f4(event.current_score)}: ${evidence}  (selection rollouts used=${event.rollouts_used} saved=${event.rollouts_saved})`;
      }
      return `    [6/6 EVALUATE] ${verdict[event.action] ?? event.action} ${event.metric}=${f4(event.candidate_score)} ${cmp} ${against}  (${saved})`;
    }
    case 'edits_skipped':
      return `    [update] ${event.skipped} of ${count(event.total, 'edit')} skipped: ${event.reasons}`;
    case 'step_finished': {
      const timing = event.timing
        ? `\n    timing: ${Object.entries(event.timing)
            .map(([k, v]) => `${k.replace(/_s$/, '')}=${v.toFixed(1)}s`)
            .join(' ')}`
        : '';
      const action =
        verbose || !STEP_ACTION_WORDS[event.action] ? `action=${event.action}` : `${STEP_ACTION_WORDS[event.action]};`;
      return `  [STEP ${event.step} done] epoch=${event.epoch} ${action} current=${f4(event.current_score)} best=${f4(event.best_score)} dt=${event.seconds.toFixed(1)}s${timing}`;
    }
    case 'epoch_boundary': {
      const meaning = EPOCH_ACTIONS[event.kind][event.action];
      const what = meaning ? (verbose ? `${meaning} (${event.action})` : meaning) : event.action;
      return `  [${event.kind === 'slow_update' ? 'slow update' : 'meta skill'}, end of epoch ${event.epoch}] ${what}${event.detail ? `: ${event.detail}` : ''}`;
    }
    case 'gate_overlap': {
      const under = event.guess === 'candidate' ? 'the candidate' : 'the current skill';
      const outcome = event.right
        ? 'the guess was right: the next step takes them'
        : `the guess was wrong: ${count(event.wasted, 'call')} wasted`;
      return `    [overlap] ${count(event.rollouts, 'rollout')} of the next step ran ahead under ${under}; ${outcome}`;
    }
    case 'reflect_ahead':
      return `    [overlap] ${count(event.calls, 'analyst and merge call', 'analyst and merge calls')} of this step were made during the last gate: ${event.taken} taken, ${event.wasted} wasted`;
    case 'log':
      return `  ${event.level === 'warn' ? 'warning: ' : ''}${event.message}`;
    case 'run_finished':
      return [
        '='.repeat(60),
        `  done in ${event.seconds.toFixed(1)}s: best skill from step ${event.best_step} (selection ${f4(event.best_score)})`,
        `  test: initial=${f4(event.baseline_test)}  best=${f4(event.best_test)}  final=${f4(event.final_test)}`,
        '='.repeat(60),
      ].join('\n');
    case 'run_stopped': {
      const how = event.reason === 'budget' ? 'To continue with twice the limit' : 'To resume';
      return `  [stopped: ${event.reason}] ${event.message}${event.resume_command ? `\n  ${how}: ${event.resume_command}` : ''}`;
    }
    case 'run_failed':
      return `  [failed] ${event.message}${event.resume_command ? `\n  The run is saved up to its last complete step. To resume: ${event.resume_command}` : ''}`;
    case 'model_retry': {
      const what = `${event.failures} failed attempt${event.failures === 1 ? '' : 's'}${event.total > event.failures ? ` (${event.total} so far)` : ''}`;
      const line = `  [model.${event.role} ${event.model}] ${what}, ${event.retrying ? 'retrying' : 'giving up on that call'}; last: ${event.last_error}`;
      return event.hint ? `${line}\n  ${event.hint}` : line;
    }
    case 'model_wait':
      return `  [model.${event.role} ${event.model}] waiting ${event.seconds} s, until ${event.until.slice(11, 19)} UTC: ${event.reason}`;
    case 'stage_progress':
      return undefined;
  }
}

/** Prints a run's events as they are emitted; returns a function that detaches it. */
export function attachConsoleReporter(
  log: EventLog,
  out: ConsoleOutput = process.stdout,
  err: ConsoleOutput = process.stderr,
  options: ReportOptions = {},
): () => void {
  const tty = Boolean(out.isTTY);
  let bar: cliProgress.SingleBar | undefined;
  let barKey = '';
  const stopBar = () => {
    bar?.stop();
    bar = undefined;
    barKey = '';
  };
  const detach = log.on((event) => {
    if (event.type === 'stage_progress') {
      if (!tty || event.total < 8) return;
      const key = `${event.step}:${event.stage}:${event.label ?? ''}`;
      if (key !== barKey) {
        stopBar();
        // Loaded with the first bar: a run not on a terminal has none.
        const progress = createRequire(import.meta.url)('cli-progress') as typeof cliProgress;
        bar = new progress.SingleBar(
          {
            format: `      ${event.label ?? event.stage} [{bar}] {value}/{total}`,
            stream: out as NodeJS.WritableStream,
            clearOnComplete: true,
            hideCursor: false,
          },
          progress.Presets.shades_classic,
        );
        bar.start(event.total, event.done);
        barKey = key;
      } else {
        bar?.update(event.done);
      }
      if (event.done >= event.total) stopBar();
      return;
    }
    const line = formatEvent(event, options);
    if (line === undefined) return;
    stopBar();
    (event.type === 'model_retry' || event.type === 'model_wait' || (event.type === 'log' && event.level === 'warn')
      ? err
      : out
    ).write(`${line}\n`);
  });
  return () => {
    stopBar();
    detach();
  };
}
