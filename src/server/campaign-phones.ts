/**
 * The phones each campaign of each company took, so a phone is sent once per campaign: a later
 * contact with the same phone is rejected as `duplicated` (spec 7.3, `count_duplicated`). Phones
 * are kept compactly (phone-hash-set.ts) until the campaign's statistics settle (finished and quiet
 * for their retention): then the campaign is closed to new contacts in the statistics too.
 */
import type { PhoneSet } from '../contract/rejection.js';
import { PhoneHashSet, phoneKey } from './phone-hash-set.js';

/** Phones a request added to a campaign (a durable server writes one row per request). */
export interface CampaignPhonesRow {
  readonly companyId: number;
  readonly campaignId: number;
  readonly phones: readonly number[];
}

/** What changed since the last {@link CampaignPhones.takeChanges}. */
export interface CampaignPhonesChanges {
  readonly added: readonly CampaignPhonesRow[];
  /** Campaigns whose phones were dropped (their rows go). */
  readonly dropped: readonly { readonly companyId: number; readonly campaignId: number }[];
}

const NONE: PhoneSet = { has: () => false };

export class CampaignPhones {
  readonly #sets = new Map<string, PhoneHashSet>();
  readonly #track: boolean;
  #added: CampaignPhonesRow[] = [];
  #dropped: { companyId: number; campaignId: number }[] = [];
  #version = 0;

  /** @param trackChanges remember changes for {@link takeChanges} (a durable server) */
  constructor(trackChanges = false) {
    this.#track = trackChanges;
  }

  /** Changes with every phone added and campaign dropped: a screening done at one version holds while it is unchanged (intake-parse.ts). */
  get version(): number {
    return this.#version;
  }

  /** The phones a campaign took, as the contract's parser reads them. */
  known(companyId: number, campaignId: number): PhoneSet {
    const key = `${companyId}:${campaignId}`;
    const set = this.#sets.get(key);
    return set === undefined ? NONE : { has: (phone) => set.has(phoneKey(phone)) };
  }

  /** Adds the phones a request's accepted contacts took (normalised digits). */
  remember(companyId: number, campaignId: number, phones: readonly string[]): void {
    if (phones.length === 0) return;
    this.#version++;
    const key = `${companyId}:${campaignId}`;
    let set = this.#sets.get(key);
    if (!set) this.#sets.set(key, (set = new PhoneHashSet(phones.length)));
    const added: number[] = [];
    for (const p of phones) {
      const k = phoneKey(p);
      if (set.add(k) && this.#track) added.push(k);
    }
    if (added.length > 0) this.#added.push({ companyId, campaignId, phones: added });
  }

  /** Forgets a campaign's phones (its statistics settled). */
  drop(companyId: number, campaignId: number): void {
    this.#version++;
    if (this.#sets.delete(`${companyId}:${campaignId}`) && this.#track) {
      this.#added = this.#added.filter((r) => r.companyId !== companyId || r.campaignId !== campaignId);
      this.#dropped.push({ companyId, campaignId });
    }
  }

  /** Phones remembered, over every campaign. */
  get size(): number {
    let n = 0;
    for (const s of this.#sets.values()) n += s.size;
    return n;
  }

  /** Bytes of the phone tables. */
  get bytes(): number {
    let n = 0;
    for (const s of this.#sets.values()) n += s.bytes;
    return n;
  }

  /** Every campaign's phones (the snapshot file's form). */
  rows(): CampaignPhonesRow[] {
    return [...this.#sets].map(([key, set]) => {
      const [companyId, campaignId] = key.split(':').map(Number) as [number, number];
      return { companyId, campaignId, phones: [...set.values()] };
    });
  }

  /** What changed since the last call (every campaign's phones with `full`). */
  takeChanges(full = false): CampaignPhonesChanges {
    const added = full ? this.rows() : this.#added;
    const dropped = full ? [] : this.#dropped;
    this.#added = [];
    this.#dropped = [];
    return { added, dropped };
  }

  /** Loads the rows a durable server kept. */
  load(rows: Iterable<CampaignPhonesRow>): void {
    this.#version++;
    for (const r of rows) {
      const key = `${r.companyId}:${r.campaignId}`;
      let set = this.#sets.get(key);
      if (!set) this.#sets.set(key, (set = new PhoneHashSet(r.phones.length)));
      for (const k of r.phones) set.add(k);
    }
  }
}
