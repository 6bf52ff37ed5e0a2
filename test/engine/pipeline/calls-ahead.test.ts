/**
 * Optimizer calls made ahead on a guess: a step's identical call takes the answer instead of
 * paying again, work on a guess joins a call in flight, and a cancelled guess makes no more calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallsAhead, GuessCancelled } from '../../../src/engine/pipeline/calls-ahead.ts';
import type { ChatModel, ChatRequest, ChatResponse } from '../../../src/model/types.ts';

/** A model that answers each call with its own number, when the test lets it. */
function countingModel() {
  const sent: string[] = [];
  const pending: (() => void)[] = [];
  const model: ChatModel = {
    id: 'test:model',
    complete(req: ChatRequest): Promise<ChatResponse> {
      sent.push(req.messages[0]!.content as string);
      const n = sent.length;
      return new Promise((resolve, reject) => {
        pending.push(() =>
          req.system === 'fail'
            ? reject(new Error('provider down'))
            : resolve({ text: `answer ${n}`, usage: { input: 1, output: 1, cached: 0, reasoning: 0 }, latencyMs: 1 }),
        );
      });
    },
  };
  return {
    model,
    sent,
    answerAll: () => {
      for (const f of pending.splice(0)) f();
    },
  };
}

const ask = (content: string, system = ''): ChatRequest => ({
  purpose: 'analyst',
  system,
  messages: [{ role: 'user', content }],
});

describe('calls made ahead', () => {
  it("a step's call identical to one made ahead takes its answer, once; other calls go to the model", async () => {
    const m = countingModel();
    const calls = new CallsAhead(m.model);
    calls.begin();
    const ahead = calls.ahead.complete(ask('a'));
    const step = calls.model.complete(ask('a'));
    const other = calls.model.complete(ask('b'));
    const again = calls.model.complete(ask('a'));
    m.answerAll();
    assert.equal((await ahead).text, 'answer 1');
    assert.equal((await step).text, 'answer 1', 'the step took the answer made ahead');
    assert.equal((await other).text, 'answer 2');
    assert.equal((await again).text, 'answer 3', 'a second identical call is a call of its own');
    assert.deepEqual(m.sent, ['a', 'b', 'a']);
    assert.deepEqual(calls.finish(), { made: 1, taken: 1 });
  });

  it("work on a guess joins the step's identical call in flight instead of making its own", async () => {
    const m = countingModel();
    const calls = new CallsAhead(m.model);
    calls.begin();
    const step = calls.model.complete(ask('a'));
    const ahead = calls.ahead.complete(ask('a'));
    m.answerAll();
    assert.equal((await ahead).text, (await step).text);
    assert.deepEqual(m.sent, ['a']);
    assert.deepEqual(calls.finish(), { made: 0, taken: 0 });
  });

  it('a cancelled guess makes no more calls, and what it made and nobody took is counted when the round closes', async () => {
    const m = countingModel();
    const calls = new CallsAhead(m.model);
    calls.begin();
    const made = calls.ahead.complete(ask('a'));
    calls.cancel();
    await assert.rejects(calls.ahead.complete(ask('b')), GuessCancelled);
    m.answerAll();
    await made;
    assert.deepEqual(calls.finish(), { made: 1, taken: 0 });
    // The round is closed: its answers are dropped, and no work on a guess is taken any more.
    const step = calls.model.complete(ask('a'));
    m.answerAll();
    assert.equal((await step).text, 'answer 2');
    await assert.rejects(calls.ahead.complete(ask('a')), GuessCancelled);
  });

  it('a call made ahead that failed is not handed on: the step makes its own', async () => {
    const m = countingModel();
    const calls = new CallsAhead(m.model);
    calls.begin();
    const failed = calls.ahead.complete(ask('a', 'fail'));
    m.answerAll();
    await assert.rejects(failed, /provider down/);
    const step = calls.model.complete(ask('a', 'fail'));
    assert.equal(m.sent.length, 2, 'the step called the model again');
    m.answerAll();
    await assert.rejects(step, /provider down/);
  });
});
