/**
 * The dispatch loop: contacts per second through submit -> poll (-> report sent), with 1 and with
 * 100 concurrent campaigns on one pool of 100 numbers with ample capacity.
 *
 * SLOT: `engine.submit` / `engine.poll` are being written in src/core. When they do not exist the
 * runner prints a note and skips this group; when they exist but fail (API still moving), the
 * error is printed and the group is skipped. Contacts are built before the timed window (they are
 * the caller's objects).
 */
import { BUSINESS, TYPE } from './fleets.js';
import { buildEngine, fmt } from './assign.bench.js';
import { dispatchOf, makeContacts } from './dispatch-api.js';
import { fromMeasured, measure, type Result, type Timing } from './harness.js';

export interface DispatchOptions {
  readonly numbers: number;
  readonly contactsPerIteration: number;
  readonly campaigns: readonly number[];
  readonly timing: Timing;
  readonly filter?: string | undefined;
  readonly log?: (line: string) => void;
}

export async function dispatchBenchmarks(options: DispatchOptions): Promise<Result[]> {
  const log = options.log ?? (() => {});
  const results: Result[] = [];
  for (const campaigns of options.campaigns) {
    const id = `dispatch submit+poll n=${options.numbers} campaigns=${campaigns}`;
    if (options.filter !== undefined && !id.includes(options.filter)) continue;
    const b = buildEngine({ numbers: options.numbers, templates: 1 });
    const d = dispatchOf(b.engine);
    if (typeof d === 'string') {
      results.push({ id, group: 'dispatch', subject: 'sendpool', numbers: options.numbers, note: d });
      log(`${id}: ${d}`);
      continue;
    }
    const per = Math.max(1, Math.floor(options.contactsPerIteration / campaigns));
    const total = per * campaigns;
    const contacts = makeContacts(total);
    const slices = Array.from({ length: campaigns }, (_, c) => contacts.slice(c * per, (c + 1) * per));
    const round = (): void => {
      b.clock.advance(1);
      for (let c = 0; c < campaigns; c++) d.submit({ businessId: BUSINESS, typeId: TYPE, campaignId: c + 1, contacts: slices[c]! });
      let out = 0;
      for (let guard = 0; out < total && guard < 1_000; guard++) {
        const batch = d.poll({ limit: 10_000 });
        if (batch.length === 0) b.clock.advance(1);
        if (d.report) for (const m of batch) d.report(m.messageId, { status: 'sent' });
        out += batch.length;
      }
      if (out !== total) throw new Error(`poll handed out ${out} of ${total}`);
      d.takeOutcomes?.();
    };
    try {
      const m = await measure(id, total, round, options.timing);
      results.push(fromMeasured({ id, group: 'dispatch', subject: 'sendpool', path: 'submit+poll+report', numbers: options.numbers, scenario: `${campaigns} campaigns` }, m));
      log(`${id}: ${fmt(m.opsPerSecond)} contacts/s`);
    } catch (error) {
      const note = `skipped: the dispatch API failed (${error instanceof Error ? error.message : String(error)})`;
      results.push({ id, group: 'dispatch', subject: 'sendpool', numbers: options.numbers, note });
      log(`${id}: ${note}`);
    }
  }
  return results;
}
