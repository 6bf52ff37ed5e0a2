/**
 * What deploy reads in a skill's own front matter: a field's value (`name:`, `description:`),
 * and `allowed-tools`, the tools an agent may use without asking while the skill is active, with
 * those that grant much (any command, any file, a destructive command) picked out. The block is
 * not parsed as YAML: real files are not always valid YAML, and the block is kept as written.
 */

/** A single-line field of a front matter block, unquoted. */
export function frontMatterField(block: string, key: string): string | undefined {
  const m = new RegExp(`^${key}[ \\t]*:[ \\t]*(.*)$`, 'm').exec(block);
  if (!m) return undefined;
  const raw = m[1]!.trim();
  if (raw.startsWith('"')) {
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  }
  return raw.startsWith("'") && raw.endsWith("'") ? raw.slice(1, -1).replace(/''/g, "'") : raw;
}

/** Entries of a tool list: split at commas and spaces outside parentheses (`Bash(git diff:*) Read`). */
function splitTools(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === ',' || /\s/.test(ch))) {
      if (current) out.push(current);
      current = '';
    } else current += ch;
  }
  if (current) out.push(current);
  return out;
}

const unquote = (v: string) => v.trim().replace(/^(["'])(.*)\1$/, '$2');

/** The `allowed-tools` of a front matter block: inline (`Read, Grep`, `[Read, Grep]`, a quoted string) or a YAML list. */
export function allowedTools(block: string): string[] {
  const lines = block.split(/\r?\n/);
  const at = lines.findIndex((l) => /^allowed-tools[ \t]*:/.test(l));
  if (at < 0) return [];
  const inline = lines[at]!.replace(/^allowed-tools[ \t]*:/, '').trim();
  if (inline)
    return splitTools(unquote(inline).replace(/^\[(.*)\]$/, '$1'))
      .map(unquote)
      .filter(Boolean);
  const items: string[] = [];
  for (const line of lines.slice(at + 1)) {
    const item = /^[ \t]+-[ \t]+(.*)$/.exec(line);
    if (!item) break;
    items.push(unquote(item[1]!));
  }
  return items.filter(Boolean);
}

/** Tools that act on the machine: unrestricted, each can do anything of its kind. */
const ACTING: Record<string, string> = {
  bash: 'any shell command',
  shell: 'any shell command',
  powershell: 'any shell command',
  write: 'writing any file',
  edit: 'editing any file',
  multiedit: 'editing any file',
  notebookedit: 'editing any notebook',
  webfetch: 'fetching any URL',
};
const DESTRUCTIVE =
  /\brm\s+-[a-z]*[rf]|\bsudo\b|\bmkfs|\bdd\s+|\bchmod\b|\bchown\b|\bcurl\b|\bwget\b|\bgit\s+push\b|\bgit\s+reset\s+--hard|>\s*\/dev\//i;

/** The entries of `tools` that grant much, each with why. */
export function broadTools(tools: string[]): { tool: string; why: string }[] {
  const out: { tool: string; why: string }[] = [];
  for (const tool of tools) {
    const m = /^([^(]+)(?:\((.*)\))?$/.exec(tool.trim());
    const name = (m?.[1] ?? tool).trim();
    const pattern = m?.[2]?.trim();
    if (name === '*' || /\*/.test(name)) out.push({ tool, why: 'every tool of that name' });
    else if (pattern === undefined && ACTING[name.toLowerCase()]) out.push({ tool, why: ACTING[name.toLowerCase()]! });
    else if (pattern !== undefined && /^[:*\s]*\*[:*\s]*$/.test(pattern))
      out.push({ tool, why: `${ACTING[name.toLowerCase()] ?? 'any use of it'}` });
    else if (pattern !== undefined && DESTRUCTIVE.test(pattern)) out.push({ tool, why: 'a destructive command' });
  }
  return out;
}
