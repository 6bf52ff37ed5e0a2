/**
 * OfficeQA's local document tools, given to the target as function calls: `glob` (find files by
 * name), `read` (a window of lines) and `grep` (lines containing a text). Every path is resolved
 * (symbolic links and `..` included) and must be one of the item's own source files; anything
 * else is refused with a message the model can read, and never opened.
 */
import fs from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import type { ToolCall, ToolSpec } from '../../model/types.ts';

export const READ_MAX_CHARS = 4000;
export const READ_DEFAULT_LINES = 80;
export const GLOB_MAX = 50;
export const GREP_MAX = 20;

export const TOOL_SPECS: ToolSpec[] = [
  {
    name: 'glob',
    description:
      "Find this task's document files whose name or path matches a shell-style pattern (* and ?). Returns up to 50 paths.",
    parameters: {
      type: 'object',
      properties: { pattern: { type: 'string', description: 'for example *1944_01*.txt' } },
      required: ['pattern'],
      additionalProperties: false,
    },
  },
  {
    name: 'read',
    description: 'Read lines of a document file, numbered: `limit` lines from line `start` (at most 4000 characters).',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'a path from the candidate file list or from glob' },
        start: { type: 'integer', minimum: 1, description: 'first line, from 1 (default 1)' },
        limit: { type: 'integer', minimum: 1, maximum: 400, description: 'number of lines (default 80)' },
      },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'grep',
    description:
      'Find the lines of a document file that contain a text (case-insensitive, literal). Returns up to 20 `line number: line` matches.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'the text to look for' },
        path: { type: 'string', description: 'a document file' },
      },
      required: ['pattern', 'path'],
      additionalProperties: false,
    },
  },
];

/** A file the item may open: its real path and the path the model sees (relative to its docs root). */
export interface DocFile {
  real: string;
  shown: string;
}

export class DocTools {
  private readonly byReal = new Map<string, DocFile>();

  constructor(
    /** Real paths of the docs roots, in lookup order. */
    private readonly roots: readonly string[],
    readonly files: readonly DocFile[],
  ) {
    for (const f of files) this.byReal.set(f.real, f);
  }

  /** The allowed file a path names, or a refusal. */
  resolve(p: string): DocFile | { refused: string } {
    const given = String(p ?? '').trim();
    if (!given) return { refused: 'no path given' };
    const candidates = path.isAbsolute(given) ? [given] : this.roots.map((r) => path.resolve(r, given));
    let exists = false;
    for (const c of candidates) {
      let real: string;
      try {
        real = fs.realpathSync(c);
      } catch {
        continue;
      }
      exists = true;
      const file = this.byReal.get(real);
      if (file) return file;
    }
    if (exists) return { refused: `access denied: ${given} is not one of this task's document files` };
    return { refused: `not found: ${given} (use glob, or a path from the candidate file list)` };
  }

  glob(pattern: string): string {
    const isMatch = picomatch(String(pattern ?? ''), { dot: true, nocase: true });
    const hits = this.files.filter((f) => isMatch(f.shown) || isMatch(path.basename(f.shown))).map((f) => f.shown);
    if (hits.length === 0) return `no file matches ${pattern}`;
    return hits.slice(0, GLOB_MAX).join('\n') + (hits.length > GLOB_MAX ? `\n… ${hits.length - GLOB_MAX} more` : '');
  }

  read(p: string, start = 1, limit = READ_DEFAULT_LINES): string {
    const file = this.resolve(p);
    if ('refused' in file) return `error: ${file.refused}`;
    const lines = fs.readFileSync(file.real, 'utf8').split('\n');
    const from = Math.max(1, Math.floor(Number(start) || 1));
    const count = Math.min(400, Math.max(1, Math.floor(Number(limit) || READ_DEFAULT_LINES)));
    if (from > lines.length) return `${file.shown} has ${lines.length} lines; nothing at line ${from}`;
    let out = '';
    let last = from - 1;
    for (let i = from - 1; i < Math.min(lines.length, from - 1 + count); i++) {
      const line = `${i + 1}: ${lines[i]}\n`;
      if (out.length + line.length > READ_MAX_CHARS) break;
      out += line;
      last = i + 1;
    }
    const more =
      last < lines.length
        ? `[lines ${from}-${last} of ${lines.length}; read on from line ${last + 1}]`
        : `[lines ${from}-${last} of ${lines.length}]`;
    return `${out}${more}`;
  }

  grep(pattern: string, p: string): string {
    const file = this.resolve(p);
    if ('refused' in file) return `error: ${file.refused}`;
    const needle = String(pattern ?? '').toLowerCase();
    if (!needle) return 'error: empty pattern';
    const hits: string[] = [];
    let total = 0;
    fs.readFileSync(file.real, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (!line.toLowerCase().includes(needle)) return;
        total++;
        if (hits.length < GREP_MAX) hits.push(`${i + 1}: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`);
      });
    if (total === 0) return `no line of ${file.shown} contains "${pattern}"`;
    return hits.join('\n') + (total > GREP_MAX ? `\n… ${total - GREP_MAX} more matches` : '');
  }

  /** Runs one call; unknown tools and bad arguments come back as messages, not exceptions. */
  run(call: ToolCall): { cmd: string; output: string } {
    const args = (call.input && typeof call.input === 'object' ? call.input : {}) as Record<string, unknown>;
    const cmd = `${call.name}(${Object.entries(args)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(', ')})`;
    switch (call.name) {
      case 'glob':
        return { cmd, output: this.glob(String(args.pattern ?? '')) };
      case 'read':
        return {
          cmd,
          output: this.read(
            String(args.path ?? ''),
            args.start as number | undefined,
            args.limit as number | undefined,
          ),
        };
      case 'grep':
        return { cmd, output: this.grep(String(args.pattern ?? ''), String(args.path ?? '')) };
      default:
        return { cmd, output: `error: unknown tool '${call.name}'; the tools are glob, read and grep` };
    }
  }
}
