import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileTemplate, renderCompiled, renderTemplate, scanPlaceholders } from '../../src/core/template-text.js';

const textArb = fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.integer({ min: 1, max: 4 }).map((n) => `{{${n}}}`), fc.constant('{{ 2 }}'), fc.constant('{{x}}')), { maxLength: 10 }).map((p) => p.join(''));

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
    const started = performance.now();
    expect(scanPlaceholders('Hi {{30000000}}')).toEqual({ ok: false, expected: 'placeholders numbered from {{1}} to {{100}}' });
    expect(scanPlaceholders('{{9007199254740991}}').ok).toBe(false);
    const gaps = scanPlaceholders('{{1}} {{100}}');
    expect(gaps.ok === false && gaps.expected.endsWith('…)')).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000); // a guard against the old loop, not a benchmark
  });
});
