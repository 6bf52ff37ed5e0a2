/**
 * SpreadsheetBench's `react` mode: the target works in a folder holding a copy of the input
 * workbook, with two function tools: `write_file` (a text file in the folder) and `python` (runs a
 * script of the folder, or a few lines, through the runner that sets INPUT_PATH and OUTPUT_PATH,
 * with the same scrubbed environment and limits as every generated script). Nothing else can be
 * run, and no path may leave the folder. What it leaves in `solution.py` is the code scored.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ToolCall, ToolSpec } from '../../model/types.ts';
import { runInFolder, SOLUTION, type RunLimits } from './sandbox.ts';

export const TOOL_OUTPUT_CHARS = 4000;

export const REACT_TOOLS: ToolSpec[] = [
  {
    name: 'write_file',
    description:
      'Write a text file in the working folder (created or replaced). Use it for scripts such as solution.py.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'a path inside the working folder, such as solution.py' },
        content: { type: 'string' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
  },
  {
    name: 'python',
    description:
      'Run Python with INPUT_PATH and OUTPUT_PATH set: `script` runs a .py file of the working folder, `code` runs the lines given. Shows what it printed (at most 4000 characters).',
    parameters: {
      type: 'object',
      properties: {
        script: { type: 'string', description: 'a .py file of the working folder, such as solution.py' },
        code: { type: 'string', description: 'Python source to run instead of a file' },
      },
      additionalProperties: false,
    },
  },
];

const SNIPPET = '_snippet.py';

export class ReactTools {
  constructor(
    readonly dir: string,
    private readonly python: string,
    private readonly limits: RunLimits,
    private readonly signal?: AbortSignal,
  ) {}

  /** A path inside the folder, or a refusal. */
  private inside(rel: string): string | { refused: string } {
    const given = String(rel ?? '').trim();
    if (!given) return { refused: 'no path given' };
    const target = path.resolve(this.dir, given);
    if (path.isAbsolute(given) || !target.startsWith(this.dir + path.sep))
      return { refused: `${given} is outside the working folder; use a path such as solution.py` };
    return target;
  }

  writeFile(rel: string, content: string): string {
    const target = this.inside(rel);
    if (typeof target !== 'string') return `error: ${target.refused}`;
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, String(content ?? ''));
    return `wrote ${path.relative(this.dir, target)} (${Buffer.byteLength(String(content ?? ''))} bytes)`;
  }

  async runPython(args: { script?: unknown; code?: unknown }): Promise<string> {
    let script: string;
    if (typeof args.code === 'string' && args.code.trim()) {
      fs.writeFileSync(path.join(this.dir, SNIPPET), args.code);
      script = SNIPPET;
    } else if (typeof args.script === 'string' && args.script.trim()) {
      const target = this.inside(args.script);
      if (typeof target !== 'string') return `error: ${target.refused}`;
      if (!fs.existsSync(target)) return `error: ${args.script} does not exist (write it with write_file first)`;
      script = path.relative(this.dir, target);
    } else return 'error: give `script` (a .py file of the working folder) or `code`';
    // Only what this run writes counts as its output.
    fs.rmSync(path.join(this.dir, 'output.xlsx'), { force: true });
    const run = await runInFolder(
      this.python,
      this.dir,
      [script, 'input.xlsx', 'output.xlsx'],
      this.limits,
      this.signal,
    );
    const shown =
      run.log.length > TOOL_OUTPUT_CHARS
        ? `${run.log.slice(0, TOOL_OUTPUT_CHARS)}\n… [output cut at ${TOOL_OUTPUT_CHARS} characters]`
        : run.log;
    // A script that writes no workbook is fine while exploring; the runner's complaint about it is not an error then.
    if (run.failure === 'the script finished without writing the output workbook')
      return shown.replace(/the script finished without writing .*$/m, '').trim() || '(it printed nothing)';
    if (!run.ok) return `${shown || '(it printed nothing)'}\n[failed: ${run.failure}]`;
    const wrote = fs.existsSync(path.join(this.dir, 'output.xlsx')) ? '\n[output.xlsx is in the folder]' : '';
    return `${shown || '(it printed nothing)'}${wrote}`;
  }

  /** One tool call: its command line for the trajectory and what it returned. */
  async run(call: ToolCall): Promise<{ cmd: string; output: string }> {
    const args = (call.input && typeof call.input === 'object' ? call.input : {}) as Record<string, unknown>;
    if (call.name === 'write_file')
      return {
        cmd: `write_file(${JSON.stringify(args.path)})\n${String(args.content ?? '')}`,
        output: this.writeFile(String(args.path ?? ''), String(args.content ?? '')),
      };
    if (call.name === 'python')
      return {
        cmd: args.code !== undefined ? `python(code)\n${String(args.code)}` : `python(${JSON.stringify(args.script)})`,
        output: await this.runPython(args),
      };
    return {
      cmd: `${call.name}(…)`,
      output: `error: unknown tool '${call.name}'; the tools are write_file and python`,
    };
  }

  /** The solution the target left, if any. */
  solution(): string | undefined {
    const file = path.join(this.dir, SOLUTION);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  }
}
