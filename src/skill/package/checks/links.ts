/**
 * Every relative link in a Markdown file names a file (or folder) of the package: inline links
 * and images (`[x](references/forms.md)`, `![](assets/a.png)`, `<…>` destinations) and reference
 * definitions (`[x]: scripts/fill.py`), resolved from the linking file's folder, with `./`, a
 * `#anchor` and a `?query` handled. Not checked: URLs and other schemes (`https:`, `mailto:`),
 * pure anchors, absolute paths, whether an anchor's heading exists, and anything inside code
 * (fenced blocks and `code spans`) or the front matter.
 */
import { posix } from 'node:path';
import { count } from '../../../util/plural.ts';
import { frontMatter } from '../../regions.ts';
import { type PackageFiles, SKILL_FILE } from '../package.ts';
import { failed, type PackageCheck, passed } from './record.ts';

export const isMarkdown = (path: string) => /\.(md|markdown)$/i.test(path);

interface Link {
  target: string;
  line: number;
}

/** The text with code spans, HTML comments and fenced blocks blanked, lines kept where they were. */
function prose(markdown: string): string[] {
  const head = frontMatter(markdown);
  const text = head.replace(/[^\n]/g, ' ') + markdown.slice(head.length);
  const lines = text.replace(/<!--[\s\S]*?-->/g, (c) => c.replace(/[^\n]/g, ' ')).split('\n');
  let fence: string | undefined;
  return lines.map((line) => {
    const opening = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (
        opening &&
        opening[0] === fence[0] &&
        opening.length >= fence.length &&
        !line.slice(line.indexOf(opening) + opening.length).trim()
      )
        fence = undefined;
      return '';
    }
    if (opening) {
      fence = opening;
      return '';
    }
    return line.replace(/(`+)[^`]*?\1/g, (c) => ' '.repeat(c.length));
  });
}

/** The destination that starts at `from` (just after `](`), or undefined when it is not one. */
function destination(line: string, from: number): string | undefined {
  let i = from;
  while (line[i] === ' ' || line[i] === '\t') i++;
  if (line[i] === '<') {
    const end = line.indexOf('>', i);
    return end < 0 ? undefined : line.slice(i + 1, end);
  }
  let depth = 0;
  let out = '';
  for (; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) {
      out += line[++i];
      continue;
    }
    if (c === ' ' || c === '\t') break;
    if (c === '(') depth++;
    if (c === ')') {
      if (depth === 0) break;
      depth--;
    }
    out += c;
  }
  return out;
}

/** The links of a Markdown text, with their lines. */
export function markdownLinks(markdown: string): Link[] {
  const links: Link[] = [];
  prose(markdown).forEach((line, index) => {
    const definition = /^ {0,3}\[[^\]]+\]:[ \t]*(<[^>]*>|\S+)/.exec(line);
    if (definition) links.push({ target: definition[1]!.replace(/^<(.*)>$/, '$1'), line: index + 1 });
    for (let at = line.indexOf(']('); at >= 0; at = line.indexOf('](', at + 2)) {
      const target = destination(line, at + 2);
      if (target !== undefined) links.push({ target, line: index + 1 });
    }
  });
  return links;
}

/** The package path a link names, relative to `from`'s folder; undefined for links not checked. */
export function linkedPath(from: string, target: string): string | undefined {
  if (!target || target.startsWith('#') || target.startsWith('/') || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(target))
    return undefined;
  const bare = target.replace(/[#?].*$/s, '');
  if (!bare) return undefined;
  let decoded = bare;
  try {
    decoded = decodeURIComponent(bare);
  } catch {
    // a lone '%': the path as written
  }
  return posix.normalize(posix.join(posix.dirname(from), decoded)).replace(/\/+$/, '');
}

/** Whether `path` names `SKILL.md`, a file or a folder of the package (`.` is its root). */
function exists(path: string, files: PackageFiles): boolean {
  if (path === '.' || path === SKILL_FILE || files.has(path)) return true;
  const folder = `${path}/`;
  for (const name of files.keys()) if (name.startsWith(folder)) return true;
  return false;
}

export function checkLinks(path: string, markdown: string, files: PackageFiles): PackageCheck {
  const broken: string[] = [];
  let checked = 0;
  for (const link of markdownLinks(markdown)) {
    const target = linkedPath(path, link.target);
    if (target === undefined) continue;
    checked++;
    if (target === '..' || target.startsWith('../'))
      broken.push(`line ${link.line}: '${link.target}' leads out of the package`);
    else if (!exists(target, files))
      broken.push(
        `line ${link.line}: '${link.target}' names ${target === link.target ? '' : `${target}, `}no file of the package`,
      );
  }
  if (broken.length)
    return failed('links', path, `${path} links to what the package does not hold: ${broken.join('; ')}`);
  return passed(
    'links',
    path,
    checked
      ? `${path}: ${count(checked, 'relative link')}, each to a file of the package`
      : `${path} has no relative links`,
  );
}
