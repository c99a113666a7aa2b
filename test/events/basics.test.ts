import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatUtcMinus3, parseDateTime } from '../../src/events/datetime.js';
import { isUuidV4, uuidV4 } from '../../src/events/uuid.js';
import { randomUnit } from '../../src/events/random.js';
import { parseFailureReason, reasonFor } from '../../src/events/failure-reason.js';
import { isArgumentError } from '../../src/core/errors.js';
import { T0, seededRandom } from './helpers.js';

describe('uuidV4', () => {
  it('sets the version and variant bits whatever the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (bytes) => {
        const id = uuidV4({ randomBytes: () => bytes });
        expect(isUuidV4(id)).toBe(true);
      }),
    );
    expect(uuidV4({ randomBytes: () => new Uint8Array(16) })).toBe('00000000-0000-4000-8000-000000000000');
    expect(uuidV4({ randomBytes: () => new Uint8Array(16).fill(255) })).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });

  it('is deterministic for a seeded source and distinct across calls', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const ids = Array.from({ length: 100 }, () => uuidV4(a));
    expect(ids).toEqual(Array.from({ length: 100 }, () => uuidV4(b)));
    expect(new Set(ids).size).toBe(100);
  });

  it('refuses a short random source', () => {
    expect(() => uuidV4({ randomBytes: () => new Uint8Array(3) })).toThrow(/16 bytes/);
  });
});

describe('formatUtcMinus3', () => {
  it('writes the -03:00 offset with the wall time three hours behind UTC', () => {
    expect(formatUtcMinus3(T0)).toBe('2025-01-01T09:00:00.000-03:00');
    expect(formatUtcMinus3(Date.UTC(2025, 0, 1, 1, 2, 3, 4))).toBe('2024-12-31T22:02:03.004-03:00');
  });

  it('round-trips to the same instant and ignores the host time zone', () => {
    const saved = process.env['TZ'];
    try {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.constantFrom('UTC', 'Asia/Tokyo', 'America/New_York'), (ms, tz) => {
          process.env['TZ'] = tz;
          const text = formatUtcMinus3(ms);
          expect(text.endsWith('-03:00')).toBe(true);
          expect(parseDateTime(text)).toBe(ms);
        }),
      );
    } finally {
      if (saved === undefined) delete process.env['TZ'];
      else process.env['TZ'] = saved;
    }
  });

  it('the same instant again (remembered) writes what a first time writes, in any order of instants', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(T0, T0 + 1, T0 + 0.5, T0 - 3_600_000, 0), { minLength: 1, maxLength: 30 }), (times) => {
        for (const ms of times) expect(formatUtcMinus3(ms)).toBe(`${new Date(Math.floor(ms) - 3 * 3_600_000).toISOString().slice(0, 23)}-03:00`);
      }),
    );
    // A time it cannot write still throws right after one it wrote.
    formatUtcMinus3(T0);
    expect(() => formatUtcMinus3(Number.NaN)).toThrow();
  });

  it('throws ArgumentError for times it cannot write', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 9e15, -62_198_755_200_000 - 1]) {
      try {
        formatUtcMinus3(bad);
        expect.unreachable();
      } catch (e) {
        expect(isArgumentError(e)).toBe(true);
      }
    }
  });
});

describe('randomUnit', () => {
  it('is in [0, 1)', () => {
    expect(randomUnit({ randomBytes: (n) => new Uint8Array(n).fill(255) })).toBeLessThan(1);
    expect(randomUnit({ randomBytes: (n) => new Uint8Array(n) })).toBe(0);
  });
});

describe('failure reasons (spec 7.1)', () => {
  it('builds "provider, code, description" from the error table', () => {
    expect(reasonFor({ code: 131026 })).toBe('WhatsApp, 131026, Message undeliverable');
    expect(reasonFor({ code: 999999 })).toBe('WhatsApp, 999999, Unknown error');
    expect(reasonFor({ code: 131026, description: 'Not on WhatsApp' })).toBe('WhatsApp, 131026, Not on WhatsApp');
    expect(reasonFor({ reason: 'Operator, 7, Gone' })).toBe('Operator, 7, Gone');
    expect(parseFailureReason('WhatsApp, 131026, Message undeliverable, really')).toEqual({
      provider: 'WhatsApp',
      code: 131026,
      description: 'Message undeliverable, really',
    });
    expect(parseFailureReason('nope')).toBeUndefined();
    expect(() => reasonFor({ reason: '' })).toThrow(/non-empty/);
    expect(() => reasonFor({ code: 1.5 })).toThrow(/integer/);
  });
});
