import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_WEBHOOK_CONFIG, WEBHOOK_URL_KEYS, mergeConfig, parseConfig } from '../../src/contract/index.js';
import type { ConfigUpdate } from '../../src/contract/index.js';
import { urlArb } from './arbitraries.js';

describe('parseConfig and mergeConfig', () => {
  it('a partial update changes only the keys given; null clears; {} changes nothing', () => {
    const current = { ...EMPTY_WEBHOOK_CONFIG, url_report_webhook: 'https://a.example.com/r', url_hsm_callback: 'https://a.example.com/h' };
    const r = parseConfig({ url_hsm_callback: null, url_campaign_webhook: 'https://b.example.com/c' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(mergeConfig(current, r.value)).toEqual({
      url_report_webhook: 'https://a.example.com/r',
      url_attendance_callback: null,
      url_hsm_callback: null,
      url_campaign_webhook: 'https://b.example.com/c',
    });
    const empty = parseConfig({});
    expect(empty.ok && mergeConfig(current, empty.value)).toEqual(current);
  });

  it('normalises URLs and checks each with the SSRF policy, listing every problem', () => {
    const r = parseConfig({ url_report_webhook: 'http://127.0.0.1/', url_hsm_callback: 5, url_attendance_callback: 'https://ok.example.com', other: 1 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path).sort()).toEqual(['$.other', '$.url_hsm_callback', '$.url_report_webhook']);
    expect(r.problems.find((p) => p.path === '$.url_hsm_callback')?.expected).toBe('a non-empty URL of at most 2048 characters or null');
    const good = parseConfig({ url_attendance_callback: 'https://OK.example.com' });
    expect(good).toEqual({ ok: true, value: { url_attendance_callback: 'https://ok.example.com/' } });
  });

  it('refuses non-objects', () => {
    for (const body of [null, [], 'x', 3]) expect(parseConfig(body)).toMatchObject({ ok: false, problems: [{ path: '$' }] });
  });

  it('every valid update parses unchanged, and merging is last-writer-wins per key', () => {
    const update: fc.Arbitrary<ConfigUpdate> = fc.record(
      Object.fromEntries(WEBHOOK_URL_KEYS.map((k) => [k, fc.option(urlArb, { nil: null })])) as Record<(typeof WEBHOOK_URL_KEYS)[number], fc.Arbitrary<string | null>>,
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(update, update, (a, b) => {
        const ra = parseConfig(a);
        const rb = parseConfig(b);
        expect(ra).toEqual({ ok: true, value: a });
        if (!ra.ok || !rb.ok) return;
        const merged = mergeConfig(mergeConfig(EMPTY_WEBHOOK_CONFIG, ra.value), rb.value);
        for (const key of WEBHOOK_URL_KEYS) expect(merged[key]).toBe(key in b ? b[key] : key in a ? a[key] : null);
      }),
    );
  });
});
