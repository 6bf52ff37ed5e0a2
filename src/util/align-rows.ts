/**
 * Rows of cells as aligned text: each column as wide as its widest cell, two spaces apart; the
 * first `left` columns align left, the rest (numbers) right.
 */
export function alignRows(rows: string[][], left: number): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) =>
    r
      .map((cell, c) => (c < left ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
}
