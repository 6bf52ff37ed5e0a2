import assert from 'node:assert/strict';
import { it } from 'node:test';
import { Admission } from '../../src/model/admission.ts';
import { CallPool } from '../../src/model/call-pool.ts';
import { RunStop } from '../../src/model/types.ts';

it('admits calls while the limit allows, counting those in flight; once stopped, refuses every call with the same stop', async () => {
  let made = 0;
  const cap = 3;
  const admission = new Admission((inFlight) =>
    made + inFlight >= cap ? new RunStop(`budget reached: ${made} calls`, 'budget') : undefined,
  );
  admission.enter();
  admission.enter();
  admission.enter();
  assert.throws(
    () => admission.enter(),
    (e) => e instanceof RunStop && e.reason === 'budget',
  );
  const stop = admission.stopped;
  assert.ok(stop && admission.signal.aborted, 'the stop ends the waits between retries');
  // Even once the calls in flight are done, nothing more is admitted.
  made = 3;
  let idle = false;
  const settled = admission.idle().then(() => (idle = true));
  admission.leave();
  admission.leave();
  assert.equal(idle, false);
  admission.leave();
  await settled;
  assert.throws(
    () => admission.enter(),
    (e) => e === stop,
  );
  // A later stop of another kind does not replace the first.
  assert.equal(admission.halt(new RunStop('wait', 'wait')), stop);
});

it("the user's stop gives the calls in flight a grace, then abandons them, even after a stop of another kind", async () => {
  const abandoned: number[] = [];
  const admission = new Admission(undefined, { graceMs: 50, onAbandon: (calls) => abandoned.push(calls) });
  admission.enter();
  admission.enter();
  const budget = admission.halt(new RunStop('budget reached', 'budget'));
  assert.equal(admission.abandoned.aborted, false, 'a budget stop lets the calls in flight finish');
  admission.halt(new RunStop('the run is stopping', 'interrupted'));
  assert.equal(admission.stopped, budget, 'the first stop is the one reported');
  admission.leave();
  // (The grace's timer does not hold the process open: the calls in flight do.)
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(admission.abandoned.aborted, true);
  assert.deepEqual(abandoned, [1], 'the call still in flight at the end of the grace');
  admission.leave();
  await admission.idle();
});

it('hundreds of calls waiting for a slot on the stop signal draw no listener-leak warning', async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const admission = new Admission();
    const pool = new CallPool('t', { concurrency: 1, rpm: 0, tpm: 0 });
    const waits = Array.from({ length: 200 }, () => pool.acquire(1, admission.signal).then(() => pool.release()));
    await Promise.all(waits);
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(
    warnings.filter((w) => w === 'MaxListenersExceededWarning'),
    [],
  );
});
