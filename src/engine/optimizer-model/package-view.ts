/**
 * What the optimizer is shown of a skill package besides `SKILL.md`: the file tree with each
 * file's kind, size and how many of the minibatch's rollouts read or ran it, then the text of the
 * text files as long as they fit in a token budget (the others by name only): first those the
 * rollouts used, most used first, then the rest smallest first. Binary files are never shown as
 * text.
 */
import { fenced } from '../../model/package-target.ts';
import { countTokens } from '../../skill/document.ts';
import { packageEntries, type PackageFiles } from '../../skill/package/package.ts';
import { type PackageUsage, useText } from '../stages/package-usage.ts';

/** Tokens of file text shown to the optimizer at most, per request. */
export const PACKAGE_VIEW_TOKENS = 12_000;

const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;

/** The files as the optimizer's request lists them (also its `meta.files`). */
export function fileList(files: PackageFiles): { path: string; kind: 'text' | 'binary'; size: number }[] {
  return packageEntries({ skill: '', files })
    .slice(1)
    .map((e) => ({ path: e.path, kind: e.kind, size: e.size }));
}

export function packageView(files: PackageFiles, usage?: PackageUsage, budget = PACKAGE_VIEW_TOKENS): string {
  const list = fileList(files);
  const uses = (p: string) => {
    const u = usage?.files[p];
    return u ? u.read + u.ran : 0;
  };
  const tree = list
    .map((f) => {
      const used = usage ? useText(usage.files[f.path], usage.rollouts) : '';
      return `- ${f.path} (${f.kind}, ${size(f.size)}${used ? `; ${used}` : ''})`;
    })
    .join('\n');
  const shown: string[] = [];
  let left = budget;
  for (const f of [...list]
    .filter((f) => f.kind === 'text')
    .sort((a, b) => uses(b.path) - uses(a.path) || a.size - b.size || (a.path < b.path ? -1 : 1))) {
    const file = files.get(f.path)!;
    if (file.kind !== 'text') continue;
    const tokens = countTokens(file.text);
    if (tokens > left) continue;
    left -= tokens;
    shown.push(`### ${f.path}\n${fenced(file.text)}`);
  }
  const omitted = list.filter((f) => f.kind === 'text').length - shown.length;
  const note =
    omitted > 0
      ? `\n\n(${omitted} more text file(s) not shown: over the ${budget.toLocaleString('en')}-token view)`
      : '';
  return `## Skill Package Files\n${tree}${shown.length ? `\n\n${shown.join('\n\n')}` : ''}${note}`;
}
