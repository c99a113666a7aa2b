/**
 * Where the limits bind: numbers at a realistic rate (80 messages a second, the chat channel's
 * default), the clock moving 10 ms between calls, so every call wakes numbers from the waiting heap
 * and hands out what their windows allow (about 0.8 messages a number). Beside each, the amortised
 * case (ample capacity, numbers never leave the ring) in the same interleaved rounds.
 *
 * - assign: `assignInto` until 80,000 assignments (one simulated second of 1,000 numbers);
 * - dispatch: the batch loop (submit, pollInto, reportAt, takeOutcomesInto) of 8,000 contacts
 *   (one simulated second of 100 numbers).
 */
import { ManualClock, createEngine, type Engine } from '../src/index.js';
import { AMPLE_PER_24H, AMPLE_PER_HOUR, BUSINESS, TYPE, makeFleet } from './fleets.js';
import { makeContacts } from './dispatch-api.js';
import type { Result } from './harness.js';
import { loadNote } from './load.js';
import { PAIRED_FULL, PAIRED_QUICK, type PairedCase, pairedRatio, runPaired } from './paired.js';

const PER_SECOND = 80;
const STEP_MS = 10;
const SENT = { status: 'sent' } as const;

/** An engine over `numbers` numbers at 80 a second (and an hour's and a day's limits above that), or ample. */
function engineOf(numbers: number, bound: boolean): { engine: Engine; clock: ManualClock } {
  const generated = makeFleet({ numbers, templates: 1 });
  const limits = bound
    ? { messagesPerSecond: PER_SECOND, throughputPerHour: PER_SECOND * 3600, messagingLimit24h: PER_SECOND * 86_400 }
    : { throughputPerHour: AMPLE_PER_HOUR, messagingLimit24h: AMPLE_PER_24H };
  const business = generated.businesses[0]!;
  const fleet = { ...generated, businesses: [{ ...business, numbers: business.numbers.map((n) => ({ ...n, ...limits })) }] };
  const clock = new ManualClock(0);
  return { engine: createEngine(fleet, { clock }), clock };
}

function assignCase(numbers: number, bound: boolean): PairedCase {
  const { engine, clock } = engineOf(numbers, bound);
  const want = numbers * PER_SECOND;
  const batch = 10_000;
  const out = new Int32Array(batch);
  const templates = new Float64Array(batch);
  const run = (): void => {
    let got = 0;
    for (let guard = 0; got < want && guard < 100_000; guard++) {
      const r = engine.assignInto(BUSINESS, TYPE, Math.min(batch, want - got), out, templates);
      got += r.count;
      if (r.count < Math.min(batch, want - got + r.count)) clock.advance(STEP_MS);
    }
    if (got !== want) throw new Error(`assigned ${got} of ${want}`);
    clock.advance(STEP_MS);
  };
  return { id: `limits assign ${bound ? 'bound' : 'amortised'} n=${numbers}`, ops: want, run };
}

function dispatchCase(numbers: number, bound: boolean): PairedCase {
  const { engine, clock } = engineOf(numbers, bound);
  const total = numbers * PER_SECOND;
  const contacts = makeContacts(total);
  const batch = engine.createMessageBatch(10_000);
  const rows = engine.createOutcomeBatch();
  const run = (): void => {
    engine.submit({ businessId: BUSINESS, typeId: TYPE, campaignId: 1, contacts });
    let out = 0;
    for (let guard = 0; out < total && guard < 100_000; guard++) {
      const n = engine.pollInto(batch);
      for (let i = 0; i < n; i++) engine.reportAt(batch, i, SENT);
      out += n;
      if (out < total) {
        // Asleep until the engine says more can go: waking from the heap, as a host's timer would.
        const at = engine.nextWakeAt();
        clock.set(Math.max(clock.now() + 1, at ?? clock.now() + STEP_MS));
      }
    }
    const ended = engine.takeOutcomesInto(rows);
    if (out !== total || ended !== total) throw new Error(`handed out ${out}, ended ${ended} of ${total}`);
    clock.advance(STEP_MS);
  };
  return { id: `limits dispatch ${bound ? 'bound' : 'amortised'} n=${numbers}`, ops: total, run };
}

export function limitsBenchmarks(options: { readonly quick: boolean; readonly filter?: string | undefined; readonly log?: (line: string) => void }): Result[] {
  const assignNumbers = options.quick ? 50 : 1_000;
  const dispatchNumbers = options.quick ? 10 : 100;
  const cases = [assignCase(assignNumbers, true), assignCase(assignNumbers, false), dispatchCase(dispatchNumbers, true), dispatchCase(dispatchNumbers, false)].filter(
    (c) => options.filter === undefined || c.id.includes(options.filter),
  );
  if (cases.length === 0) return [];
  const paired = runPaired(cases, options.quick ? PAIRED_QUICK : PAIRED_FULL);
  return cases.map((c) => {
    const ops = paired.opsPerSecond.get(c.id)!;
    const amortised = c.id.replace(' bound ', ' amortised ');
    const ratio = c.id.includes(' bound ') && paired.seconds.has(amortised) ? pairedRatio(paired, c.id, amortised) : undefined;
    options.log?.(`${c.id}: ${(ops / 1e6).toFixed(2)} M/s${ratio === undefined ? '' : ` (x${ratio.toFixed(2)} amortised)`}`);
    return {
      id: c.id,
      group: c.id.includes(' assign ') ? 'assign' : 'dispatch',
      subject: 'sendpool',
      path: c.id.includes(' assign ') ? 'assignInto' : 'submit+pollInto+reportAt+takeOutcomesInto',
      opsPerSecond: Math.round(ops),
      microsPerOp: Number((1e6 / ops).toPrecision(4)),
      samples: paired.rounds,
      note: `median of ${paired.rounds} interleaved rounds; ${loadNote(paired.load)}${ratio === undefined ? '' : `; x${ratio.toFixed(2)} the amortised case in the same rounds`}`,
    } satisfies Result;
  });
}
