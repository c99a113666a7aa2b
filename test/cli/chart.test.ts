/** The SVG chart: well-formed XML, one series per number, the throughput line, event markers. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { scratch, sendpool } from './helpers.js';

interface Element {
  name: string;
  attrs: Record<string, string>;
  children: Element[];
}

/** A small strict XML parser: balanced tags, quoted attributes, known entities; throws otherwise. */
function parseXml(text: string): Element {
  const root: Element = { name: '#root', attrs: {}, children: [] };
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
      const el: Element = { name: m[2], attrs, children: [] };
      stack[stack.length - 1]!.children.push(el);
      if (!m[4]) stack.push(el);
    } else if (m[5] && /&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(m[5])) throw new Error(`bad entity in ${JSON.stringify(m[5])}`);
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
});
