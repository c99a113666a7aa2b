/**
 * The chart of `simulate --chart FILE.svg`, hand-written SVG: messages sent over time, one stacked
 * band per number (its cumulative count; the top edge is the pool's total), the pool throughput
 * line (what the pool's hourly throughput alone would have sent, bending when it changes), and a
 * marker for every event (pauses, resumes, template and limit changes).
 *
 * Each number's band is `<path class="series" data-phone="…">`; the throughput line is
 * `<path class="throughput">`; markers are `<g class="marker" data-kind="pause|resume|template|limits">`.
 * Event labels are laid out in rows so that none overlaps another ({@link layoutLabels}).
 */
import { formatDuration } from './duration.js';
import { count } from './format.js';

export interface ChartInput {
  readonly title: string;
  readonly phones: readonly string[];
  readonly times: readonly number[];
  /** Cumulative messages per number at `times`. */
  readonly perNumber: readonly (readonly number[])[];
  readonly endMs: number;
  readonly throughputAtStartPerHour: number;
  readonly events: readonly { readonly atMs: number; readonly label: string; readonly kind: string; readonly throughputPerHour: number }[];
}

const WIDTH = 960;
const HEIGHT = 520;
const LEFT = 80;
const RIGHT = 230;
const TOP = 50;
const BOTTOM = 60;
const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
const MARKER_COLORS: Record<string, string> = { pause: '#d62728', resume: '#2ca02c', template: '#ff7f0e', limits: '#1f77b4' };
/** Width of a label character at the chart's 12 px font, on the generous side: labels never touch. */
export const LABEL_CHAR_PX = 7;
/** Height of a row of labels. */
const LABEL_ROW_PX = 14;
/** Space kept between two labels of a row. */
const LABEL_GAP_PX = 6;
const TIME_STEPS = [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800].map((s) => s * 1000);

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function niceStep(max: number, ticks: number): number {
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function f(n: number): string {
  return (Math.round(n * 10) / 10).toString();
}

/** Where a label goes: its anchor point, text-anchor, and its row (null: no room, marker only). */
export interface LabelPlace {
  readonly x: number;
  readonly anchor: 'start' | 'end';
  readonly row: number | null;
}

/**
 * Lays out labels, given in order of their markers' `x`: each goes right of its marker (left of it
 * when it would cross `right`), in the first row where it clears the labels already there; past
 * `maxRows` rows a label is left out (its marker stays, with the text as its tooltip).
 */
export function layoutLabels(items: readonly { readonly x: number; readonly text: string }[], right: number, maxRows: number): LabelPlace[] {
  const rowEnds: number[] = [];
  return items.map(({ x, text }) => {
    const width = text.length * LABEL_CHAR_PX;
    const anchor = x + 4 + width > right ? 'end' : 'start';
    const from = anchor === 'start' ? x + 4 : x - 4 - width;
    let row = rowEnds.findIndex((end) => end + LABEL_GAP_PX <= from);
    if (row < 0 && rowEnds.length < maxRows) row = rowEnds.push(-Infinity) - 1;
    if (row < 0) return { x, anchor, row: null };
    rowEnds[row] = from + width;
    return { x: anchor === 'start' ? x + 4 : x - 4, anchor, row };
  });
}

export function renderChart(input: ChartInput): string {
  const { phones, times, perNumber } = input;
  const endMs = Math.max(input.endMs, 1);
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;

  // Pool throughput line: cumulative messages at the pool's hourly throughput, which changes at events.
  const line: [number, number][] = [[0, 0]];
  let rate = input.throughputAtStartPerHour;
  let t = 0;
  let acc = 0;
  for (const e of input.events) {
    if (e.atMs > endMs) break;
    acc += ((e.atMs - t) * rate) / 3_600_000;
    t = e.atMs;
    line.push([t, acc]);
    rate = e.throughputPerHour;
  }
  acc += ((endMs - t) * rate) / 3_600_000;
  line.push([endMs, acc]);

  const totals = times.map((_, k) => perNumber.reduce((s, series) => s + (series[k] ?? 0), 0));
  const yMaxRaw = Math.max(1, ...totals, ...line.map(([, y]) => y));
  const yStep = niceStep(yMaxRaw, 6);
  const yMax = Math.ceil(yMaxRaw / yStep) * yStep;
  const x = (ms: number) => LEFT + (ms / endMs) * plotW;
  const y = (v: number) => TOP + plotH - (v / yMax) * plotH;

  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<title>${esc(input.title)}</title>`);
  out.push(`<rect x="0" y="0" width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`);
  out.push(`<text x="${LEFT}" y="${TOP - 22}" font-size="15" font-weight="bold">${esc(input.title)}</text>`);

  // Grid and axes.
  out.push('<g class="axes" stroke="#dddddd" stroke-width="1">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<line x1="${LEFT}" y1="${f(y(v))}" x2="${LEFT + plotW}" y2="${f(y(v))}"/>`);
  const tStep = TIME_STEPS.find((s) => endMs / s <= 8) ?? 604_800_000;
  const tick = (ms: number) => (tStep % 3_600_000 === 0 ? `${ms / 3_600_000}h` : formatDuration(ms));
  for (let ms = 0; ms <= endMs; ms += tStep) out.push(`<line x1="${f(x(ms))}" y1="${TOP}" x2="${f(x(ms))}" y2="${TOP + plotH}"/>`);
  out.push('</g>');
  out.push('<g class="labels" fill="#333333">');
  for (let v = 0; v <= yMax + 1e-9; v += yStep) out.push(`<text x="${LEFT - 8}" y="${f(y(v) + 4)}" text-anchor="end">${count(v)}</text>`);
  for (let ms = 0; ms <= endMs; ms += tStep) out.push(`<text x="${f(x(ms))}" y="${TOP + plotH + 18}" text-anchor="middle">${tick(ms)}</text>`);
  out.push(`<text x="${LEFT + plotW / 2}" y="${HEIGHT - 14}" text-anchor="middle">simulated time since the send started</text>`);
  out.push(`<text x="18" y="${TOP + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${TOP + plotH / 2})">messages sent (stacked per number)</text>`);
  out.push('</g>');

  // One stacked band per number.
  out.push('<g class="bands">');
  const lower = times.map(() => 0);
  phones.forEach((phone, i) => {
    const series = perNumber[i] ?? [];
    const upper = times.map((_, k) => lower[k]! + (series[k] ?? 0));
    const top = times.map((tm, k) => `${f(x(tm))},${f(y(upper[k]!))}`);
    const bottom = times.map((tm, k) => `${f(x(tm))},${f(y(lower[k]!))}`).reverse();
    const color = PALETTE[i % PALETTE.length]!;
    const sent = series[series.length - 1] ?? 0;
    out.push(
      `<path class="series" data-phone="${esc(phone)}" d="M${top.join(' L')} L${bottom.join(' L')} Z" fill="${color}" fill-opacity="0.8" stroke="${color}" stroke-width="1"><title>${esc(phone)}: ${count(sent)} sent</title></path>`,
    );
    for (let k = 0; k < times.length; k++) lower[k] = upper[k]!;
  });
  out.push('</g>');

  // Pool throughput line.
  out.push(
    `<path class="throughput" d="M${line.map(([tm, v]) => `${f(x(tm))},${f(y(v))}`).join(' L')}" fill="none" stroke="#222222" stroke-width="2" stroke-dasharray="6 4"><title>pool throughput</title></path>`,
  );

  // Event markers, their labels in rows that keep them apart (a white halo keeps them legible).
  out.push('<g class="markers">');
  const shown = input.events.filter((e) => e.atMs <= endMs);
  const texts = shown.map((e) => `${formatDuration(e.atMs)} ${e.label}`);
  const places = layoutLabels(
    shown.map((e, k) => ({ x: x(e.atMs), text: texts[k]! })),
    LEFT + plotW,
    Math.floor((plotH - LABEL_ROW_PX) / LABEL_ROW_PX),
  );
  shown.forEach((e, k) => {
    const color = MARKER_COLORS[e.kind] ?? '#555555';
    const mx = f(x(e.atMs));
    const place = places[k]!;
    const label =
      place.row === null
        ? ''
        : `<text x="${f(place.x)}" y="${TOP + LABEL_ROW_PX + place.row * LABEL_ROW_PX}" text-anchor="${place.anchor}" fill="${color}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${esc(texts[k]!)}</text>`;
    out.push(
      `<g class="marker" data-kind="${esc(e.kind)}"><title>${esc(texts[k]!)}</title><line x1="${mx}" y1="${TOP}" x2="${mx}" y2="${TOP + plotH}" stroke="${color}" stroke-width="1.5" stroke-dasharray="3 3"/>${label}</g>`,
    );
  });
  out.push('</g>');

  // Legend.
  const lx = LEFT + plotW + 20;
  out.push('<g class="legend">');
  phones.forEach((phone, i) => {
    const ly = TOP + 10 + i * 20;
    if (ly > TOP + plotH - 60) return;
    const sent = perNumber[i]?.[perNumber[i].length - 1] ?? 0;
    out.push(`<rect x="${lx}" y="${ly - 10}" width="14" height="12" fill="${PALETTE[i % PALETTE.length]}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly}">${esc(phone)} (${count(sent)})</text>`);
  });
  const ty = TOP + Math.min(phones.length, Math.floor((plotH - 60) / 20)) * 20 + 20;
  out.push(`<line x1="${lx}" y1="${ty - 4}" x2="${lx + 14}" y2="${ty - 4}" stroke="#222222" stroke-width="2" stroke-dasharray="6 4"/>`);
  out.push(`<text x="${lx + 20}" y="${ty}">pool throughput</text>`);
  out.push('</g>');
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
