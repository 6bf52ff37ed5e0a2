/**
 * The console reporter: turns run events into readable lines (the original's log format,
 * scores with four decimals, timings per stage). On a terminal, long stages show a progress
 * bar; elsewhere only plain lines are printed.
 */
import cliProgress from 'cli-progress';
import type { EventLog, RunEvent } from './events.ts';

export const STAGE_LABELS: Record<string, string> = {
  rollout: '1/6 ROLLOUT',
  reflect: '2/6 REFLECT',
  aggregate: '3/6 AGGREGATE',
  select: '4/6 SELECT',
  update: '5/6 UPDATE',
  evaluate: '6/6 EVALUATE',
};

export const f4 = (x: number | null | undefined) => (x == null ? 'n/a' : x.toFixed(4));

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

export function formatEvent(event: RunEvent): string | undefined {
  switch (event.type) {
    case 'run_started':
      return [
        '='.repeat(60),
        `  skillopt train  env=${event.env}  target=${event.target}  optimizer=${event.optimizer}`,
        `  epochs=${event.epochs}  steps/epoch=${event.steps_per_epoch}  total_steps=${event.total_steps}` +
          (event.resume_from > 1 ? `  resuming at step ${event.resume_from}` : ''),
        `  out_root=${event.out_root}`,
        '='.repeat(60),
      ].join('\n');
    case 'stage_started': {
      const label = STAGE_LABELS[event.stage];
      if (!label) return `  [${event.stage.toUpperCase().replace(/_/g, ' ')}]${event.detail ? ` ${event.detail}` : ''}`;
      return `    [${label}]${event.detail ? ` ${event.detail}` : ''}`;
    }
    case 'stage_finished': {
      const label = STAGE_LABELS[event.stage];
      const head = label ? `    [${label.split(' ')[0]} done]` : `  [${event.stage.replace(/_/g, ' ')} done]`;
      return `${head}${event.detail ? ` ${event.detail}` : ''}  (${event.seconds.toFixed(1)}s)`;
    }
    case 'gate_decision': {
      const verdict: Record<string, string> = {
        accept_new_best: 'ACCEPT (new best)',
        accept: 'ACCEPT',
        reject: 'REJECT',
        force_accept: 'FORCE-ACCEPT (gate disabled)',
      };
      const cmp = event.action === 'reject' ? '<=' : '>';
      const against = event.action === 'accept_new_best' ? `prev best ${f4(event.best_score)}` : `current=${f4(event.current_score)}`;
      const saved = `selection rollouts used=${event.rollouts_used} saved=${event.rollouts_saved}${event.early_stopped ? ', stopped early: at most this score' : ''}`;
      if (event.action === 'force_accept') return `    [6/6 EVALUATE] ${verdict[event.action]} ${event.metric}=${f4(event.candidate_score)}  (${saved})`;
      return `    [6/6 EVALUATE] ${verdict[event.action] ?? event.action} ${event.metric}=${f4(event.candidate_score)} ${cmp} ${against}  (${saved})`;
    }
    case 'step_finished': {
      const timing = event.timing
        ? `\n    timing: ${Object.entries(event.timing)
            .map(([k, v]) => `${k.replace(/_s$/, '')}=${v.toFixed(1)}s`)
            .join(' ')}`
        : '';
      return `  [STEP ${event.step} done] epoch=${event.epoch} action=${event.action} current=${f4(event.current_score)} best=${f4(event.best_score)} dt=${event.seconds.toFixed(1)}s${timing}`;
    }
    case 'epoch_boundary':
      return `  [${event.kind === 'slow_update' ? 'slow update' : 'meta skill'} epoch ${event.epoch}] ${event.action}${event.detail ? `  ${event.detail}` : ''}`;
    case 'log':
      return `  ${event.level === 'warn' ? 'warning: ' : ''}${event.message}`;
    case 'run_finished':
      return [
        '='.repeat(60),
        `  done in ${event.seconds.toFixed(1)}s: best skill from step ${event.best_step} (selection ${f4(event.best_score)})`,
        `  test: initial=${f4(event.baseline_test)}  best=${f4(event.best_test)}  final=${f4(event.final_test)}`,
        '='.repeat(60),
      ].join('\n');
    case 'run_stopped':
      return `  [stopped: ${event.reason}] ${event.message}`;
    case 'run_failed':
      return `  [failed] ${event.message}`;
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
export function attachConsoleReporter(log: EventLog, out: Output = process.stdout, err: Output = process.stderr): () => void {
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
      const key = `${event.step}:${event.stage}`;
      if (key !== barKey) {
        stopBar();
        bar = new cliProgress.SingleBar(
          { format: `      ${event.stage} [{bar}] {value}/{total}`, stream: out as NodeJS.WritableStream, clearOnComplete: true, hideCursor: false },
          cliProgress.Presets.shades_classic,
        );
        bar.start(event.total, event.done);
        barKey = key;
      } else {
        bar?.update(event.done);
      }
      if (event.done >= event.total) stopBar();
      return;
    }
    const line = formatEvent(event);
    if (line === undefined) return;
    stopBar();
    (event.type === 'model_retry' || event.type === 'model_wait' || (event.type === 'log' && event.level === 'warn') ? err : out).write(`${line}\n`);
  });
  return () => {
    stopBar();
    detach();
  };
}
