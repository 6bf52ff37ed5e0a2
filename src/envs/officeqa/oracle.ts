/**
 * The gold source pages of an OfficeQA item, as pre-parsed text: the page each `source_docs`
 * URL points at (its `page` / `pagenum` / `page_id` query parameter), read from the parsed
 * JSON of the matching bulletin (`jsons/<file stem>.json`, elements with `content` and
 * `bbox[].page_id`), tables rendered as Markdown. The original hands these to the target;
 * here that is the explicit, off-by-default `env.oracle_pages` option, since it gives the
 * target the answer's location and text and so changes what the benchmark measures.
 */
import fs from 'node:fs';
import path from 'node:path';

export const PAGE_MAX_CHARS = 24_000;
export const TOTAL_MAX_CHARS = 80_000;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

export function unescapeHtml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, code: string) => {
    if (code[0] === '#') {
      const n = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : parseInt(code.slice(1), 10);
      return Number.isFinite(n) ? String.fromCodePoint(n) : m;
    }
    return ENTITIES[code.toLowerCase()] ?? m;
  });
}

const stripTags = (html: string) =>
  unescapeHtml(html.replace(/<br\s*\/?>/gi, ' ').replace(/<[^>]*>/g, ''))
    .replace(/\s+/g, ' ')
    .trim();

/** HTML tables as Markdown tables (first row as header); text around them kept without tags. */
export function htmlToMarkdown(html: string): string {
  return html
    .replace(/<table[\s\S]*?<\/table>/gi, (table) => {
      const rows = [...table.matchAll(/<tr[\s\S]*?<\/tr>/gi)].map((tr) =>
        [...tr[0].matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/gi)].map((c) => stripTags(c[1]!).replace(/\|/g, '\\|')),
      );
      if (rows.length === 0) return '';
      const width = Math.max(...rows.map((r) => r.length));
      const line = (r: string[]) => `| ${[...r, ...Array(width - r.length).fill('')].join(' | ')} |`;
      return `\n${[line(rows[0]!), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n')}\n`;
    })
    .split(/\n/)
    .map((l) => (/^\|/.test(l) ? l : stripTags(l)))
    .join('\n')
    .trim();
}

export function pageOf(url: string): number | undefined {
  try {
    const u = new URL(url);
    for (const key of ['page', 'pagenum', 'page_id']) {
      const v = u.searchParams.get(key);
      if (v !== null && /^\d+$/.test(v)) return Number(v);
    }
  } catch {
    // not a URL
  }
  return undefined;
}

function parsedJsonFor(file: string, roots: readonly string[]): string | undefined {
  const stem = path.basename(file, path.extname(file));
  for (const root of roots) {
    for (const dir of [
      path.join(root, 'jsons'),
      path.join(root, '..', 'jsons'),
      path.join(root, 'treasury_bulletins_parsed', 'jsons'),
      path.join(root, '..', 'treasury_bulletins_parsed', 'jsons'),
    ]) {
      const candidate = path.join(dir, `${stem}.json`);
      if (fs.existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

interface Element {
  content?: unknown;
  bbox?: { page_id?: unknown }[];
}

/** The rendered oracle pages of an item ('' when none can be found). */
export function oraclePages(
  sourceDocs: readonly string[],
  sourceFiles: readonly string[],
  roots: readonly string[],
): string {
  const sections: string[] = [];
  let total = 0;
  sourceDocs.forEach((url, i) => {
    const page = pageOf(url);
    const file = sourceFiles[i] ?? (sourceFiles.length === 1 ? sourceFiles[0] : undefined);
    if (page === undefined || !file) return;
    const json = parsedJsonFor(file, roots);
    if (!json) return;
    let elements: Element[];
    try {
      elements = ((JSON.parse(fs.readFileSync(json, 'utf8')) as { document?: { elements?: Element[] } }).document
        ?.elements ?? []) as Element[];
    } catch {
      return;
    }
    const text = elements
      .filter((e) => (e.bbox ?? []).some((b) => Number(b.page_id) === page))
      .map((e) => htmlToMarkdown(String(e.content ?? '')))
      .filter(Boolean)
      .join('\n\n')
      .slice(0, PAGE_MAX_CHARS);
    if (!text || total >= TOTAL_MAX_CHARS) return;
    const section = `### ${path.basename(file)}, page ${page}\n${text}`.slice(0, TOTAL_MAX_CHARS - total);
    total += section.length;
    sections.push(section);
  });
  return sections.join('\n\n');
}
