/** Markdown helpers of the generated reference pages. */

/**
 * Text as one table cell: on one line, its pipes escaped, and `<` outside code spans written as
 * `&lt;` (so that `<dir>` shows instead of vanishing as an unknown HTML tag).
 */
export function cell(text: string): string {
  return text
    .replace(/\s*\n\s*/g, ' ')
    .split(/(`[^`]*`)/)
    .map((part) => (part.startsWith('`') ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\\?\|/g, '\\|');
}

/** A table with a header row. */
export function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}
