/** Aligned plain-text tables: two spaces between columns, numbers right-aligned. */

export type Align = 'left' | 'right';

export interface Column {
  readonly header: string;
  readonly align?: Align;
}

/** Renders a table; a cell's width is its string length (the CLI writes ASCII and digits). */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.header.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (columns[i]!.align === 'right' ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(columns.map((c) => c.header)), line(widths.map((w) => '-'.repeat(w)))];
  for (const row of rows) out.push(line(columns.map((_, i) => row[i] ?? '')));
  return `${out.join('\n')}\n`;
}
