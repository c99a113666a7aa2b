/**
 * The dispatch loop: contacts per second through submit -> poll -> report sent -> outcomes taken,
 * with 1 and with 100 concurrent campaigns on one pool of 100 numbers, through both APIs:
 *
 * - objects: `poll()` hands out one object per message, `report(messageId)`, `takeOutcomes()`;
 * - batch: `pollInto(batch)` fills reusable typed arrays, `reportAt(batch, i)`,
 *   `takeOutcomesInto(rows)`: no object per message or outcome.
 *
 * Each API's cases run in interleaved rounds (bench/paired.ts); the batch cases first, then the
 * object cases, in the same process (interleaved with them, the batch rounds paid for collecting
 * the object API's garbage). Contacts are built before the timed
 * window (they are the caller's objects). Ample capacity: the amortised figure; bench/limits.bench.ts
 * has the loop where the limits bind.
 */
import { ManualClock, createEngine } from '../src/index.js';
import { BUSINESS, TYPE, makeFleet } from './fleets.js';
import { makeContacts } from './dispatch-api.js';
import type { Result } from './harness.js';
import { loadNote } from './load.js';
import { PAIRED_FULL, PAIRED_QUICK, type PairedCase, runPaired } from './paired.js';

export interface DispatchOptions {
  readonly numbers: number;
  readonly contactsPerIteration: number;
  readonly campaigns: readonly number[];
  readonly quick: boolean;
  readonly filter?: string | undefined;
  readonly log?: (line: string) => void;
}

type Api = 'objects' | 'batch';

const SENT = { status: 'sent' } as const;

/** One round of the loop on its own engine: every contact submitted, handed out, reported sent. */
function loopCase(api: Api, numbers: number, campaigns: number, contactsPerRound: number): PairedCase {
  const clock = new ManualClock(0);
  const engine = createEngine(makeFleet({ numbers, templates: 1 }), { clock });
  const per = Math.max(1, Math.floor(contactsPerRound / campaigns));
  const total = per * campaigns;
  const contacts = makeContacts(total);
  const slices = Array.from({ length: campaigns }, (_, c) => contacts.slice(c * per, (c + 1) * per));
  const batch = engine.createMessageBatch(10_000);
  const rows = engine.createOutcomeBatch();
  const run = (): void => {
    clock.advance(1);
    for (let c = 0; c < campaigns; c++) engine.submit({ businessId: BUSINESS, typeId: TYPE, campaignId: c + 1, contacts: slices[c]! });
    let out = 0;
    for (let guard = 0; out < total && guard < 1_000; guard++) {
      if (api === 'objects') {
        const messages = engine.poll({ limit: 10_000 });
        for (const m of messages) engine.report(m.messageId, SENT);
        out += messages.length;
        if (messages.length === 0) clock.advance(1);
      } else {
        const n = engine.pollInto(batch);
        for (let i = 0; i < n; i++) engine.reportAt(batch, i, SENT);
        out += n;
        if (n === 0) clock.advance(1);
      }
    }
    const ended = api === 'objects' ? engine.takeOutcomes().length : engine.takeOutcomesInto(rows);
    if (out !== total || ended !== total) throw new Error(`${api}: handed out ${out} and ended ${ended} of ${total}`);
  };
  return { id: idOf(api, numbers, campaigns), ops: total, run };
}

function idOf(api: Api, numbers: number, campaigns: number): string {
  return `dispatch ${api} n=${numbers} campaigns=${campaigns}`;
}

export function dispatchBenchmarks(options: DispatchOptions): Result[] {
  const log = options.log ?? (() => {});
  const timing = options.quick ? PAIRED_QUICK : PAIRED_FULL;
  const results: Result[] = [];
  // The batch cases first, then the object cases: interleaved with the object API, the batch
  // rounds paid for collecting its garbage (a million objects a second) and read half as fast.
  const speeds = new Map<string, number>();
  for (const api of ['batch', 'objects'] as const) {
    const cases = options.campaigns
      .map((campaigns) => ({ id: idOf(api, options.numbers, campaigns), campaigns }))
      .filter((c) => options.filter === undefined || c.id.includes(options.filter))
      .map((c) => loopCase(api, options.numbers, c.campaigns, options.contactsPerIteration));
    if (cases.length === 0) continue;
    const paired = runPaired(cases, timing);
    for (const c of cases) {
      const ops = paired.opsPerSecond.get(c.id)!;
      speeds.set(c.id, ops);
      const campaigns = c.id.split(' ').pop()!;
      const batchOps = speeds.get(c.id.replace(' objects ', ' batch '));
      const ratio = api === 'objects' && batchOps !== undefined ? batchOps / ops : undefined;
      results.push({
        id: c.id,
        group: 'dispatch',
        subject: 'sendpool',
        path: api === 'batch' ? 'submit+pollInto+reportAt+takeOutcomesInto' : 'submit+poll+report+takeOutcomes',
        numbers: options.numbers,
        scenario: campaigns,
        opsPerSecond: Math.round(ops),
        microsPerOp: Number((1e6 / ops).toPrecision(4)),
        samples: paired.rounds,
        note: `median of ${paired.rounds} interleaved rounds; ${loadNote(paired.load)}${ratio === undefined ? '' : `; the batch API x${ratio.toFixed(2)} (measured just before)`}`,
      });
      log(`${c.id}: ${(ops / 1e6).toFixed(2)} M contacts/s`);
    }
  }
  return results;
}
