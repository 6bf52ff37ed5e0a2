import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import {
  EventLog,
  EventSchema,
  readEvents,
  type MetaSkillAction,
  type RunEvent,
  type SlowUpdateAction,
} from '../../src/run/events.ts';
import { attachConsoleReporter, formatEvent } from '../../src/run/reporter.ts';
import { programName, resumeCommand } from '../../src/run/resume-command.ts';
import { runCli } from '../helpers/cli.ts';
import { SIM_CONFIG as SIM } from '../helpers/train.ts';
import { tmpDir } from '../helpers/tmp.ts';

describe('event log', () => {
  it('appends typed events that read back in order, and reaches listeners', () => {
    const file = path.join(tmpDir(), 'events.jsonl');
    const log = new EventLog(file);
    const seen: string[] = [];
    log.on((e) => seen.push(e.type));
    log.emit({ type: 'stage_started', step: 1, epoch: 1, stage: 'rollout', total: 20 });
    log.emit({
      type: 'gate_decision',
      step: 1,
      epoch: 1,
      action: 'reject',
      metric: 'hard',
      candidate_score: 0.5,
      current_score: 0.5,
      best_score: 0.5,
      rollouts_used: 3,
      rollouts_saved: 27,
    });
    const events = readEvents(file);
    assert.deepEqual(
      events.map((e) => e.type),
      ['stage_started', 'gate_decision'],
    );
    assert.deepEqual(seen, ['stage_started', 'gate_decision']);
    assert.ok(!Number.isNaN(Date.parse(events[0]!.time)));
  });

  it('throttles progress events on disk but not for listeners', () => {
    const file = path.join(tmpDir(), 'events.jsonl');
    const log = new EventLog(file);
    let heard = 0;
    log.on(() => heard++);
    for (let i = 1; i <= 50; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 50 });
    assert.equal(heard, 50);
    const written = readEvents(file);
    assert.ok(written.length >= 2 && written.length < 10, `wrote ${written.length}`);
    const last = written.at(-1)!;
    assert.ok(last.type === 'stage_progress' && last.done === 50);
  });
});

describe('console reporter', () => {
  it('prints the original step lines with four-decimal scores', () => {
    const gate = formatEvent({
      type: 'gate_decision',
      time: '',
      step: 3,
      epoch: 1,
      action: 'accept_new_best',
      metric: 'hard',
      candidate_score: 0.61,
      current_score: 0.58,
      best_score: 0.58,
      rollouts_used: 30,
      rollouts_saved: 0,
    });
    assert.equal(
      gate,
      '    [6/6 EVALUATE] ACCEPT (new best) hard=0.6100 > prev best 0.5800  (selection rollouts used=30 saved=0)',
    );
    const step = formatEvent({
      type: 'step_finished',
      time: '',
      step: 3,
      epoch: 1,
      action: 'reject',
      current_score: 0.5,
      best_score: 0.5,
      seconds: 2.04,
      timing: { rollout_s: 1.2, reflect_s: 0.4 },
    });
    assert.equal(
      step,
      '  [STEP 3 done] epoch=1 rejected; current=0.5000 best=0.5000 dt=2.0s\n    timing: rollout=1.2s reflect=0.4s',
    );
    assert.equal(
      formatEvent({ type: 'stage_started', time: '', step: 1, epoch: 1, stage: 'rollout', detail: 'train items=20' }),
      '    [1/6 ROLLOUT] train items=20',
    );
  });

  it('prints plain lines and no progress bar when not on a terminal', () => {
    const log = new EventLog();
    let out = '';
    const detach = attachConsoleReporter(
      log,
      { write: (t: string) => (out += t), isTTY: false },
      { write: () => true },
    );
    for (let i = 1; i <= 20; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 20 });
    log.emit({
      type: 'stage_finished',
      step: 1,
      epoch: 1,
      stage: 'rollout',
      seconds: 1.25,
      detail: 'hard=0.4250 soft=0.5123',
    });
    detach();
    assert.equal(out, '    [1/6 done] hard=0.4250 soft=0.5123  (1.3s)\n');
  });

  it('draws a progress bar on a terminal', () => {
    const log = new EventLog();
    let out = '';
    const stream = {
      write: (t: string) => {
        out += t;
        return true;
      },
      isTTY: true,
      columns: 80,
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true,
      on: () => stream,
      removeListener: () => stream,
    };
    const detach = attachConsoleReporter(log, stream as never, { write: () => true });
    for (let i = 1; i <= 20; i++) log.emit({ type: 'stage_progress', step: 1, stage: 'rollout', done: i, total: 20 });
    detach();
    assert.match(out, /rollout \[.*\] \d+\/20/);
  });

  it('opens with a short summary of the run: models, data, schedule, budget, and where the full config is', () => {
    const started = {
      type: 'run_started' as const,
      time: '',
      out_root: '/runs/a',
      env: 'tasks',
      target: 'openai_compatible:qwen3-8b',
      optimizer: 'openai_chat:gpt-5.5',
      judge: 'anthropic:claude-sonnet-4-5',
      epochs: 1,
      steps_per_epoch: 1,
      total_steps: 1,
      resume_from: 1,
      data: { train: 40, val: 20, test: 140, selection: 20, test_used: 100 },
      batch_size: 40,
      budget: ['max_usd=5', 'max_minutes=30'],
      config_path: '/runs/a/config.json',
      resume_command: 'skillopt train --config c.yaml --resume /runs/a',
    };
    assert.equal(
      formatEvent(started),
      [
        '='.repeat(60),
        '  skillopt train  env=tasks  target openai_compatible:qwen3-8b, optimizer openai_chat:gpt-5.5, judge anthropic:claude-sonnet-4-5',
        '  data: 40 train items, selection 20 of 20 val items, test 100 of 140 items',
        '  1 epoch x 1 step = 1 step (batch 40); budget: max_usd=5, max_minutes=30',
        '  run directory: /runs/a',
        '  full config: /runs/a/config.json (--verbose prints it)',
        '='.repeat(60),
      ].join('\n'),
    );
    const resumed = formatEvent({
      ...started,
      epochs: 3,
      steps_per_epoch: 3,
      total_steps: 9,
      resume_from: 4,
      budget: [],
    })!;
    assert.match(resumed, /\n {2}3 epochs x 3 steps = 9 steps \(batch 40\); budget: no limit\n/);
    assert.match(resumed, /\n {2}resuming at step 4 of 9\n/);
    assert.match(
      formatEvent({ ...started, epochs: 3, steps_per_epoch: 3, total_steps: 9, resume_from: 10 })!,
      /resuming after the last step \(9 of 9 done\)/,
    );
  });

  it('puts a table below the line that says what it is and how long it took', () => {
    const line = formatEvent({
      type: 'stage_finished',
      time: '',
      step: 9,
      epoch: 3,
      stage: 'final_evaluation',
      seconds: 2.25,
      detail: 'hard score on 60 test items, per task type:\n  [1] initial skill\n    overall : hard=10/60=0.1667',
    });
    assert.equal(
      line,
      '  [final evaluation done] hard score on 60 test items, per task type:  (2.3s)\n  [1] initial skill\n    overall : hard=10/60=0.1667',
    );
  });

  it('says in words what each epoch-boundary action did, with its name under --verbose', () => {
    const boundary = (
      kind: 'slow_update' | 'meta_skill',
      action: SlowUpdateAction | MetaSkillAction,
      detail?: string,
    ) =>
      formatEvent(EventSchema.parse({ type: 'epoch_boundary', time: '', epoch: 1, kind, action, detail }), {
        verbose: true,
      });
    assert.equal(
      boundary('slow_update', 'inject_placeholder'),
      '  [slow update, end of epoch 1] no earlier epoch to compare with yet; an empty guidance field is added to the skill for the next epochs (inject_placeholder)',
    );
    assert.equal(
      boundary('meta_skill', 'skip_first_epoch'),
      '  [meta skill, end of epoch 1] nothing yet: the notes for the optimizer compare two epochs, from the end of epoch 2 on (skip_first_epoch)',
    );
    assert.equal(
      boundary('slow_update', 'force_accept', 'regressed=1 improved=3 selection=0.9000'),
      '  [slow update, end of epoch 1] guidance from comparing the two epochs is written into the skill (force_accept): regressed=1 improved=3 selection=0.9000',
    );
    assert.equal(
      EventSchema.safeParse({ type: 'epoch_boundary', time: '', epoch: 1, kind: 'meta_skill', action: 'something_new' })
        .success,
      false,
      'an action no boundary takes is no event',
    );
  });

  it('says what the gate overlap ran ahead, and what a wrong guess wasted', () => {
    const ahead = { time: '', type: 'gate_overlap' as const, step: 3, epoch: 1, guess: 'candidate' as const };
    assert.equal(
      formatEvent({ ...ahead, right: true, rollouts: 20, wasted: 0 }),
      '    [overlap] 20 rollouts of the next step ran ahead under the candidate; the guess was right: the next step takes them',
    );
    assert.equal(
      formatEvent({ ...ahead, guess: 'current', right: false, rollouts: 1, wasted: 1 }),
      '    [overlap] 1 rollout of the next step ran ahead under the current skill; the guess was wrong: 1 call wasted',
    );
    assert.equal(
      formatEvent({ time: '', type: 'reflect_ahead', step: 4, epoch: 1, calls: 5, taken: 4, wasted: 1 }),
      '    [overlap] 5 analyst and merge calls of this step were made during the last gate: 4 taken, 1 wasted',
    );
  });

  it('ends a stopped or failed run with the command that resumes it', () => {
    const cmd = 'skillopt train --config configs/sim/default.yaml --resume outputs/sim/20250101_120000';
    assert.equal(
      formatEvent({
        type: 'run_stopped',
        time: '',
        reason: 'interrupted',
        message: 'interrupted: the calls in flight finished and are saved',
        resume_command: cmd,
      }),
      `  [stopped: interrupted] interrupted: the calls in flight finished and are saved\n  To resume: ${cmd}`,
    );
    assert.equal(
      formatEvent({
        type: 'run_stopped',
        time: '',
        reason: 'budget',
        message: 'budget reached',
        resume_command: `${cmd} --set budget.max_calls=300`,
      }),
      `  [stopped: budget] budget reached\n  To continue with twice the limit: ${cmd} --set budget.max_calls=300`,
    );
    assert.equal(
      formatEvent({
        type: 'run_failed',
        time: '',
        message: 'every optimizer call of step 3 failed',
        resume_command: cmd,
      }),
      `  [failed] every optimizer call of step 3 failed\n  The run is saved up to its last complete step. To resume: ${cmd}`,
    );
  });
});

describe('the resume command', () => {
  it('is the same config and overrides with --resume and the run directory, quoted for a shell, secrets left out', () => {
    const inv = {
      program: 'npx skillopt',
      config: 'configs/my tasks.yaml',
      overrides: [
        'train.num_epochs=2',
        'budget.max_calls=100',
        "env.prompt.user=it's {{input}}",
        'model.target.api_key=sk-123',
      ],
    };
    assert.equal(
      resumeCommand(inv, '/home/u/proj/outputs/tasks/20250101_120000', ['budget.max_calls=200'], '/home/u/proj'),
      "npx skillopt train --config 'configs/my tasks.yaml' --resume outputs/tasks/20250101_120000 --set train.num_epochs=2 --set 'env.prompt.user=it'\\''s {{input}}' --set 'model.target.api_key=****' --set budget.max_calls=200",
    );
    assert.equal(
      resumeCommand({ config: 'c.yaml', overrides: [] }, '/elsewhere/run', [], '/home/u/proj'),
      'skillopt train --config c.yaml --resume /elsewhere/run',
    );
    assert.equal(programName({ npm_command: 'exec' }), 'npx skillopt');
    assert.equal(programName({}), 'skillopt');
  });
});

describe('the console in plain words', () => {
  const stage = (type: 'stage_started' | 'stage_finished', name: string, detail: string, stats: object) =>
    EventSchema.parse(
      type === 'stage_started'
        ? { type, time: '', step: 1, epoch: 1, stage: name, detail, stats }
        : { type, time: '', step: 1, epoch: 1, stage: name, detail, stats, seconds: 0.04 },
    );

  it("says the engine's codes in words; --verbose shows them", () => {
    const cases: [RunEvent, string, string][] = [
      [
        stage('stage_started', 'rollout', 'train items=20', { batch_seed: '1043' }),
        '    [1/6 ROLLOUT] train items=20',
        '    [1/6 ROLLOUT] train items=20 [batch_seed=1043]',
      ],
      [
        stage('stage_finished', 'baseline', 'selection hard=0.1667 soft=0.6752, gate score (hard)=0.1667', {
          gate_metric: 'hard',
          gate: 0.1667,
        }),
        '  [baseline done] selection hard=0.1667 soft=0.6752, gate score (hard)=0.1667  (0.0s)',
        '  [baseline done] selection hard=0.1667 soft=0.6752, gate score (hard)=0.1667 [gate_metric=hard gate=0.1667]  (0.0s)',
      ],
      [
        stage('stage_finished', 'select', '7 -> 4 edits (at most 4 this step)', { budget: 4, lr_control: 'fixed' }),
        '    [4/6 done] 7 -> 4 edits (at most 4 this step)  (0.0s)',
        '    [4/6 done] 7 -> 4 edits (at most 4 this step) [budget=4 lr_control=fixed]  (0.0s)',
      ],
      [
        EventSchema.parse({
          type: 'step_finished',
          time: '',
          step: 3,
          epoch: 1,
          action: 'accept_new_best',
          current_score: 0.5,
          best_score: 0.5,
          seconds: 2.04,
        }),
        '  [STEP 3 done] epoch=1 accepted, the new best; current=0.5000 best=0.5000 dt=2.0s',
        '  [STEP 3 done] epoch=1 action=accept_new_best current=0.5000 best=0.5000 dt=2.0s',
      ],
      [
        EventSchema.parse({ type: 'epoch_boundary', time: '', epoch: 1, kind: 'slow_update', action: 'no_content' }),
        '  [slow update, end of epoch 1] the skill is unchanged',
        '  [slow update, end of epoch 1] the skill is unchanged (no_content)',
      ],
    ];
    for (const [event, plain, verbose] of cases) {
      assert.equal(formatEvent(event), plain);
      assert.equal(formatEvent(event, { verbose: true }), verbose);
    }
  });

  it('train prints no code unless --verbose', () => {
    const args = ['train', '--config', SIM, '--set', 'train.num_epochs=2'];
    const plain = runCli([...args, '--out', path.join(tmpDir(), 'a')]);
    assert.equal(plain.status, 0, plain.stderr);
    assert.doesNotMatch(
      plain.stdout,
      /gate\[|batch_seed|lr_control=|step_in_epoch|inject_placeholder|no_content|skill_len|_patches=|action=/,
    );
    const verbose = runCli([...args, '--out', path.join(tmpDir(), 'b'), '--verbose']);
    assert.equal(verbose.status, 0, verbose.stderr);
    assert.match(verbose.stdout, /gate_metric=hard.*\n(.*\n)*.*batch_seed=.*\n(.*\n)*.*\(inject_placeholder\)/);
  });
});
