/**
 * The error table as the documentation writes it, against the one table in the code
 * (`CHANNEL_ERRORS`, `TRANSPORT_FAILURES` in src/core/channel-errors.ts), so the pages cannot drift
 * when an action changes:
 *
 * - docs/channels.md, "What an answer does": every known code in exactly one row, with its action's
 *   kind; the transport rows name their `TRANSPORT_FAILURES` entry and its kind; "any other" is
 *   `UNKNOWN_ACTION`'s kind.
 * - docs/events.md, the catalog of codes: each code's action column says its kind (and the base of
 *   a `transport` or `recipient-wait` wait, in seconds).
 * - docs/dispatch-loop.md, "Failures that are not the contact's": the waits before the last try,
 *   summed, for each base, as the dispatcher computes them from `MAX_TRANSPORT_ATTEMPTS` and
 *   `MAX_BACKOFF_MS`.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNEL_ERRORS, MAX_BACKOFF_MS, MAX_TRANSPORT_ATTEMPTS, TRANSPORT_FAILURES, UNKNOWN_ACTION, type FailureAction } from '../../src/index.js';

const root = resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The text of a section, from its heading to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no heading "${heading}"`);
  const level = /^#+/.exec(heading)![0].length;
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end < 0 ? rest : rest.slice(0, end);
}

/** The rows of the first Markdown table of a text, as cells, header and rule left out. */
function tableRows(text: string): string[][] {
  const lines = text.split('\n').filter((l) => l.startsWith('|'));
  return lines.slice(2).map((l) =>
    l
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim()),
  );
}

const kindOf = (action: FailureAction) => action.kind;

describe('docs/channels.md, the error table', () => {
  const rows = tableRows(section(read('docs/channels.md'), '## What an answer does: the error table'));

  it('is parsed (so the checks below are not vacuous)', () => {
    expect(rows.length).toBeGreaterThanOrEqual(15);
  });

  it('lists every known code once, with its action kind', () => {
    const seen = new Map<number, string>();
    const wrong: string[] = [];
    for (const [answer = '', codes = '', kind = ''] of rows) {
      for (const m of codes.matchAll(/\b\d+\b/g)) {
        const code = Number(m[0]);
        if (seen.has(code)) wrong.push(`${code} is in two rows ("${seen.get(code)}" and "${answer}")`);
        seen.set(code, answer);
        const known = CHANNEL_ERRORS.find((e) => e.code === code);
        if (known === undefined) wrong.push(`${code} ("${answer}") is not in CHANNEL_ERRORS`);
        else if (kind !== `\`${known.action.kind}\``) wrong.push(`${code} ("${answer}"): the page says ${kind}, the code has \`${known.action.kind}\``);
      }
    }
    for (const e of CHANNEL_ERRORS) if (!seen.has(e.code)) wrong.push(`${e.code} (${e.description}) is in no row`);
    expect(wrong).toEqual([]);
  });

  it('gives each transport failure and unknown codes their kind', () => {
    const wrong: string[] = [];
    for (const info of Object.values(TRANSPORT_FAILURES)) {
      const row = rows.find((r) => r[1]!.includes(`\`${info.kind}\``));
      if (row === undefined) wrong.push(`${info.kind}: no row`);
      else if (row[2] !== `\`${kindOf(info.action)}\``) wrong.push(`${info.kind}: the page says ${row[2]}, the code has \`${kindOf(info.action)}\``);
    }
    const other = rows.find((r) => r[1] === 'any other');
    expect(other?.[2]).toBe(`\`${kindOf(UNKNOWN_ACTION)}\``);
    expect(wrong).toEqual([]);
  });
});

describe('docs/events.md, the catalog of codes', () => {
  const rows = tableRows(section(read('docs/events.md'), '## Failure reasons and the catalog of codes'));
  const PHRASE: Record<FailureAction['kind'], string> = {
    requeue: 'requeue',
    retry: 'contact retry',
    'give-up': 'give up',
    'template-out': 'template',
    'number-out': 'number out',
    transport: 'transport',
    'recipient-wait': 'recipient waits',
  };

  it('says each code’s action kind, and the base of its wait', () => {
    const wrong: string[] = [];
    for (const e of CHANNEL_ERRORS) {
      const row = rows.find((r) => r[0] === String(e.code));
      if (row === undefined) {
        wrong.push(`${e.code}: no row`);
        continue;
      }
      const said = row[2]!;
      if (!said.startsWith(PHRASE[e.action.kind])) wrong.push(`${e.code}: "${said}" does not start with "${PHRASE[e.action.kind]}"`);
      const base = e.action.kind === 'transport' ? e.action.backoffMs : e.action.kind === 'recipient-wait' ? e.action.waitMs : undefined;
      if (base !== undefined && !said.includes(`${base / 1000} s`)) wrong.push(`${e.code}: "${said}" does not say its base, ${base / 1000} s`);
    }
    expect(wrong).toEqual([]);
  });
});

describe('docs/dispatch-loop.md, the bound of the failures that are not the contact’s', () => {
  const text = section(read('docs/dispatch-loop.md'), "### Failures that are not the contact's");
  const rows = tableRows(text);

  /** The waits before each try after the first, as the dispatcher computes them (`#tryAgain`). */
  const waits = (baseMs: number) => Array.from({ length: MAX_TRANSPORT_ATTEMPTS - 1 }, (_, k) => Math.min(baseMs * 2 ** k, Math.max(baseMs, MAX_BACKOFF_MS)));

  it('states the bound for every base the table uses', () => {
    const bases = new Set<number>();
    for (const e of CHANNEL_ERRORS) {
      if (e.action.kind === 'transport') bases.add(e.action.backoffMs);
      if (e.action.kind === 'recipient-wait') bases.add(e.action.waitMs);
    }
    for (const t of Object.values(TRANSPORT_FAILURES)) if (t.action.kind === 'transport') bases.add(t.action.backoffMs);
    const stated = rows.map((r) => Number(/^(\d+) s$/.exec(r[0]!)?.[1]) * 1000);
    expect(stated.sort((a, b) => a - b)).toEqual([...bases].sort((a, b) => a - b));
  });

  it('writes each wait and their sum as the dispatcher computes them', () => {
    const wrong: string[] = [];
    for (const row of rows) {
      const base = Number(/^(\d+) s$/.exec(row[0]!)![1]) * 1000;
      const expected = waits(base);
      const listed = row[2]!.split(',').map((w) => Number(w.trim()));
      if (listed.join(',') !== expected.map((w) => w / 1000).join(',')) wrong.push(`${row[0]}: the page lists ${row[2]}, the dispatcher waits ${expected.map((w) => w / 1000).join(', ')} s`);
      const total = Number(/^([\d,]+) s\b/.exec(row[3]!)?.[1]?.replace(/,/g, ''));
      const sum = expected.reduce((a, b) => a + b, 0) / 1000;
      if (total !== sum) wrong.push(`${row[0]}: the page says ${row[3]}, the waits sum to ${sum} s`);
    }
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(wrong).toEqual([]);
    expect(text).toContain(`${MAX_TRANSPORT_ATTEMPTS} tries`);
  });
});
