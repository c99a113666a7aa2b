/**
 * The fleet as the engine's hot path reads it: numbers by slot and templates by index in typed
 * arrays, one {@link Pool} per (business, template type), built whole from a validated fleet.
 * Statuses are not applied here: fleet-state.ts applies them through its run-time paths, so pools
 * start consistent with what a later change would do.
 */
import type { FleetTemplate, Fleet } from './fleet-validate.js';
import type { TemplateStatus } from './fleet.js';
import type { Store } from './limits/store.js';
import { limitsOf } from './number-limits.js';
import { PhoneIndex } from './phone-index.js';
import { Pool } from './pool.js';
import type { Portfolio } from './portfolio.js';
import type { TemplateFields } from './template-fields.js';

export interface BusinessRecord {
  readonly id: number;
  readonly name: string;
  readonly companyId: number | undefined;
  readonly members: Int32Array;
  readonly pools: Pool[];
  readonly poolByType: Map<number, Pool>;
}

export class FleetTables {
  /** Templates as validated (texts, placeholders); numbers live only in the typed arrays below. */
  readonly templates: readonly FleetTemplate[];
  /** Spec 2.2 fields of each template, derived on first use (the texts change only with the fleet). */
  readonly templateFields: (TemplateFields | undefined)[] = [];

  // Numbers, by slot.
  readonly phones: string[] = [];
  readonly numberIndex = new PhoneIndex(this.phones);
  readonly numberBusiness: Int32Array;
  readonly numberMember: Int32Array;
  // Rates fit 32 bits exactly (at most 1e9 an hour, 1e6 a second); the 24 h limit does not.
  readonly perHour: Uint32Array;
  readonly per24h: Float64Array;
  readonly perSecond: Uint32Array;
  readonly numberActive: Uint8Array;
  /** End of a timed pause, for the few numbers that have one. */
  readonly numberUntil = new Map<number, number>();
  readonly numberGen: Uint32Array;
  /** The store's handle of each number. */
  readonly handle: Int32Array;
  /** Portfolio whose limit each number shares (undefined: its own windows only). */
  readonly numberPortfolio: (Portfolio | undefined)[] = [];

  // Templates, by index.
  readonly templateIds: Float64Array;
  readonly templateIndex = new Map<number, number>();
  readonly templateStatus: TemplateStatus[] = [];
  readonly templateUntil: Float64Array;
  readonly templateGen: Uint32Array;
  readonly templateAccount: (string | undefined)[] = [];
  readonly templatePools: Pool[][] = [];

  readonly businesses: BusinessRecord[] = [];
  readonly businessIndex = new Map<number, number>();

  /**
   * Builds every index from a fleet description; the store keeps limit state by phone, the engine
   * portfolios by id (`portfolio` answers the one of an id the fleet lists). A number without
   * `messagesPerSecond` gets `defaultPerSecond` (0: no per-second window).
   */
  constructor(fleet: Fleet, store: Store, now: number, defaultPerSecond = 0, portfolio: (id: string) => Portfolio | undefined = () => undefined) {
    const numberCount = fleet.businesses.reduce((n, b) => n + b.numbers.length, 0);
    this.templates = fleet.templates;
    this.numberIndex.sizeFor(numberCount);
    store.sizeFor?.(numberCount);
    this.numberBusiness = new Int32Array(numberCount);
    this.numberMember = new Int32Array(numberCount);
    this.perHour = new Uint32Array(numberCount);
    this.per24h = new Float64Array(numberCount);
    this.perSecond = new Uint32Array(numberCount);
    this.numberActive = new Uint8Array(numberCount);
    this.numberGen = new Uint32Array(numberCount);
    this.handle = new Int32Array(numberCount);

    const templateCount = fleet.templates.length;
    this.templateIds = new Float64Array(templateCount);
    this.templateUntil = new Float64Array(templateCount).fill(NaN);
    this.templateGen = new Uint32Array(templateCount);
    fleet.templates.forEach((t, i) => {
      this.templateIds[i] = t.id;
      this.templateIndex.set(t.id, i);
      this.templateStatus[i] = t.status;
      this.templateAccount[i] = t.account;
      this.templatePools[i] = [];
    });

    let slot = 0;
    fleet.businesses.forEach((b, bi) => {
      const members = new Int32Array(b.numbers.length);
      const accounts: (string | undefined)[] = [undefined];
      const classOf = new Int32Array(b.numbers.length);
      b.numbers.forEach((n, m) => {
        members[m] = slot;
        this.phones[slot] = n.phone;
        this.numberIndex.add(slot);
        this.numberBusiness[slot] = bi;
        this.numberMember[slot] = m;
        this.perHour[slot] = n.throughputPerHour;
        this.per24h[slot] = n.messagingLimit24h;
        const perSecond = n.messagesPerSecond ?? defaultPerSecond;
        this.perSecond[slot] = perSecond;
        this.handle[slot] = store.open(n.phone, limitsOf(n.throughputPerHour, n.messagingLimit24h, perSecond), now);
        this.numberPortfolio[slot] = n.portfolioId === undefined ? undefined : portfolio(n.portfolioId);
        if (n.account !== undefined) {
          let c = accounts.indexOf(n.account);
          if (c < 0) c = accounts.push(n.account) - 1;
          classOf[m] = c;
        }
        slot++;
      });
      const record: BusinessRecord = { id: b.id, name: b.name, companyId: b.companyId, members, pools: [], poolByType: new Map() };
      const firstHandle = this.#consecutiveHandles(members);
      let grouped = false;
      for (const slot of members) if (this.numberPortfolio[slot] !== undefined) grouped = true;
      for (const type of b.templateTypes) {
        const templates = Int32Array.from(type.templateIds, (id) => this.templateIndex.get(id)!);
        const pool = new Pool(b.id, type.id, type.name, templates, members, classOf, accounts);
        pool.firstHandle = firstHandle;
        pool.grouped = grouped;
        for (const t of templates) this.templatePools[t]!.push(pool);
        record.pools.push(pool);
        record.poolByType.set(type.id, pool);
      }
      this.businesses.push(record);
      this.businessIndex.set(b.id, bi);
    });
  }

  get numberCount(): number {
    return this.phones.length;
  }

  /** The pool of a (business, type), or undefined. */
  pool(businessId: number, typeId: number): Pool | undefined {
    const b = this.businessIndex.get(businessId);
    return b === undefined ? undefined : this.businesses[b]!.poolByType.get(typeId);
  }

  /** Member index of the number at `slot` if it belongs to business index `b`, else -1. */
  memberOf(phone: string, b: number): number {
    const slot = this.numberIndex.get(phone);
    return slot !== undefined && this.numberBusiness[slot] === b ? this.numberMember[slot]! : -1;
  }

  /** Handle of the first of `slots` if their handles are consecutive, else -1 (see Pool.firstHandle). */
  #consecutiveHandles(slots: Int32Array): number {
    if (slots.length === 0) return -1;
    const first = this.handle[slots[0]!]!;
    for (let m = 1; m < slots.length; m++) if (this.handle[slots[m]!] !== first + m) return -1;
    return first;
  }
}
