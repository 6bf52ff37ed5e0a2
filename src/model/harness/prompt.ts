/**
 * A chat request as the text an agent CLI is given. The CLIs take one prompt, so the system
 * text and the conversation so far are written out in order; images become files in the
 * workspace, named in the text.
 */
import { fill, loadPrompt } from '../../prompt-files.ts';
import { imageFilePart } from '../providers/wire.ts';
import { FatalModelError, type ChatRequest, type ImagePart, type Message } from '../types.ts';

export interface Attachment {
  /** Workspace-relative path. */
  path: string;
  bytes: Uint8Array;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/bmp': 'bmp',
  'image/tiff': 'tif',
};

/** An image part as a file under `attachments/`, or, for a URL, the URL itself. */
function attach(part: ImagePart, attachments: Attachment[]): string {
  const file = imageFilePart(part);
  if (file.data instanceof URL) return `[image at ${file.data.href}]`;
  const bytes = typeof file.data === 'string' ? Buffer.from(file.data, 'base64') : file.data;
  const ext = EXTENSIONS[file.mediaType] ?? 'bin';
  const rel = `attachments/image_${String(attachments.length + 1).padStart(2, '0')}.${ext}`;
  attachments.push({ path: rel, bytes });
  return `[image: ${rel}]`;
}

function contentText(content: Message['content'], attachments: Attachment[]): string {
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : attach(p, attachments))).join('\n');
}

/**
 * The conversation as text: a single user message as it is; a longer one with each turn
 * labelled, so the agent sees what it answered before and what it is asked now.
 */
export function conversationText(messages: Message[], attachments: Attachment[]): string {
  if (messages.length === 1 && messages[0]!.role === 'user') return contentText(messages[0]!.content, attachments);
  return messages
    .map((m) => {
      if (m.role === 'user') return `[user]\n${contentText(m.content, attachments)}`;
      if (m.role === 'assistant') {
        const calls = m.toolCalls?.length
          ? `\n(tool calls: ${JSON.stringify(m.toolCalls.map((c) => ({ name: c.name, input: c.input })))})`
          : '';
        return `[you]\n${m.content}${calls}`;
      }
      return `[tool ${m.toolName} result]\n${m.content}`;
    })
    .join('\n\n');
}

/** The system text with the skill's text replaced by `skillText` (or `skillText` first when the skill is not in it). */
export function instructionsWithout(system: string, skill: string | undefined, skillText: string): string {
  const body = skill?.trim();
  if (!body) return [skillText, system].filter(Boolean).join('\n\n');
  const at = system.indexOf(body);
  if (at < 0) return [skillText, system].filter(Boolean).join('\n\n');
  return `${system.slice(0, at)}${skillText}${system.slice(at + body.length)}`.replace(/\n{3,}/g, '\n\n').trim();
}

function refuseTools(req: ChatRequest): void {
  if (req.tools?.length)
    throw new FatalModelError(
      `an agent target runs its own tools; the ${req.purpose} request offers tools of its own (${req.tools.map((t) => t.name).join(', ')}), which agents cannot call`,
    );
}

export interface AgentPrompt {
  /** What the CLI is given. */
  prompt: string;
  /** The same task, for the agent to re-read: written to `task.md`. */
  taskFile: string;
  attachments: Attachment[];
}

/** The prompt of an agent run: the env's instructions (skill swapped for where to find it), the task, the files. */
export function agentPrompt(req: ChatRequest, skillText: string, extraFiles: string[]): AgentPrompt {
  refuseTools(req);
  const attachments: Attachment[] = [];
  const instructions = instructionsWithout(req.system ?? '', req.skill, skillText);
  const task = conversationText(req.messages, attachments);
  const files = [...attachments.map((a) => a.path), ...extraFiles];
  const taskFile = [instructions, task].filter((s) => s.trim()).join('\n\n');
  const prompt = fill(loadPrompt('agents/task'), {
    instructions,
    task,
    files: files.length ? fill(loadPrompt('agents/files'), { list: files.map((f) => `- ${f}`).join('\n') }).trim() : '',
  })
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { prompt, taskFile: `${taskFile}\n`, attachments };
}

/** The conversation alone, as the prompt of a run that is the user talking to the agent (no task framing, no skill pointer). */
export function userMessage(req: ChatRequest): AgentPrompt {
  refuseTools(req);
  const attachments: Attachment[] = [];
  const text = conversationText(req.messages, attachments).trim();
  return { prompt: text, taskFile: `${text}\n`, attachments };
}
