/**
 * A target that runs under a skill package. Each request the env makes under the skill (its
 * `skill` field set) carries the package's other files as `skillFiles`: an agent installs them
 * beside `SKILL.md` and opens them as it would at home. A chat model cannot open files, so it
 * gets the text files in its system prompt, right after the skill's text, and a line for each
 * binary file (path, size, type); or, with its role's `skill_files` (`tool`, or `auto` for a
 * large package), a list of the files and a tool to read them (`package-file-tool.ts`). A single
 * document's requests are left exactly as they were.
 */
import { fill, loadPrompt } from '../prompt-files.ts';
import { hasFiles, type PackageFiles, type SkillPackage } from '../skill/package/package.ts';
import { countTokens } from '../skill/document.ts';
import { completeWithFileTool, fileListing } from './package-file-tool.ts';
import type { ChatModel, ChatRequest } from './types.ts';

/** The package's files as a chat model reads them: each text file under its path, each binary file as one line. */
export function renderPackageFiles(files: PackageFiles): string {
  const parts = [...files]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, file]) =>
      file.kind === 'text'
        ? `### ${path}\n\n${fenced(file.text)}`
        : `### ${path}\n\n(binary, ${file.bytes.byteLength.toLocaleString('en')} bytes: not shown)`,
    );
  return fill(loadPrompt('package_files'), { files: parts.join('\n\n') }).trim();
}

/** `text` in a code fence longer than any run of backticks inside it. */
export function fenced(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}\n${text.replace(/\n$/, '')}\n${fence}`;
}

/** The system prompt with the files placed after the skill's text (or after the whole prompt when the text is not in it). */
function systemWithFiles(system: string, skill: string, rendered: string): string {
  const body = skill.trim();
  const at = body ? system.indexOf(body) : -1;
  if (at < 0) return [system, rendered].filter(Boolean).join('\n\n');
  const end = at + body.length;
  return `${system.slice(0, end)}\n\n${rendered}${system.slice(end)}`;
}

/** Above this many tokens of text besides `SKILL.md`, `skill_files: auto` gives a chat model the read tool instead of the text. */
export const AUTO_TOOL_TOKENS = 2000;

/** How a chat model gets the files: the read tool or the system prompt (a role's `skill_files`, `auto` by their size). */
export function fileMode(target: ChatModel, files: PackageFiles): 'tool' | 'inline' {
  const mode = target.skillFiles ?? 'inline';
  if (mode !== 'auto') return mode;
  let tokens = 0;
  for (const f of files.values()) if (f.kind === 'text') tokens += countTokens(f.text);
  return tokens > AUTO_TOOL_TOKENS ? 'tool' : 'inline';
}

export function packageTarget(target: ChatModel, pkg: SkillPackage): ChatModel {
  if (!hasFiles(pkg)) return target;
  const files = pkg.files;
  const mode = target.readsSkillFiles ? 'installed' : fileMode(target, files);
  let rendered: string | undefined;
  const complete = (req: ChatRequest) => {
    if (req.skill === undefined) return target.complete(req);
    if (mode === 'installed') return target.complete({ ...req, skillFiles: files });
    // A request that offers tools of its own (an env's tool loop) keeps the files inline: no hidden turns in its conversation.
    if (mode === 'tool' && !req.tools?.length) {
      const system = systemWithFiles(req.system ?? '', req.skill, fileListing(files));
      return completeWithFileTool(target, { ...req, skillFiles: files }, files, system);
    }
    rendered ??= renderPackageFiles(files);
    return target.complete({
      ...req,
      skillFiles: files,
      system: systemWithFiles(req.system ?? '', req.skill, rendered),
    });
  };
  return Object.assign(Object.create(target) as ChatModel, { complete });
}
