/** The SVG chart: well-formed XML, one series per number, the throughput line, event markers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABEL_CHAR_PX, layoutLabels } from '../../src/cli/chart-svg.js';
import { scratch, sendpool } from './helpers.js';

interface Element {
  name: string;
  attrs: Record<string, string>;
  children: Element[];
  text: string;
}

/** A small strict XML parser: balanced tags, quoted attributes, known entities; throws otherwise. */
function parseXml(text: string): Element {
  const root: Element = { name: '#root', attrs: {}, children: [], text: '' };
  const stack = [root];
  const token = /<\?[^>]*\?>|<!--[\s\S]*?-->|<\/([A-Za-z][\w:.-]*)\s*>|<([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let at = 0;
  while (at < text.length) {
    token.lastIndex = at;
    m = token.exec(text);
    if (!m) throw new Error(`not XML at ${at}: ${JSON.stringify(text.slice(at, at + 40))}`);
    at = token.lastIndex;
    if (m[1]) {
      const open = stack.pop()!;
      if (open.name !== m[1]) throw new Error(`</${m[1]}> closes <${open.name}>`);
    } else if (m[2]) {
      const attrs: Record<string, string> = {};
      for (const a of m[3]!.matchAll(/([\w:.-]+)\s*=\s*"([^"]*)"/g)) {
        if (a[1]! in attrs) throw new Error(`duplicate attribute ${a[1]}`);
        attrs[a[1]!] = a[2]!;
      }
      const el: Element = { name: m[2], attrs, children: [], text: '' };
      stack[stack.length - 1]!.children.push(el);
      if (!m[4]) stack.push(el);
    } else if (m[5]) {
      if (/&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(m[5])) throw new Error(`bad entity in ${JSON.stringify(m[5])}`);
      stack[stack.length - 1]!.text += m[5];
    }
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  if (root.children.length !== 1) throw new Error('not one root element');
  return root.children[0]!;
}

function all(el: Element, pred: (e: Element) => boolean, out: Element[] = []): Element[] {
  if (pred(el)) out.push(el);
  for (const c of el.children) all(c, pred, out);
  return out;
}

describe('simulate --chart', () => {
  it('writes an SVG with one series per number, the throughput line and a marker per event', () => {
    const dir = scratch({});
    const file = join(dir, 'chart.svg');
    const r = sendpool('simulate', 'examples/fleet.json', '-b', '1', '-t', '10', '-n', '30000', '--events', 'examples/events-what-if.json', '--chart', file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Chart: ${file}`);
    const svg = parseXml(readFileSync(file, 'utf8'));
    expect(svg.name).toBe('svg');
    expect(svg.attrs['xmlns']).toBe('http://www.w3.org/2000/svg');
    const series = all(svg, (e) => e.attrs['class'] === 'series');
    expect(series.map((s) => s.attrs['data-phone'])).toEqual(['5511990000001', '5511990000002', '5511990000003']);
    for (const s of series) expect(s.attrs['d']).toMatch(/^M[\d.]+,[\d.]+( L[\d.]+,[\d.]+)+ Z$/);
    expect(all(svg, (e) => e.attrs['class'] === 'throughput')).toHaveLength(1);
    const markers = all(svg, (e) => e.attrs['class'] === 'marker').map((e) => e.attrs['data-kind']);
    expect(markers).toEqual(['pause', 'template', 'resume', 'limits']);
  });

  it('a fleet of twelve numbers gives twelve series', () => {
    const dir = scratch({});
    const file = join(dir, 'day.svg');
    const r = sendpool('simulate', 'test/cli/fixtures/fleet-day.json', '-b', '7', '-t', '70', '-n', '50000', '--json', '--chart', file);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).chart).toBe(file);
    const svg = parseXml(readFileSync(file, 'utf8'));
    expect(all(svg, (e) => e.attrs['class'] === 'series')).toHaveLength(12);
  });

  it('keeps the labels of many close events apart, each event with a marker and its text', () => {
    const dir = scratch({});
    const file = join(dir, 'busy.svg');
    // Ten events within 20 minutes of a 9-hour run: a few pixels apart on the time axis.
    const flags = [0, 1, 2, 3, 4].flatMap((k) => [`--pause-number`, `551199000000${(k % 3) + 1}@${10 + 4 * k}m`, `--resume-number`, `551199000000${(k % 3) + 1}@${12 + 4 * k}m`]);
    const r = sendpool('simulate', 'examples/fleet.json', '-b', '1', '-t', '10', '-n', '30000', ...flags, '--chart', file);
    expect(r.code, r.stderr).toBe(0);
    const svg = parseXml(readFileSync(file, 'utf8'));
    const markers = all(svg, (e) => e.attrs['class'] === 'marker');
    expect(markers).toHaveLength(10);
    const labels = markers.map((m) => m.children.find((c) => c.name === 'text')!);
    expect(labels.every((l) => l !== undefined)).toBe(true);
    const boxes = labels.map((l) => {
      const x = Number(l.attrs['x']);
      const width = l.text.length * LABEL_CHAR_PX;
      const from = l.attrs['text-anchor'] === 'end' ? x - width : x;
      return { y: Number(l.attrs['y']), from, to: from + width, text: l.text };
    });
    for (const a of boxes) {
      for (const b of boxes) {
        if (a === b || a.y !== b.y) continue;
        expect(a.to <= b.from || b.to <= a.from, `${a.text} / ${b.text}`).toBe(true);
      }
    }
    // Every label fits the plot's width: nothing runs under the legend.
    expect(Math.max(...boxes.map((b) => b.to))).toBeLessThanOrEqual(960 - 230);
  });
});

describe('layoutLabels', () => {
  it('puts labels in the first row they clear, left of the marker near the right edge, and none past the last row', () => {
    const items = [0, 10, 200, 20, 690].map((x) => ({ x, text: 'pause 5511990000001' }));
    const places = layoutLabels(items, 700, 3);
    expect(places.map((p) => p.row)).toEqual([0, 1, 0, 2, 0]);
    expect(places[4]).toEqual({ x: 686, anchor: 'end', row: 0 });
    expect(layoutLabels(items.slice(0, 2), 700, 1).map((p) => p.row)).toEqual([0, null]);
  });
});
