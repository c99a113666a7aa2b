/**
 * An SVG line chart of assignments per second against fleet size (log scale), from one run's
 * results. No dependencies: plain SVG text.
 */
import type { Result } from './harness.js';

interface Series {
  readonly label: string;
  readonly color: string;
  readonly dash?: string;
  readonly pick: (r: Result) => boolean;
}

const SERIES: readonly Series[] = [
  { label: 'hand-written ceiling', color: '#888888', dash: '4 3', pick: (r) => r.group === 'peers' && r.subject === 'ceiling' },
  { label: 'sendpool assignInto, 1 template', color: '#1f77b4', pick: (r) => r.group === 'assign' && r.path === 'batch' && r.templates === 1 && r.scenario === 'ample' },
  { label: 'sendpool assignInto, 20 templates', color: '#17becf', pick: (r) => r.group === 'assign' && r.path === 'batch' && r.templates === 20 && r.scenario === 'ample' },
  { label: 'sendpool assignInto, 90 % exhausted', color: '#2ca02c', pick: (r) => r.group === 'assign' && r.path === 'batch' && r.templates === 1 && r.scenario === 'exhausted90' },
  { label: 'sendpool assignInto, pause/resume', color: '#9467bd', pick: (r) => r.group === 'assign' && r.path === 'batch' && r.scenario === 'pause-resume' },
  { label: 'sendpool assign(…, 1)', color: '#ff7f0e', pick: (r) => r.group === 'assign' && r.path === 'single' && r.templates === 1 && r.scenario === 'ample' },
  { label: 'limiter TokenBucket', color: '#d62728', dash: '2 2', pick: (r) => r.group === 'peers' && r.subject === 'limiter' },
];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function renderChart(results: readonly Result[], subtitle: string): string {
  const W = 900;
  const H = 440;
  const left = 70;
  const right = 300;
  const top = 50;
  const bottom = 60;
  const pw = W - left - right;
  const ph = H - top - bottom;
  const lines = SERIES.map((s) => ({
    s,
    points: results
      .filter((r) => s.pick(r) && r.numbers !== undefined && r.opsPerSecond !== undefined)
      .map((r) => [r.numbers!, r.opsPerSecond! / 1e6] as const)
      .sort((a, b) => a[0] - b[0]),
  })).filter((l) => l.points.length > 0);
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const ys = lines.flatMap((l) => l.points.map((p) => p[1]));
  const xMin = Math.min(1, ...xs);
  const xMax = Math.max(10, ...xs);
  const lx0 = Math.log10(xMin);
  const lx1 = Math.log10(xMax);
  const yMaxRaw = Math.max(1, ...ys);
  const step = yMaxRaw > 100 ? 25 : yMaxRaw > 40 ? 10 : 5;
  const yMax = Math.ceil(yMaxRaw / step) * step;
  const X = (n: number): number => left + ((Math.log10(n) - lx0) / (lx1 - lx0 || 1)) * pw;
  const Y = (v: number): number => top + ph - (v / yMax) * ph;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="22" font-size="15" font-weight="bold">Assignments per second against fleet size</text>`);
  out.push(`<text x="${left}" y="39" fill="#555">${esc(subtitle)}</text>`);
  for (let v = 0; v <= yMax; v += step) {
    out.push(`<line x1="${left}" x2="${left + pw}" y1="${Y(v).toFixed(1)}" y2="${Y(v).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${left - 6}" y="${(Y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
  }
  for (let e = Math.ceil(lx0); e <= Math.floor(lx1); e++) {
    const n = 10 ** e;
    out.push(`<line x1="${X(n).toFixed(1)}" x2="${X(n).toFixed(1)}" y1="${top}" y2="${top + ph}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${X(n).toFixed(1)}" y="${top + ph + 18}" text-anchor="middle">${n.toLocaleString('en-US')}</text>`);
  }
  out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${left}" x2="${left + pw}" y1="${top + ph}" y2="${top + ph}" stroke="#333"/>`);
  out.push(`<text x="${left + pw / 2}" y="${H - 18}" text-anchor="middle">numbers in the pool (log scale)</text>`);
  out.push(`<text transform="translate(18 ${top + ph / 2}) rotate(-90)" text-anchor="middle">million assignments per second</text>`);
  lines.forEach((l, i) => {
    const d = l.points.map((p, k) => `${k === 0 ? 'M' : 'L'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${l.s.color}" stroke-width="2"${l.s.dash ? ` stroke-dasharray="${l.s.dash}"` : ''}/>`);
    for (const p of l.points) out.push(`<circle cx="${X(p[0]).toFixed(1)}" cy="${Y(p[1]).toFixed(1)}" r="3" fill="${l.s.color}"/>`);
    const ly = top + 10 + i * 22;
    const lx = left + pw + 16;
    out.push(`<line x1="${lx}" x2="${lx + 22}" y1="${ly}" y2="${ly}" stroke="${l.s.color}" stroke-width="2"${l.s.dash ? ` stroke-dasharray="${l.s.dash}"` : ''}/>`);
    out.push(`<text x="${lx + 28}" y="${ly + 4}">${esc(l.s.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
