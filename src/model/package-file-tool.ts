/**
 * A chat model that reads a skill package's files through a tool, as an agent opens them: its
 * system prompt lists the files (path, size, text or binary) after the skill's text, and it may
 * call `read_skill_file` with a path; each call's answer is the file's text, or why there is
 * none. A request with tools of its own never comes here (`package-target.ts`). After
 * `MAX_READ_ROUNDS` rounds of reads the model is told to answer, and a read it asks for after
 * that is left unanswered: its reply is taken as it stands. Every round is a call of its own
 * through the target's stack (ledger, cache, limits); the reply carries the rounds' usage and cost
 * summed, and a trace whose `package.read` names the files read, as an agent's trace does.
 */
import { fill, loadPrompt } from '../prompt-files.ts';
import type { PackageFiles } from '../skill/package/package.ts';
import type { AgentTrace, ToolStep } from './harness/trace.ts';
import { addUsage, type ChatModel, type ChatRequest, type ChatResponse, type Message, type ToolSpec } from './types.ts';

export const READ_TOOL = 'read_skill_file';
/** Rounds of file reads a reply may take before it must answer. */
export const MAX_READ_ROUNDS = 8;
/** Longest text one read returns, in characters; the rest is cut with a note. */
const MAX_READ_CHARS = 200_000;

function readTool(): ToolSpec {
  return {
    name: READ_TOOL,
    description: loadPrompt('read_skill_file_tool').trim(),
    parameters: {
      type: 'object',
      properties: { path: { type: 'string', description: 'The file path, as listed (references/forms.md).' } },
      required: ['path'],
      additionalProperties: false,
    },
  };
}

/** The files as the system prompt lists them: path, size and kind, no content. */
export function fileListing(files: PackageFiles): string {
  const lines = [...files]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, f]) =>
      f.kind === 'text'
        ? `- ${path} (text, ${Buffer.byteLength(f.text).toLocaleString('en')} bytes)`
        : `- ${path} (binary, ${f.bytes.byteLength.toLocaleString('en')} bytes: cannot be read as text)`,
    );
  return fill(loadPrompt('package_files_tool'), { files: lines.join('\n') }).trim();
}

/** What one read answers: the text, or why there is none. */
export function readAnswer(files: PackageFiles, input: unknown): { ok: boolean; path: string; text: string } {
  const path = typeof (input as { path?: unknown } | null)?.path === 'string' ? (input as { path: string }).path : '';
  const file = files.get(path.replace(/^\.\//, ''));
  if (!file)
    return {
      ok: false,
      path,
      text: `error: the skill package has no file '${path}'; its files are: ${[...files.keys()].sort().join(', ')}`,
    };
  if (file.kind === 'binary')
    return {
      ok: false,
      path,
      text: `error: '${path}' is a binary file (${file.bytes.byteLength} bytes): it cannot be read as text`,
    };
  const text =
    file.text.length > MAX_READ_CHARS
      ? `${file.text.slice(0, MAX_READ_CHARS)}\n[… cut at ${MAX_READ_CHARS} characters of ${file.text.length}]`
      : file.text;
  return { ok: true, path: path.replace(/^\.\//, ''), text };
}

/** `req` answered with the package's files behind a read tool; `system` already lists them. */
export async function completeWithFileTool(
  target: ChatModel,
  req: ChatRequest,
  files: PackageFiles,
  system: string,
): Promise<ChatResponse> {
  const started = performance.now();
  const tool = readTool();
  const steps: ToolStep[] = [];
  const read: string[] = [];
  let messages: Message[] = req.messages;
  let usage = { input: 0, output: 0, cached: 0, reasoning: 0 };
  // Unknown (null) once any round's cost is.
  let cost: number | null = 0;
  const sum = (res: ChatResponse) => {
    usage = addUsage(usage, res.usage);
    cost = cost === null || res.costUsd == null ? null : cost + res.costUsd;
  };
  for (let round = 0; ; round++) {
    // The tool stays offered to the end: Anthropic refuses tool results in a request without tools.
    const res = await target.complete({ ...req, system, messages, tools: [tool] });
    sum(res);
    const reads = (res.toolCalls ?? []).filter((c) => c.name === READ_TOOL);
    const spent = round === MAX_READ_ROUNDS;
    if (reads.length === 0 || spent) {
      const trace: AgentTrace = {
        agent: 'chat',
        steps,
        files: [],
        ...(read.length ? { package: { read, ran: [] } } : {}),
        errors: reads.length
          ? [`asked to read ${reads.length} more file(s) after its ${MAX_READ_ROUNDS} rounds of reads`]
          : [],
        turns: round + 1,
        durationMs: Math.round(performance.now() - started),
        exitCode: null,
      };
      // Reads past the limit are left unanswered: the reply is taken as it stands.
      return { ...res, toolCalls: undefined, usage, costUsd: cost, trace };
    }
    const answers: Message[] = reads.map((c) => {
      const a = readAnswer(files, c.input);
      steps.push({ tool: READ_TOOL, input: a.path, ok: a.ok, ...(a.ok ? {} : { output: a.text.slice(0, 160) }) });
      if (a.ok && !read.includes(a.path)) read.push(a.path);
      return { role: 'tool', toolCallId: c.id, toolName: READ_TOOL, content: a.text };
    });
    if (round + 1 === MAX_READ_ROUNDS)
      answers.push({
        role: 'user',
        content: `That was the last file you can read (${MAX_READ_ROUNDS} rounds of reads): answer now with what you have.`,
      });
    messages = [...messages, { role: 'assistant', content: res.text, toolCalls: reads }, ...answers];
  }
}
