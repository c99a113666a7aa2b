/**
 * The waiting contacts of one (business, template type), fair across campaigns.
 *
 * Contacts of one campaign form a *flow* (a submission without a campaign is a flow of its own).
 * Flows are served by deficit round-robin: each active flow in turn sends up to its `weight`
 * contacts, so a large campaign cannot starve a small one submitted after it: with weights 1 and
 * k active flows, a flow of s contacts is done within s x k hand-outs.
 *
 * Entries are numeric contact references. An entry can go stale (its contact expired or was
 * reported sent by an earlier hand-out while it waited); `count` tracks live entries only and stale
 * ones are dropped when they reach the front.
 */
import { NumberDeque } from './deque.js';
import type { Blocker } from './types.js';

export class Flow {
  readonly key: string;
  weight: number;
  readonly entries = new NumberDeque();
  /** Live entries. */
  count = 0;
  active = false;

  constructor(key: string, weight: number) {
    this.key = key;
    this.weight = weight;
  }
}

export class PoolQueue {
  readonly businessId: number;
  readonly typeId: number;
  readonly flows = new Map<string, Flow>();
  /** Flows with live entries, in service order. */
  readonly active: Flow[] = [];
  cursor = 0;
  /** Contacts the flow at `cursor` may still send in its turn. */
  quota = 0;
  /** Live entries over all flows. */
  ready = 0;
  /** Clock time before which polling this queue cannot hand anything out (0: try now). */
  wakeAt = 0;
  blocked: Blocker | undefined;
  retryAt: number | undefined;

  constructor(businessId: number, typeId: number) {
    this.businessId = businessId;
    this.typeId = typeId;
  }

  flow(key: string, weight: number): Flow {
    let flow = this.flows.get(key);
    if (!flow) {
      flow = new Flow(key, weight);
      this.flows.set(key, flow);
    }
    return flow;
  }

  /** Queues a live entry: at the back for new contacts, at the front for ones coming back. */
  add(flow: Flow, ref: number, front: boolean): void {
    if (front) flow.entries.pushFront(ref);
    else flow.entries.pushBack(ref);
    flow.count++;
    this.ready++;
    if (!flow.active) {
      flow.active = true;
      this.active.push(flow);
    }
  }

  /** A live entry of `flow` went stale where it stands. */
  dropped(flow: Flow): void {
    flow.count--;
    this.ready--;
  }

  /** The next live entry in fair order, or undefined. `isLive` tells stale entries apart. */
  next(isLive: (ref: number) => boolean): number | undefined {
    while (this.active.length > 0) {
      if (this.cursor >= this.active.length) this.cursor = 0;
      const flow = this.active[this.cursor]!;
      if (flow.count === 0) {
        this.#retire(flow);
        continue;
      }
      const ref = flow.entries.popFront();
      if (ref === undefined) {
        // Only stale entries were left; count says none is live.
        flow.count = 0;
        this.#retire(flow);
        continue;
      }
      if (!isLive(ref)) continue;
      if (this.quota === 0) this.quota = flow.weight;
      flow.count--;
      this.ready--;
      this.quota--;
      if (flow.count === 0) this.#retire(flow);
      else if (this.quota === 0) this.cursor++;
      return ref;
    }
    return undefined;
  }

  #retire(flow: Flow): void {
    flow.active = false;
    const at = this.active.indexOf(flow);
    this.active.splice(at, 1);
    if (at < this.cursor) this.cursor--;
    this.quota = 0;
    // Stale entries may remain; drop them with the flow's memory when nothing is live.
    if (flow.count === 0 && flow.entries.size > 0) while (flow.entries.popFront() !== undefined);
    if (flow.count === 0) this.flows.delete(flow.key);
  }
}
