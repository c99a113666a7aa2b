import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileTemplate, renderCompiled, renderTemplate, scanPlaceholders } from '../../src/core/template-text.js';

const textArb = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer({ min: 1, max: 4 }).map((n) => `{{${n}}}`),
      fc.constant('{{ 2 }}'),
      fc.constant('{{x}}'),
    ),
    { maxLength: 10 },
  )
  .map((p) => p.join(''));

describe('template text', () => {
  it('compiled rendering equals regex rendering, for any text and values', () => {
    fc.assert(
      fc.property(textArb, fc.array(fc.string({ maxLength: 6 }), { maxLength: 5 }), (text, values) => {
        expect(renderCompiled(compileTemplate(text), values)).toBe(renderTemplate(text, values));
      }),
    );
  });

  it('counts contiguous placeholders and refuses gaps', () => {
    expect(scanPlaceholders('Hi {{1}}, {{2}} and {{1}} again')).toEqual({ ok: true, count: 2 });
    expect(scanPlaceholders('no placeholders')).toEqual({ ok: true, count: 0 });
    expect(scanPlaceholders('{{1}} {{3}}').ok).toBe(false);
  });

  it('leaves a placeholder without a value as written', () => {
    expect(renderTemplate('Hi {{1}} {{2}}', ['Ana'])).toBe('Hi Ana {{2}}');
  });
});

describe('placeholder bounds', () => {
  it('refuses huge placeholder numbers at once instead of listing millions of gaps', () => {
    // The answer names the bound, not the gaps: the scan stopped at the first number past it (a
    // scan listing gaps up to 30,000,000 would answer "missing …" after a long time, if ever).
    expect(scanPlaceholders('Hi {{30000000}}')).toEqual({ ok: false, expected: 'placeholders numbered from {{1}} to {{100}} (found "{{30000000}}" at character 3)' });
    expect(scanPlaceholders('{{9007199254740991}}').ok).toBe(false);
    const gaps = scanPlaceholders('{{1}} {{100}}');
    expect(gaps.ok === false && gaps.expected.endsWith('…)')).toBe(true);
  });
});

describe('placeholder grammar: {{k}} and nothing else between double braces', () => {
  it.each([
    ['Hi {{first_name}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{first_name}}" at character 3)'],
    ['Hi {{}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{}}" at character 3)'],
    ['{{x}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{x}}" at character 0)'],
    ['Hi {{ 1 }}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{ 1 }}" at character 3)'],
    ['Hi {{1 }}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{1 }}" at character 3)'],
    ['Hi {{-1}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{-1}}" at character 3)'],
    ['Hi {{1.5}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{1.5}}" at character 3)'],
    ['Hi {{1}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{1}" at character 3)'],
    ['Hi {{', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{" at character 3)'],
    ['{{1}} {{{2}}}', 'nothing but placeholders {{1}}..{{100}} between double braces (found "{{{2}}" at character 6)'],
    ['Hi {{0}}', 'placeholders numbered from {{1}} to {{100}} (found "{{0}}" at character 3)'],
    ['Hi {{01}}', 'placeholders numbered from {{1}} to {{100}}, written without leading zeros (found "{{01}}" at character 3)'],
    ['Hi {{101}}', 'placeholders numbered from {{1}} to {{100}} (found "{{101}}" at character 3)'],
    ['Hi }} there', '"}}" only as the end of a placeholder {{1}}..{{100}} (found "Hi }}" at character 3)'],
    ['Hi {{1}}}', '"}}" only as the end of a placeholder {{1}}..{{100}} (found "Hi {{1}}}" at character 7)'],
  ])('refuses %j', (text, expected) => {
    expect(scanPlaceholders(text)).toEqual({ ok: false, expected });
  });

  it('accepts single braces and placeholders side by side', () => {
    expect(scanPlaceholders('{a} {{1}}{{2}} {1} }{ {{1}}')).toEqual({ ok: true, count: 2 });
    expect(scanPlaceholders(Array.from({ length: 100 }, (_, i) => `{{${i + 1}}}`).join(''))).toEqual({ ok: true, count: 100 });
  });

  it('quotes a long offending piece cut short', () => {
    const scan = scanPlaceholders(`{{${'x'.repeat(500)}}}`);
    expect(scan.ok).toBe(false);
    if (!scan.ok) expect(scan.expected).toBe(`nothing but placeholders {{1}}..{{100}} between double braces (found "{{${'x'.repeat(38)}…" at character 0)`);
  });

  it('accepts exactly the texts whose double braces are all placeholders, and renders only those', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer({ min: 1, max: 4 }).map((n) => `{{${n}}}`),
      fc.constantFrom('{', '}', '{{', '}}', '{{ 2 }}', '{{x}}', '{{0}}', '{{01}}', '{{}}', '{{{1}}}'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const text = pieces.join('');
        // Reference: take the placeholders out; what is left must hold no double brace, and no
        // brace may touch a placeholder (that would make an overlapping "{{" or "}}").
        const literal = text.replace(/\{\{[1-9][0-9]*\}\}/g, '\u0000');
        // eslint-disable-next-line no-control-regex -- NUL marks a placeholder's boundary in the property
        const clean = !/\{\{|\}\}|\{\u0000|\u0000\}/.test(literal);
        const scan = scanPlaceholders(text);
        if (!clean) {
          expect(scan.ok).toBe(false);
          return;
        }
        const numbers = [...text.matchAll(/\{\{([1-9][0-9]*)\}\}/g)].map((m) => Number(m[1]));
        const max = Math.max(0, ...numbers);
        const contiguous = new Set(numbers).size === max;
        expect(scan).toEqual(contiguous ? { ok: true, count: max } : { ok: false, expected: expect.stringContaining('contiguous') });
        if (scan.ok) {
          const values = Array.from({ length: scan.count }, (_, i) => `\u0001${i}\u0001`);
          const rendered = renderTemplate(text, values);
          expect(rendered).not.toMatch(/\{\{|\}\}/);
          // eslint-disable-next-line no-control-regex -- \u0001 brackets a rendered value in the property
          expect(rendered.replace(/\u0001\d+\u0001/g, '\u0000')).toBe(literal);
        }
      }),
    );
  });
});
