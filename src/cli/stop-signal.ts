/** Ctrl-C and SIGTERM for a command that stops at a safe point: the first asks it to stop, a second exits at once. */
import { Interrupted } from '../errors.ts';

/**
 * Runs `work` with a signal that the first Ctrl-C (or SIGTERM) aborts; a second one exits at
 * once, saying `atOnce` (what is kept when the process goes without waiting).
 */
export async function withStopSignal<T>(work: (signal: AbortSignal) => Promise<T>, atOnce: string): Promise<T> {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.stderr.write(`\n${name} again: exiting now; ${atOnce}\n`);
      process.exit(Interrupted.exitCode);
    }
    process.stderr.write(
      `\n${name}: stopping: no new model call starts; the calls in flight get a few seconds (run.stop_grace_s) to finish and be saved, and any still unanswered are made again on resume. Press Ctrl-C again to exit at once.\n`,
    );
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await work(controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
