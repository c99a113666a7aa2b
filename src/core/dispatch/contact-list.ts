/**
 * The contacts of one submission as the queue keeps them. Two forms, one interface:
 *
 * - {@link ObjectContacts}: the caller's array of contact objects, as given. Nothing is copied, so
 *   a submission that leaves soon costs nothing to queue, and a host that puts fields of its own on
 *   its contacts (the server keeps its notification context there) gets the same objects back.
 * - {@link PackedContacts}: phones as numbers and every value of the submission in one string, about
 *   a quarter of the objects' memory once the caller drops them (docs/dispatch-loop.md, "Memory").
 *   Messages and outcomes then carry contact objects rebuilt with the same values.
 *
 * The dispatcher packs a submission only when it joins a long queue (where contacts wait, and
 * memory is what a backlog costs) and only when every contact has nothing but `phone` and
 * `variables`; see `Dispatcher.submit`.
 */
import type { SubmissionContact } from '../submission.js';
import { type CompiledTemplate, renderCompiled } from '../template-text.js';

export interface ContactList {
  readonly length: number;
  /** The contact at `i` (the caller's object, or one rebuilt with its values). */
  at(i: number): SubmissionContact;
  /** The template text with contact `i`'s values filled in. */
  render(template: CompiledTemplate, i: number): string;
  /** Every contact, for snapshots and durable rows. */
  all(): readonly SubmissionContact[];
}

const NO_VALUES: readonly string[] = [];

export class ObjectContacts implements ContactList {
  readonly #contacts: readonly SubmissionContact[];

  constructor(contacts: readonly SubmissionContact[]) {
    this.#contacts = contacts;
  }

  get length(): number {
    return this.#contacts.length;
  }

  at(i: number): SubmissionContact {
    return this.#contacts[i]!;
  }

  render(template: CompiledTemplate, i: number): string {
    return renderCompiled(template, this.#contacts[i]!.variables ?? NO_VALUES);
  }

  all(): readonly SubmissionContact[] {
    return this.#contacts;
  }
}

/** Contacts with nothing but a phone and values: `packable` says which arrays can be packed. */
export class PackedContacts implements ContactList {
  /** `10 ** digits + phone`: the digit count keeps leading zeros (at most 16 digits, exact in a double). */
  readonly #phones: Float64Array;
  /** All values in one string; value k of contact i ends at `#ends[i * width + k]`. */
  readonly #values: string;
  readonly #ends: Int32Array;
  /** Values per contact (the type's placeholders: every contact has as many). */
  readonly #width: number;

  /** @param contacts checked contacts for which {@link packable} said yes */
  constructor(contacts: readonly SubmissionContact[], width: number) {
    const n = contacts.length;
    this.#width = width;
    this.#phones = new Float64Array(n);
    this.#ends = new Int32Array(n * width);
    const parts = new Array<string>(n * width);
    let end = 0;
    let k = 0;
    for (let i = 0; i < n; i++) {
      const c = contacts[i]!;
      this.#phones[i] = encodePhone(c.phone);
      const values = c.variables ?? NO_VALUES;
      for (let v = 0; v < width; v++) {
        const value = values[v]!;
        parts[k] = value;
        end += value.length;
        this.#ends[k++] = end;
      }
    }
    this.#values = parts.join('');
  }

  get length(): number {
    return this.#phones.length;
  }

  at(i: number): SubmissionContact {
    return { phone: decodePhone(this.#phones[i]!), variables: this.#valuesOf(i) };
  }

  render(template: CompiledTemplate, i: number): string {
    return renderCompiled(template, this.#valuesOf(i));
  }

  all(): readonly SubmissionContact[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }

  #valuesOf(i: number): string[] {
    const w = this.#width;
    const out = new Array<string>(w);
    let start = i === 0 ? 0 : this.#ends[i * w - 1]!;
    for (let v = 0; v < w; v++) {
      const end = this.#ends[i * w + v]!;
      out[v] = this.#values.slice(start, end);
      start = end;
    }
    return out;
  }
}

/**
 * Whether the contacts (checked: valid phones, `width` values each, or rejected) can be packed
 * without losing anything: each has no field but `phone` and `variables`.
 */
export function packable(contacts: readonly SubmissionContact[]): boolean {
  for (let i = 0; i < contacts.length; i++) {
    const c = contacts[i];
    if (typeof c !== 'object' || c === null) return false;
    for (const key in c) if (key !== 'phone' && key !== 'variables') return false;
  }
  return true;
}

function encodePhone(phone: string): number {
  let v = 1;
  for (let k = 0; k < phone.length; k++) v = v * 10 + (phone.charCodeAt(k) - 48);
  return v;
}

function decodePhone(encoded: number): string {
  // The leading 1 marks the digit count: "1" + digits, then drop it.
  return String(encoded).slice(1);
}
