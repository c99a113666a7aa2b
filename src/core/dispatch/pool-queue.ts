/**
 * The waiting contacts of one (business, template type), fair across campaigns.
 *
 * Contacts of one campaign form a *flow* (a submission without a campaign is a flow of its own).
 * Flows are served by deficit round-robin: each active flow in turn sends up to its `weight`
 * contacts, so a large campaign cannot starve a small one submitted after it: with weights 1 and
 * k active flows, a flow of s contacts is done within s x k hand-outs.
 *
 * A flow lists submission records, not contacts: `returning` holds the records with contacts that
 * came back (served first, in the order they came back), `fresh` the records with contacts never
 * handed out (in submission order). The invariant, kept by every operation here and checked by the
 * model test:
 * - a record is in `fresh` exactly when `freshQueued > 0`, in `returning` exactly when
 *   `backQueued > 0`, and only in the flow of its own campaign in the queue of its own
 *   (business, type); records are objects and never recycled, so an entry cannot come to mean
 *   another submission;
 * - `flow.count` is the sum of its records' queued contacts, `queue.ready` the sum over flows;
 * - a record with nothing queued (finished, expired, all in flight) is in no ring.
 */
import { Ring } from './ring.js';
import { QUEUED, type RecordQueue, type SubmissionRecord } from './record.js';
import type { Blocker } from './types.js';

export class Flow {
  readonly key: string;
  readonly weight: number;
  readonly returning = new Ring<SubmissionRecord>();
  readonly fresh = new Ring<SubmissionRecord>();
  /** Queued contacts of the flow. */
  count = 0;
  active = false;

  constructor(key: string, weight: number) {
    this.key = key;
    this.weight = weight;
  }
}

/** Reports a broken invariant found at run time (a bug), instead of throwing inside `poll`. */
export type AnomalyReporter = (message: string) => void;

export class PoolQueue implements RecordQueue {
  readonly businessId: number;
  readonly typeId: number;
  readonly flows = new Map<string, Flow>();
  /** Flows with queued contacts, in service order. */
  readonly active: Flow[] = [];
  cursor = 0;
  /** Contacts the flow at `cursor` may still send in its turn. */
  quota = 0;
  /** Queued contacts over all flows. */
  ready = 0;
  /** Contacts of this queue waiting for their retry time. */
  waiting = 0;
  /** Clock time before which polling this queue cannot hand anything out (0: look now). */
  wakeAt = 0;
  blocked: Blocker | undefined;
  retryAt: number | undefined;
  /** Contact index of the record last returned by `next`. */
  index = -1;
  readonly #anomaly: AnomalyReporter;

  constructor(businessId: number, typeId: number, anomaly: AnomalyReporter) {
    this.businessId = businessId;
    this.typeId = typeId;
    this.#anomaly = anomaly;
  }

  // ------------------------------------------------------------ entering

  /**
   * Queues a record's contacts that were never handed out (from `record.fresh` on): after the
   * flow's others, or with `ahead` before them (work taken over from a host that stopped).
   */
  addFresh(record: SubmissionRecord, count: number, ahead = false): void {
    if (count === 0) return;
    const flow = this.#flowOf(record);
    record.freshQueued += count;
    if (!record.inFresh) {
      record.inFresh = true;
      if (ahead) flow.fresh.pushFront(record);
      else flow.fresh.pushBack(record);
    }
    this.#added(flow, count);
  }

  /** Queues contact `index` of `record` again, ahead of contacts never handed out. */
  addBack(record: SubmissionRecord, index: number): void {
    const flow = this.#flowOf(record);
    if (record.back === undefined) record.back = [];
    record.back.push(index);
    record.backQueued++;
    if (!record.inReturning) {
      record.inReturning = true;
      flow.returning.pushBack(record);
    }
    this.#added(flow, 1);
  }

  // ------------------------------------------------------------ leaving

  /** Queued contact `index` ends without being handed out (a late report settled it). */
  removeOne(record: SubmissionRecord, index: number): void {
    const flow = this.flows.get(record.flowKey);
    if (index >= record.fresh) {
      record.freshQueued--;
      if (record.freshQueued === 0) this.#leaveFresh(flow, record);
    } else {
      // Its index stays in `back` until reached, where it is skipped: the contact is final now.
      record.backQueued--;
      if (record.backQueued === 0) this.#leaveReturning(flow, record);
    }
    this.#removed(flow, 1);
  }

  /** Every queued contact of `record` leaves (its deadline passed, its type left the fleet). */
  removeAll(record: SubmissionRecord): void {
    const n = record.freshQueued + record.backQueued;
    if (n === 0) return;
    const flow = this.flows.get(record.flowKey);
    record.freshQueued = 0;
    record.backQueued = 0;
    this.#leaveFresh(flow, record);
    this.#leaveReturning(flow, record);
    this.#removed(flow, n);
  }

  // ------------------------------------------------------------ serving

  /**
   * The next queued contact in fair order: its record, with the contact's index in `this.index`;
   * undefined when none is queued. The contact is no longer counted here: the caller moves it on.
   */
  next(): SubmissionRecord | undefined {
    while (this.active.length > 0) {
      if (this.cursor >= this.active.length) this.cursor = 0;
      const flow = this.active[this.cursor]!;
      const record = flow.count > 0 ? this.#take(flow) : undefined;
      if (record === undefined) {
        if (flow.count > 0) {
          this.#anomaly(`queue ${this.businessId}/${this.typeId}, flow ${flow.key}: counted ${flow.count} queued contacts, found none; recounted`);
          this.ready -= flow.count;
          flow.count = 0;
        }
        this.#retire(flow);
        continue;
      }
      if (this.quota === 0) this.quota = flow.weight;
      flow.count--;
      this.ready--;
      this.quota--;
      if (flow.count === 0) this.#retire(flow);
      else if (this.quota === 0) this.cursor++;
      return record;
    }
    return undefined;
  }

  /** Takes the flow's next queued contact: one that came back first, else the next fresh one. */
  #take(flow: Flow): SubmissionRecord | undefined {
    for (let record = flow.returning.peek(); record !== undefined; record = flow.returning.peek()) {
      const back = record.back!;
      while (record.backHead < back.length) {
        const index = back[record.backHead++]!;
        if (record.state[index] !== QUEUED) continue; // settled while it waited
        record.backQueued--;
        if (record.backQueued === 0) this.#leaveReturning(flow, record);
        else if (record.backHead >= 64 && record.backHead * 2 >= back.length) {
          back.splice(0, record.backHead);
          record.backHead = 0;
        }
        this.index = index;
        return record;
      }
      this.#anomaly(`${record.id}: counted ${record.backQueued} contacts back in the queue, found none; recounted`);
      flow.count -= record.backQueued;
      this.ready -= record.backQueued;
      record.backQueued = 0;
      this.#leaveReturning(flow, record);
    }
    for (let record = flow.fresh.peek(); record !== undefined; record = flow.fresh.peek()) {
      const state = record.state;
      const n = state.length;
      let i = record.fresh;
      while (i < n && state[i] !== QUEUED) i++;
      if (i < n) {
        record.fresh = i + 1;
        record.freshQueued--;
        if (record.freshQueued === 0) this.#leaveFresh(flow, record);
        this.index = i;
        return record;
      }
      record.fresh = n;
      this.#anomaly(`${record.id}: counted ${record.freshQueued} fresh contacts, found none; recounted`);
      flow.count -= record.freshQueued;
      this.ready -= record.freshQueued;
      record.freshQueued = 0;
      this.#leaveFresh(flow, record);
    }
    return undefined;
  }

  // ------------------------------------------------------------ bookkeeping

  #flowOf(record: SubmissionRecord): Flow {
    let flow = this.flows.get(record.flowKey);
    if (!flow) {
      flow = new Flow(record.flowKey, record.weight);
      this.flows.set(record.flowKey, flow);
    }
    return flow;
  }

  #added(flow: Flow, count: number): void {
    flow.count += count;
    this.ready += count;
    if (!flow.active) {
      flow.active = true;
      this.active.push(flow);
    }
  }

  #removed(flow: Flow | undefined, count: number): void {
    this.ready -= count;
    if (!flow) return;
    flow.count -= count;
    if (flow.count === 0) this.#retire(flow);
  }

  #leaveFresh(flow: Flow | undefined, record: SubmissionRecord): void {
    if (!record.inFresh) return;
    record.inFresh = false;
    if (flow && flow.fresh.peek() === record) flow.fresh.shift();
    else flow?.fresh.remove(record);
  }

  #leaveReturning(flow: Flow | undefined, record: SubmissionRecord): void {
    record.back = undefined;
    record.backHead = 0;
    if (!record.inReturning) return;
    record.inReturning = false;
    if (flow && flow.returning.peek() === record) flow.returning.shift();
    else flow?.returning.remove(record);
  }

  /** A flow with nothing queued leaves the service order and is forgotten. */
  #retire(flow: Flow): void {
    if (flow.active) {
      flow.active = false;
      const at = this.active.indexOf(flow);
      this.active.splice(at, 1);
      // The flow after it moves into its place: a new turn starts there.
      if (at < this.cursor) this.cursor--;
      else if (at === this.cursor) this.quota = 0;
    }
    if (flow.returning.size > 0 || flow.fresh.size > 0) {
      this.#anomaly(`queue ${this.businessId}/${this.typeId}, flow ${flow.key}: records listed with nothing queued`);
      for (const r of [...flow.returning.toArray(), ...flow.fresh.toArray()]) {
        r.inFresh = false;
        r.inReturning = false;
        r.back = undefined;
      }
    }
    this.flows.delete(flow.key);
  }

  // ------------------------------------------------------------ snapshots

  /** Flows in service order (from the one served next), each with its records' order. */
  exportOrder(): { key: string; weight: number; returning: SubmissionRecord[]; fresh: SubmissionRecord[] }[] {
    const order = [...this.active.slice(this.cursor), ...this.active.slice(0, this.cursor)];
    return order.map((f) => ({ key: f.key, weight: f.weight, returning: f.returning.toArray(), fresh: f.fresh.toArray() }));
  }
}
