/** Forecast and simulation agree within 1 % on completion time for the same inputs. */
import { describe, expect, it } from 'vitest';
import { json } from './helpers.js';

const CASES: { name: string; args: string[] }[] = [
  { name: 'example fleet, Acme billing, 30,000 (24 h limits bind at the end)', args: ['examples/fleet.json', '-b', '1', '-t', '10', '-n', '30000'] },
  { name: 'example fleet, Acme billing, 100,000 (several days of 24 h limits)', args: ['examples/fleet.json', '-b', '1', '-t', '10', '-n', '100000'] },
  { name: 'example fleet, Globex alerts (per-second burst, then 24 h limit)', args: ['examples/fleet.json', '-b', '2', '-t', '10', '-n', '5000'] },
  { name: 'mixed limits, a paused number', args: ['test/cli/fixtures/fleet-mixed.json', '-b', '3', '-t', '30', '-n', '20000'] },
  { name: 'twelve numbers out of phase', args: ['test/cli/fixtures/fleet-day.json', '-b', '7', '-t', '70', '-n', '200000'] },
  {
    name: 'what-if events file',
    args: ['examples/fleet.json', '-b', '1', '-t', '10', '-n', '40000', '--events', 'examples/events-what-if.json'],
  },
  {
    name: 'what-if shortcuts: pause a number at 30m, resume it at 2h',
    args: ['examples/fleet.json', '-b', '1', '-t', '10', '-n', '20000', '--pause-number', '5511990000001@30m', '--resume-number', '5511990000001@2h'],
  },
];

describe('forecast and simulate agree', () => {
  it.each(CASES)('$name', ({ args }) => {
    const f = json('forecast', ...args);
    const s = json('simulate', ...args);
    expect(f.completed).toBe(true);
    expect(s.completed).toBe(true);
    const diff = Math.abs(f.completionMs - s.completionMs) / Math.max(1, s.completionMs);
    expect(diff).toBeLessThanOrEqual(0.01);
    // The simulation reports the same comparison.
    expect(s.forecastCompletionMs).toBe(f.completionMs);
    // Per number, what each sends agrees too (within 1 % of the total).
    const total = s.messages as number;
    for (const n of s.numbers as { phone: string; sent: number }[]) {
      const fn = (f.numbers as { phone: string; sent: number }[]).find((x) => x.phone === n.phone)!;
      expect(Math.abs(fn.sent - n.sent)).toBeLessThanOrEqual(Math.ceil(total * 0.01));
    }
    expect((s.numbers as { sent: number }[]).reduce((a, n) => a + n.sent, 0)).toBe(total);
  });

  it('the 24 h limit is used up at the same moment in both', () => {
    const args = ['examples/fleet.json', '-b', '1', '-t', '10', '-n', '30000'];
    const f = json('forecast', ...args);
    const s = json('simulate', ...args);
    expect(f.numbers.map((n: { ranOutAtMs: number }) => n.ranOutAtMs)).toEqual(s.numbers.map((n: { ranOutAtMs: number }) => n.ranOutAtMs));
    expect(f.completionMs).toBe(9 * 3_600_000);
  });
});
