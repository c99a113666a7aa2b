/**
 * Idempotency keys of POST /messenger/messages/ (docs/server.md, "Idempotency-Key"): a client that
 * did not get its answer sends the request again with the same `Idempotency-Key` header and gets
 * the first answer (a 202, replayed with `Idempotent-Replayed: true`) instead of its contacts
 * refused as duplicated. A key is its company's; the same key with another body is refused (422),
 * and while the first request is still running the retry is answered 409 with `Retry-After`.
 *
 * Only a 202 is kept, with the request's commit (durable: in the same transaction as its contacts;
 * Redis: by the step script that writes its chunks), so a crash after the commit and before the
 * answer still replays it. Any other answer leaves the key free: the retry runs again.
 *
 * Here: the syntax of the key, the body's fingerprint, and the book of the server on memory or on
 * its embedded database (durable rows, loaded at start). The server on Redis keeps the records in
 * Redis (backends/redis/shared-idempotency.ts).
 */
import { createHash } from 'node:crypto';
import { IDEMPOTENCY_TTL_MS, type IdempotencyBegin, type KeptAnswer } from './ports/backend.js';

export { IDEMPOTENCY_TTL_MS } from './ports/backend.js';
/** Longest key, in characters. */
export const MAX_IDEMPOTENCY_KEY = 255;
/** Most keys one server keeps on memory or on its database (the oldest go first beyond it). */
export const MAX_IDEMPOTENCY_RECORDS = 100_000;
/** `Retry-After` of a retry while the first request with its key still runs, in seconds. */
export const IN_PROGRESS_RETRY_AFTER_S = 1;

/**
 * The `Idempotency-Key` header's value: undefined when absent, a problem text when malformed (it
 * must be 1 to 255 visible ASCII characters, sent once).
 */
export function idempotencyKeyOf(header: string | string[] | undefined): { readonly key?: string; readonly problem?: { expected: string; actual: string } } {
  if (header === undefined) return {};
  const expected = `1 to ${MAX_IDEMPOTENCY_KEY} visible ASCII characters (0x21-0x7E), sent once`;
  if (Array.isArray(header)) return { problem: { expected, actual: `${header.length} headers` } };
  if (header.length === 0 || header.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(header)) {
    const shown = header.length > 40 ? `${JSON.stringify(header.slice(0, 40))}… (${header.length} characters)` : JSON.stringify(header);
    return { problem: { expected, actual: shown } };
  }
  return { key: header };
}

/** The body's fingerprint: SHA-256 of its JSON as parsed (the same body: the same members, in the same order). */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(body) ?? '')
    .digest('base64url');
}

/** A key's record as a durable server keeps it. */
export interface IdempotencyRow {
  readonly companyId: number;
  readonly key: string;
  readonly fingerprint: string;
  /** When the answer was kept (epoch ms): the record goes {@link IDEMPOTENCY_TTL_MS} after. */
  readonly at: number;
  /** The answer as JSON ({@link KeptAnswer}). */
  readonly answer: string;
}

/** What changed since the last {@link IdempotencyBook.takeChanges}: rows to write, keys to delete, and records older than `before` to drop. */
export interface IdempotencyChanges {
  readonly put: readonly IdempotencyRow[];
  readonly deleted: readonly { readonly companyId: number; readonly key: string }[];
  readonly before?: number;
}

interface Entry {
  readonly fingerprint: string;
  /** The request running with the key (no answer yet). */
  request?: string;
  answer?: string;
  /** The 202 staged for the durable write, shown once written. */
  pendingAnswer?: string | undefined;
  at: number;
}

/**
 * The keys of a server on memory or on its embedded database. A request holds its key while it
 * runs; its 202 is staged for the durable write (`keep`) and shown to retries once written
 * (`settle`); a request without a 202 frees it (`end`).
 */
export class IdempotencyBook {
  readonly #entries = new Map<string, Entry>();
  readonly #track: boolean;
  readonly #max: number;
  #put: IdempotencyRow[] = [];
  #deleted: { companyId: number; key: string }[] = [];

  /**
   * @param trackChanges remember changes for {@link takeChanges} (a durable server)
   * @param max most keys kept (the oldest go first)
   */
  constructor(trackChanges = false, max = MAX_IDEMPOTENCY_RECORDS) {
    this.#track = trackChanges;
    this.#max = max;
  }

  /** Keys kept (answered or running). */
  get size(): number {
    return this.#entries.size;
  }

  /** Begins a request with `key`: the key is its own now, or what the first request left. */
  begin(companyId: number, key: string, fingerprint: string, requestId: string, now: number): IdempotencyBegin {
    this.#prune(now);
    const id = `${companyId}:${key}`;
    const e = this.#entries.get(id);
    if (e === undefined) {
      this.#entries.set(id, { fingerprint, request: requestId, at: now });
      this.#bound();
      return { kind: 'new' };
    }
    if (e.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (e.answer !== undefined) return { kind: 'replay', answer: JSON.parse(e.answer) as KeptAnswer };
    return { kind: 'in-progress' };
  }

  /**
   * The request's 202, staged to be written with its commit (durable) — retries see it once
   * {@link settle}d. Without change tracking (memory) it is settled at once.
   */
  keep(companyId: number, key: string, requestId: string, answer: KeptAnswer, now: number): void {
    const e = this.#entries.get(`${companyId}:${key}`);
    if (e === undefined || e.request !== requestId) return;
    const text = JSON.stringify(answer);
    if (this.#track) this.#put.push({ companyId, key, fingerprint: e.fingerprint, at: now, answer: text });
    e.at = now;
    if (!this.#track) {
      e.answer = text;
      e.request = undefined;
    } else e.pendingAnswer = text;
  }

  /** The request's 202 was written: retries are answered with it. */
  settle(companyId: number, key: string, requestId: string): void {
    const e = this.#entries.get(`${companyId}:${key}`);
    if (e === undefined || e.request !== requestId || e.pendingAnswer === undefined) return;
    e.answer = e.pendingAnswer;
    e.pendingAnswer = undefined;
    e.request = undefined;
  }

  /** The request ends without a 202 (or its write failed): the key is free again. */
  end(companyId: number, key: string, requestId: string): void {
    const id = `${companyId}:${key}`;
    const e = this.#entries.get(id);
    if (e !== undefined && e.request === requestId) this.#entries.delete(id);
  }

  #prune(now: number): void {
    const before = now - IDEMPOTENCY_TTL_MS;
    for (const [id, e] of this.#entries) {
      if (e.at >= before) break;
      if (e.request !== undefined) continue; // running: ended by its request
      this.#entries.delete(id);
    }
  }

  #bound(): void {
    while (this.#entries.size > this.#max) {
      const [id, e] = this.#entries.entries().next().value as [string, Entry];
      this.#entries.delete(id);
      if (this.#track && e.answer !== undefined) {
        const at = id.indexOf(':');
        this.#deleted.push({ companyId: Number(id.slice(0, at)), key: id.slice(at + 1) });
      }
    }
  }

  /** What changed since the last call (every answered key with `full`), and the age rows are dropped at. */
  takeChanges(now: number, full = false): IdempotencyChanges {
    const put = full ? this.rows() : this.#put;
    const deleted = full ? [] : this.#deleted;
    this.#put = [];
    this.#deleted = [];
    return { put, deleted, before: now - IDEMPOTENCY_TTL_MS };
  }

  /** Every answered key, oldest first. */
  rows(): IdempotencyRow[] {
    const out: IdempotencyRow[] = [];
    for (const [id, e] of this.#entries) {
      if (e.answer === undefined) continue;
      const at = id.indexOf(':');
      out.push({ companyId: Number(id.slice(0, at)), key: id.slice(at + 1), fingerprint: e.fingerprint, at: e.at, answer: e.answer });
    }
    return out;
  }

  /** Loads the rows a durable server kept (oldest first). */
  load(rows: Iterable<IdempotencyRow>, now: number): void {
    for (const r of rows) {
      if (r.at < now - IDEMPOTENCY_TTL_MS) continue;
      this.#entries.set(`${r.companyId}:${r.key}`, { fingerprint: r.fingerprint, answer: r.answer, at: r.at });
    }
    this.#bound();
  }
}
