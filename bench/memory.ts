/**
 * Memory: bytes per number held by an engine at 100,000 numbers (and bytes per queued contact at
 * 1,000,000 queued, once `engine.submit` exists).
 *
 * Needs `--expose-gc`; the runner starts it as a child process:
 *   node --expose-gc --import tsx bench/memory.ts [--numbers 100000] [--contacts 1000000]
 * and reads one JSON line from its standard output.
 *
 * Method: forced GC, heap + external (typed arrays' backing stores) before; build the fleet
 * description inside a function, create the engine and make one round of assignments (so every
 * number's limit state is touched), let the description go; forced GC, measure again. The
 * difference is what the engine retains; the caller's description objects are not in it (phone
 * strings the engine keeps are).
 */
import { ManualClock, createEngine, type Engine } from '../src/index.js';
import { BUSINESS, TYPE, makeFleet } from './fleets.js';
import { dispatchOf, makeContacts } from './dispatch-api.js';

export interface MemoryReport {
  readonly numbers: number;
  readonly templates: number;
  /** The caller keeps its fleet description (the engine shares its phone strings). */
  readonly bytesPerNumber: number | null;
  /** The caller drops its fleet description after `createEngine` (as the server does). */
  readonly bytesPerNumberAlone: number | null;
  readonly totalBytes: number | null;
  readonly gc: boolean;
  readonly contacts: number;
  /** The caller keeps its contact objects. */
  readonly bytesPerQueuedContact: number | null;
  /** The caller drops its contacts after `submit` (as the server does): what the engine itself holds. */
  readonly bytesPerQueuedContactAlone: number | null;
  readonly note: string;
}

function collect(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) for (let i = 0; i < 4; i++) g();
}

function used(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * Builds and warms an engine on a fleet description the caller keeps, as a host does: the
 * description (and the phone strings the engine shares with it) is the caller's, like its contact
 * objects, and is not counted.
 */
function buildAndWarm(fleet: ReturnType<typeof makeFleet>, numbers: number): Engine {
  const clock = new ManualClock(0);
  const engine = createEngine(fleet, { clock });
  const count = numbers;
  const out = new Int32Array(count);
  const outT = new Float64Array(count);
  engine.assignInto(BUSINESS, TYPE, count, out, outT);
  return engine;
}

export function measureMemory(numbers: number, templates: number, contacts: number): MemoryReport {
  const gc = typeof (globalThis as { gc?: unknown }).gc === 'function';
  // Once first, so no figure carries what the first engine of a process allocates once (compiled
  // code, caches): it read about 30 bytes a number higher for whichever case ran first.
  buildAndWarm(makeFleet({ numbers: 1_000, templates }), 1_000);
  measureQueued(1_000);
  const fleet = makeFleet({ numbers, templates });
  collect();
  const before = used();
  const engine = buildAndWarm(fleet, numbers);
  collect();
  const after = used();
  const total = after - before;
  // Keep the engine and the caller's fleet alive until after the measurement.
  if (engine.phones().length !== numbers || fleet.businesses.length === 0) throw new Error('engine lost numbers');
  const alone = measureAlone(numbers, templates);
  const queued = measureQueued(contacts);
  const queuedAlone = measureQueued(contacts, false);
  const note = queued.note;
  return {
    numbers,
    templates,
    bytesPerNumber: gc ? Math.round(total / numbers) : null,
    bytesPerNumberAlone: gc ? alone : null,
    totalBytes: gc ? total : null,
    gc,
    contacts,
    bytesPerQueuedContact: gc ? queued.bytesPerContact : null,
    bytesPerQueuedContactAlone: gc ? queuedAlone.bytesPerContact : null,
    note: gc ? note : `no --expose-gc: figures omitted; ${note}`,
  };
}

/**
 * Bytes per number of an engine whose caller dropped the fleet description after building it, the
 * description read from JSON as a host reads its fleet file (flat strings, as the engine keeps them).
 */
function measureAlone(numbers: number, templates: number): number {
  const text = JSON.stringify(makeFleet({ numbers, templates }));
  collect();
  const before = used();
  const engine = buildAndWarm(JSON.parse(text) as ReturnType<typeof makeFleet>, numbers);
  collect();
  const after = used();
  // The text stays alive until here, so its collection does not count against the engine.
  if (engine.phones().length !== numbers || text.length === 0) throw new Error('engine lost numbers');
  return Math.round((after - before) / numbers);
}

/**
 * SLOT: bytes per queued contact, `contacts` queued through `engine.submit` on a pool of 100
 * numbers, the contact objects built before the first measurement (they are the caller's).
 * Skipped with a note while `engine.submit` does not exist or fails.
 */
export function measureQueued(contacts: number, callerKeeps = true): { bytesPerContact: number | null; note: string } {
  const clock = new ManualClock(0);
  const engine = createEngine(makeFleet({ numbers: 100, templates: 1 }), { clock });
  const d = dispatchOf(engine);
  if (typeof d === 'string') return { bytesPerContact: null, note: `per queued contact: ${d}` };
  // A caller that keeps nothing makes each chunk's contacts just before its submit.
  const list = callerKeeps ? makeContacts(contacts) : [];
  try {
    collect();
    const before = used();
    const chunk = 10_000;
    let accepted = 0;
    for (let i = 0; i < contacts; i += chunk) {
      const slice = callerKeeps ? list.slice(i, i + chunk) : makeContacts(Math.min(chunk, contacts - i), i);
      accepted += d.submit({ businessId: BUSINESS, typeId: TYPE, campaignId: 1, contacts: slice }).accepted;
    }
    collect();
    const after = used();
    if (accepted !== contacts) return { bytesPerContact: null, note: `per queued contact: submit accepted ${accepted} of ${contacts}` };
    if (callerKeeps && list.length !== contacts) throw new Error('contacts lost');
    // The slices passed to submit are arrays of references the engine may keep: 8 bytes a contact at most.
    return { bytesPerContact: Math.round((after - before) / contacts), note: `per queued contact: ${contacts} queued through engine.submit in chunks of ${chunk}` };
  } catch (error) {
    return { bytesPerContact: null, note: `per queued contact: skipped, engine.submit failed (${error instanceof Error ? error.message : String(error)})` };
  }
}
