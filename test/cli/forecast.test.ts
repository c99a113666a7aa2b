import { describe, expect, it } from 'vitest';
import { json, sendpool } from './helpers.js';

describe('sendpool forecast', () => {
  it('prints the schedule hour by hour and what holds each number back', () => {
    const r = sendpool('forecast', 'examples/fleet.json', '-b', '1', '-t', '10', '-n', '30000');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('Completion: 9h00m after the start (all 30,000 sent)');
    expect(r.stdout).toMatch(/^0s +1h00m +5,997 +5,997 +19\.9 % +0$/m);
    expect(r.stdout).toMatch(/^5511990000001 +1,000 +10,000 +- +10,000 +33\.3 % +9h00m +hourly 0s-9h00m, 24h 9h00m-end$/m);
  });

  it('--json: phases per number, hours, completion', () => {
    const f = json('forecast', 'examples/fleet.json', '-b', '2', '-t', '10', '-n', '5000');
    expect(f.completionMs).toBe(180_011_500);
    const n = f.numbers[0];
    // Globex: 80/s from a full bucket; its 24 h limit (2,000) equals its hourly bucket, so the
    // day's 2,000 go in the first 24 s, then the limit holds until that hour's bucket ages out.
    expect(n.phases.slice(0, 3)).toEqual([
      { limit: 'messagesPerSecond', fromMs: 0, toMs: 24_000 },
      { limit: 'messagingLimit24h', fromMs: 24_000, toMs: 25 * 3_600_000 },
      { limit: 'messagesPerSecond', fromMs: 25 * 3_600_000, toMs: 25 * 3_600_000 + 24_000 },
    ]);
    expect(n.ranOutAtMs).toBe(24_000);
    expect(f.hours[0]).toEqual({ hour: 0, fromMs: 0, sent: 2000, total: 2000, limitedBy24h: 1 });
  });

  it('groups hours when the schedule is long', () => {
    const r = sendpool('forecast', 'examples/fleet.json', '-b', '1', '-t', '10', '-n', '300000');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^By \d+ hours:$/m);
  });
});
