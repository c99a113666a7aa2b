/** Number formatting shared by the tables. */

/** 1234567 -> "1,234,567". */
export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** 0.3333 -> "33.3 %". */
export function percent(part: number, whole: number): string {
  if (whole <= 0) return '-';
  // Rounded down, so 29,997 of 30,000 reads 99.9 %, never 100.0 %.
  return `${(Math.floor((part / whole) * 1000) / 10).toFixed(1)} %`;
}

/** Share with four decimals, for JSON. */
export function share(part: number, whole: number): number {
  return whole <= 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}
