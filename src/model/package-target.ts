/**
 * A target that runs under a skill package. Each request the env makes under the skill (its
 * `skill` field set) carries the package's other files as `skillFiles`: an agent installs them
 * beside `SKILL.md` and opens them as it would at home. A chat model cannot open files, so it
 * gets the text files in its system prompt, right after the skill's text, and a line for each
 * binary file (path, size, type). A single document's requests are left exactly as they were.
 */
import { fill, loadPrompt } from '../prompt-files.ts';
import { hasFiles, type PackageFiles, type SkillPackage } from '../skill/package/package.ts';
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

export function packageTarget(target: ChatModel, pkg: SkillPackage): ChatModel {
  if (!hasFiles(pkg)) return target;
  const files = pkg.files;
  let rendered: string | undefined;
  const withFiles = (req: ChatRequest): ChatRequest => {
    if (req.skill === undefined) return req;
    if (target.readsSkillFiles) return { ...req, skillFiles: files };
    rendered ??= renderPackageFiles(files);
    return { ...req, skillFiles: files, system: systemWithFiles(req.system ?? '', req.skill, rendered) };
  };
  return Object.assign(Object.create(target) as ChatModel, {
    complete: (req: ChatRequest) => target.complete(withFiles(req)),
  });
}
