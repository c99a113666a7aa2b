/** CSV of the reports the server builds: RFC 4180 quoting, LF line ends, a header row first. */

/** One CSV text of rows; null and undefined are empty cells. */
export function csv(rows: readonly (readonly unknown[])[]): string {
  const cell = (v: unknown) => {
    const s = v === undefined || v === null ? '' : typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : JSON.stringify(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return rows.map((r) => r.map(cell).join(',')).join('\n') + '\n';
}
