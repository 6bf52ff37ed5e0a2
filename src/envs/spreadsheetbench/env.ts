/**
 * SpreadsheetBench (reference B.8): the target writes a Python script that changes a workbook as
 * an instruction asks; the script is run on every test case of the item and each output is
 * compared with its golden workbook over the answer position (the official comparison). Hard =
 * every case passes, soft = the share that pass.
 *
 * Modes (`env.mode`): `single`, one reply whose ```python block is the script (the official
 * single-round setting); `multi`, the script is run on case 1 after each reply and an error is
 * fed back for another turn, and, in training rollouts only, so are the answer cells that are
 * wrong (with the target's own values, never the golden ones); `react`, a tool loop
 * (`write_file`, `python`) that leaves `solution.py`. An agent target (one that runs its own
 * tools) works in `single` mode: its workspace gets `input.xlsx` and `run_solution.py`, and it
 * writes `solution.py`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { UserError } from '../../errors.ts';
import type { ChatResponse, Message, Usage } from '../../model/types.ts';
import type { EnvConfig } from '../../config/schema.ts';
import { DataError } from '../data/errors.ts';
import { LeftOut } from '../data/left-out.ts';
import type { RawRecord } from '../data/read.ts';
import { loadSplits, type LoadedSplits } from '../data/splits.ts';
import { envOptions } from '../options.ts';
import { envPrompt } from '../prompts.ts';
import { findPython } from '../python.ts';
import { benchmarkSystem } from '../qa-env.ts';
import { addUsage } from '../qa.ts';
import { registerEnv } from '../registry.ts';
import { render } from '../template.ts';
import type { ConversationEntry, Env, EnvContext, Item, RolloutContext, Trajectory } from '../types.ts';
import { answerPosition, findCases, TASK_TYPES, taskType, unreadableParts } from './cases.ts';
import { REACT_TOOLS, ReactTools } from './react.ts';
import { extractCode, wrongCellsFeedback } from './report.ts';
import { RUNNER, runScript, SOLUTION, type RunLimits } from './sandbox.ts';
import { type Attempt, type SheetItem, scoreAttempt } from './scoring.ts';
import { compareOutputs, previewWorkbook } from './workbooks.ts';

export const SpreadsheetBenchOptions = z.object({
  /** The extracted release (holding `spreadsheet/<id>/`): relative `spreadsheet_path`s are taken from here. */
  data_root: z.string().default('data/spreadsheetbench_verified_400'),
  /** single: one script; multi: run and fed back for more turns; react: a tool loop. */
  mode: z.enum(['single', 'multi', 'react']).default('single'),
  /** Model calls at most per item (multi and react). */
  max_turns: z.number().int().min(1).default(30),
  /** Output token cap of each target call; unset = the role's `max_output_tokens`, else the backend's. */
  max_completion_tokens: z.number().int().positive().optional(),
  /** The Python interpreter that runs the scripts ('' = the first python3 that has openpyxl and pandas). */
  python: z.string().default(''),
  /** Seconds one run of a script may take. */
  code_timeout: z.number().positive().default(120),
  /** Bytes a script may print before it is stopped. */
  max_output_bytes: z.number().int().positive().default(1_000_000),
  /** Largest file, in bytes, a script may write. */
  max_file_bytes: z.number().int().positive().default(200_000_000),
  /** multi mode: tell the target in training rollouts which answer cells are wrong (the original does). */
  train_feedback: z.boolean().default(true),
});
type Options = z.infer<typeof SpreadsheetBenchOptions>;

const PYTHON_NEED = {
  who: 'SpreadsheetBench',
  modules: ['openpyxl', 'pandas'],
  install:
    'Install them (Debian and Ubuntu: apt-get install python3-openpyxl python3-pandas; elsewhere: pip install openpyxl pandas)',
  optionKey: 'env.python',
};

const ZERO: Usage = { input: 0, output: 0, cached: 0, reasoning: 0 };

export class SpreadsheetBenchEnv implements Env {
  readonly name = 'spreadsheetbench';
  private pythonPath?: string;

  constructor(
    private readonly config: EnvConfig,
    private readonly o: Options,
    private readonly ctx: EnvContext,
  ) {}

  get analystGuide(): string {
    return envPrompt(this.name, 'analyst');
  }

  taskTypes(): string[] {
    return [...TASK_TYPES];
  }

  /** The interpreter, checked once (before any model call: `load` asks for it first). */
  python(): string {
    this.pythonPath ??= findPython(this.o.python, PYTHON_NEED);
    return this.pythonPath;
  }

  private dataRoot(): string {
    return this.ctx.resolvePath('data_root', this.o.data_root);
  }

  toItem(rec: RawRecord): SheetItem | LeftOut {
    const f = rec.fields;
    if (f.id === undefined || f.id === null || String(f.id).trim() === '')
      throw new DataError("missing field 'id'", rec.where, 'id');
    const id = String(f.id);
    if (typeof f.instruction !== 'string' || !f.instruction.trim())
      throw new DataError("missing field 'instruction'", rec.where, 'instruction');
    if (typeof f.answer_position !== 'string' || !f.answer_position.trim())
      throw new DataError(
        "missing field 'answer_position' (the cells the answer goes in, such as 'Sheet1'!D2:D20)",
        rec.where,
        'answer_position',
      );
    const sheetPath =
      typeof f.spreadsheet_path === 'string' && f.spreadsheet_path.trim()
        ? f.spreadsheet_path.trim()
        : `spreadsheet/${id}`;
    const dir = path.isAbsolute(sheetPath) ? sheetPath : path.join(this.dataRoot(), sheetPath);
    if (!fs.existsSync(dir)) return new LeftOut(id, `spreadsheet folder not found: ${dir}`);
    const cases = findCases(dir);
    if (cases.length === 0) return new LeftOut(id, `no test cases (input and golden workbooks) in ${dir}`);
    const instructionType = typeof f.instruction_type === 'string' ? f.instruction_type : '';
    return {
      id,
      type: taskType(instructionType),
      instruction: f.instruction,
      instruction_type: instructionType,
      answer_position: answerPosition(f.answer_position, typeof f.answer_sheet === 'string' ? f.answer_sheet : ''),
      cases,
    };
  }

  async load(): Promise<LoadedSplits> {
    this.python();
    const splits = await loadSplits(
      {
        env: this.name,
        config: this.config,
        resolve: this.ctx.resolvePath,
        missing: this.ctx.missingPath,
        outRoot: this.ctx.outRoot,
      },
      {
        toItem: (rec) => this.toItem(rec),
        stored: (_item, rec) => rec.fields,
        leftOutHint: () =>
          `The workbooks are looked for under env.data_root (${this.dataRoot()}): set it to the extracted SpreadsheetBench release (the folder holding spreadsheet/<id>/)`,
      },
    );
    const unreadable = [...splits.train, ...splits.val, ...splits.test].filter(
      (i) => unreadableParts(String(i.answer_position)).length > 0,
    );
    if (unreadable.length) {
      const shown = unreadable
        .slice(0, 5)
        .map((i) => `${i.id} (${unreadableParts(String(i.answer_position)).join(', ')})`);
      splits.warnings.push(
        `env 'spreadsheetbench': ${unreadable.length} item${unreadable.length > 1 ? 's have' : ' has'} an answer_position that names no cell range: ${shown.join(', ')}${unreadable.length > 5 ? ', …' : ''}; they always fail, as in the official evaluation`,
      );
    }
    return splits;
  }

  private limits(): RunLimits {
    return {
      timeoutMs: this.o.code_timeout * 1000,
      maxOutputBytes: this.o.max_output_bytes,
      maxFileBytes: this.o.max_file_bytes,
    };
  }

  private taskPrompt(item: SheetItem, preview: string, what: 'do_code' | 'do_agent' | 'do_react'): string {
    const details = [
      item.instruction_type ? `Instruction type: ${item.instruction_type}` : '',
      `Answer position (the cells that are checked): ${item.answer_position}`,
    ]
      .filter(Boolean)
      .join('\n');
    return render(envPrompt(this.name, 'task'), {
      instruction: item.instruction.trim(),
      details,
      preview: preview.trim(),
      what_to_do: envPrompt(this.name, what),
    });
  }

  /** `multi` and `react` take up to `max_turns` turns; `single` and an agent target one. */
  maxTargetCalls(agentTarget: boolean): number {
    return agentTarget || this.o.mode === 'single' ? 1 : this.o.max_turns;
  }

  async rollout(raw: Item, skill: string, ctx: RolloutContext): Promise<Trajectory> {
    const item = raw as SheetItem;
    if (ctx.target.agentic && this.o.mode !== 'single') {
      throw new UserError(
        `env.mode is '${this.o.mode}', but the target ${ctx.target.id} is an agent that runs its own tools: SpreadsheetBench runs agent targets in mode 'single' only (set env.mode: single)`,
      );
    }
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'skillopt-sheet-'));
    try {
      const preview = await previewWorkbook(this.python(), item.cases[0]!.input);
      const attempt = ctx.target.agentic
        ? await this.agentAttempt(item, skill, preview, ctx)
        : this.o.mode === 'react'
          ? await this.reactAttempt(item, skill, preview, scratch, ctx)
          : await this.codeAttempt(item, skill, preview, scratch, ctx);
      return await this.score(item, attempt, scratch, ctx);
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  }

  private ask(
    system: string,
    messages: Message[],
    skill: string,
    ctx: RolloutContext,
    extra: { tools?: typeof REACT_TOOLS } = {},
  ): Promise<ChatResponse> {
    return ctx.target.complete({
      purpose: 'rollout',
      system,
      messages: [...messages],
      skill,
      ...extra,
      maxOutputTokens: this.o.max_completion_tokens,
      sample: ctx.sample,
      signal: ctx.signal,
    });
  }

  /** single and multi: code from the reply; in multi, run on case 1 and fed back until it holds. */
  private async codeAttempt(
    item: SheetItem,
    skill: string,
    preview: string,
    scratch: string,
    ctx: RolloutContext,
  ): Promise<Attempt> {
    const system = benchmarkSystem(this.name, skill);
    const user = this.taskPrompt(item, preview, 'do_code');
    const messages: Message[] = [{ role: 'user', content: user }];
    const conversation: ConversationEntry[] = [{ role: 'user', content: user }];
    const attempt: Attempt = { system, user, code: '', conversation, usage: ZERO, turns: 0, notes: [] };
    const deadline = Date.now() + this.config.exec_timeout * 1000;
    const maxTurns = this.o.mode === 'multi' ? this.o.max_turns : 1;
    const feedGold = this.o.mode === 'multi' && ctx.training === true && this.o.train_feedback;
    const caseOne = item.cases[0]!;
    for (let turn = 1; turn <= maxTurns; turn++) {
      if (turn > 1 && Date.now() > deadline) {
        attempt.notes.push(
          `the item's time budget (env.exec_timeout, ${this.config.exec_timeout} s) ran out after ${turn - 1} turns`,
        );
        break;
      }
      const res = await this.ask(system, messages, skill, ctx);
      attempt.usage = addUsage(attempt.usage, res.usage);
      attempt.turns = turn;
      messages.push({ role: 'assistant', content: res.text });
      conversation.push({ role: 'assistant', content: res.text });
      attempt.code = extractCode(res.text);
      if (this.o.mode !== 'multi') break;
      let feedback: string;
      if (!attempt.code) feedback = envPrompt(this.name, 'feedback_no_code');
      else {
        const run = await runScript(this.python(), attempt.code, caseOne.input, scratch, this.limits(), ctx.signal);
        attempt.caseOne = { code: attempt.code, run };
        if (!run.ok) feedback = render(envPrompt(this.name, 'feedback_error'), { log: run.log.slice(-3000) });
        else if (!feedGold) break;
        else {
          const [check] = await compareOutputs(this.python(), item.answer_position, [
            { no: caseOne.no, pred: run.output, gold: caseOne.gold },
          ]);
          attempt.caseOne.check = check;
          if (check!.ok) break;
          feedback = wrongCellsFeedback(check!);
        }
      }
      if (turn === maxTurns) break;
      messages.push({ role: 'user', content: feedback });
      conversation.push({ role: 'user', content: feedback });
    }
    if (!attempt.code) attempt.noCode = 'empty-code-block';
    return attempt;
  }

  /** react: the tool loop; the code scored is the `solution.py` it leaves. */
  private async reactAttempt(
    item: SheetItem,
    skill: string,
    preview: string,
    scratch: string,
    ctx: RolloutContext,
  ): Promise<Attempt> {
    const system = render(envPrompt(this.name, 'react'), {
      skill_section: skill.trim() ? `## Skill\n\n${skill.trim()}` : '',
    })
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    const user = this.taskPrompt(item, preview, 'do_react');
    const work = fs.mkdtempSync(path.join(scratch, 'work-'));
    fs.copyFileSync(item.cases[0]!.input, path.join(work, 'input.xlsx'));
    const tools = new ReactTools(work, this.python(), this.limits(), ctx.signal);
    const messages: Message[] = [{ role: 'user', content: user }];
    const conversation: ConversationEntry[] = [{ role: 'user', content: user }];
    const attempt: Attempt = { system, user, code: '', conversation, usage: ZERO, turns: 0, notes: [] };
    const deadline = Date.now() + this.config.exec_timeout * 1000;
    let finished = false;
    for (let turn = 1; turn <= this.o.max_turns; turn++) {
      if (turn > 1 && Date.now() > deadline) {
        attempt.notes.push(
          `the item's time budget (env.exec_timeout, ${this.config.exec_timeout} s) ran out after ${turn - 1} turns`,
        );
        break;
      }
      const res = await this.ask(system, messages, skill, ctx, { tools: REACT_TOOLS });
      attempt.usage = addUsage(attempt.usage, res.usage);
      attempt.turns = turn;
      const calls = res.toolCalls ?? [];
      messages.push({ role: 'assistant', content: res.text, ...(calls.length ? { toolCalls: calls } : {}) });
      if (res.text.trim()) conversation.push({ role: 'assistant', content: res.text });
      if (calls.length === 0) {
        finished = true;
        break;
      }
      for (const call of calls) {
        const { cmd, output } = await tools.run(call);
        messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: output });
        conversation.push({ type: 'tool_call', cmd, obs: output });
      }
    }
    if (!finished)
      attempt.notes.push(
        `the tool loop was still going after ${attempt.turns} turns (env.max_turns ${this.o.max_turns})`,
      );
    const solution = tools.solution();
    if (solution?.trim()) attempt.code = solution;
    else attempt.noCode = 'no-solution-py';
    return attempt;
  }

  /** An agent target: one run in its own workspace, where it writes solution.py. */
  private async agentAttempt(item: SheetItem, skill: string, preview: string, ctx: RolloutContext): Promise<Attempt> {
    const system = benchmarkSystem(this.name, skill);
    const user = this.taskPrompt(item, preview, 'do_agent');
    const res = await ctx.target.complete({
      purpose: 'rollout',
      system,
      messages: [{ role: 'user', content: user }],
      skill,
      workspaceFiles: [
        { path: 'input.xlsx', source: item.cases[0]!.input },
        { path: 'run_solution.py', source: RUNNER },
      ],
      returnFiles: [SOLUTION],
      maxOutputTokens: this.o.max_completion_tokens,
      sample: ctx.sample,
      signal: ctx.signal,
    });
    // The script it left in the workspace; an agent that only answered with a code block is taken at its word.
    const written = res.trace?.returned?.[SOLUTION];
    const code = written ?? (res.text.includes('```') ? extractCode(res.text) : '');
    return {
      system,
      user,
      code,
      ...(code.trim() ? {} : { noCode: written === undefined ? 'no-solution-py' : 'empty-code-block' }),
      conversation: [
        { role: 'user', content: user },
        { role: 'assistant', content: res.text },
      ],
      usage: res.usage,
      turns: 1,
      notes: [],
      ...(res.trace ? { traces: [res.trace] } : {}),
    };
  }

  /** Runs the code on every case, compares each output with its golden workbook, and builds the trajectory. */
  private score(item: SheetItem, attempt: Attempt, scratch: string, ctx: RolloutContext): Promise<Trajectory> {
    return scoreAttempt(item, attempt, scratch, { python: this.python(), limits: this.limits(), signal: ctx.signal });
  }
}

registerEnv({
  name: 'spreadsheetbench',
  optionsSchema: SpreadsheetBenchOptions,
  create: (config, ctx) => new SpreadsheetBenchEnv(config, envOptions(SpreadsheetBenchOptions, config), ctx),
});
