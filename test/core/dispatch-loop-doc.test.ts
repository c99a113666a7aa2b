/** The host loop of docs/dispatch-loop.md, run as written against a simulated channel. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock, createEngine, type OutgoingMessage, type SendOutcome } from 'sendpool';
import { runDispatchLoop } from '../../examples/dispatch-loop.js';
import { specFleet } from './arbitraries.js';

const root = resolve(import.meta.dirname, '../..');

describe('docs/dispatch-loop.md', () => {
  it('shows examples/dispatch-loop.ts verbatim', () => {
    const doc = readFileSync(resolve(root, 'docs/dispatch-loop.md'), 'utf8');
    const code = readFileSync(resolve(root, 'examples/dispatch-loop.ts'), 'utf8').trimEnd();
    expect(doc).toContain(code);
  });

  it('runs until every contact is accounted for, through a template pause and retries', async () => {
    const clock = new ManualClock(0);
    const engine = createEngine(specFleet(), { clock });
    const contacts = Array.from({ length: 5000 }, (_, i) => ({ phone: String(5511970000000 + i), variables: ['Ana', 'R$ 1'] }));
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, maxRetries: 2, retryInterval: 60_000, contacts });
    let calls = 0;
    let pausedAt = -1;
    let pausedTemplate = -1;
    const usedWhilePaused: number[] = [];
    const channel = async (m: OutgoingMessage): Promise<SendOutcome> => {
      calls++;
      // The first batch (1,000, all handed out before the pause was reported) does not count.
      if (pausedAt >= 0 && calls > 1000 && clock.now() < pausedAt + 3 * 3_600_000 && m.templateId === pausedTemplate) usedWhilePaused.push(calls);
      if (calls === 10) {
        pausedAt = clock.now();
        pausedTemplate = m.templateId;
        return { status: 'failed', code: 132015 }; // the platform paused this template
      }
      if (calls % 97 === 0) throw new Error('connection reset');
      return { status: 'sent' };
    };
    await runDispatchLoop(engine, channel, async (t) => void clock.set(t));
    const s = engine.stats();
    expect(s).toMatchObject({ submitted: 5000, sent: 5000, queued: 0, inFlight: 0, waitingRetry: 0 });
    expect(pausedAt).toBe(0);
    expect(usedWhilePaused).toEqual([]); // later messages went through the other template
    expect(calls).toBeGreaterThan(5000); // the failover and the retries were sent again
    // 3,000 at once (full buckets), the other 2,000 and the re-sends at 3,000/h: just over 40 minutes.
    expect(clock.now()).toBeGreaterThan(2_400_000);
  });
});
