/**
 * The seal of the durable store: a small file beside the database (`sendpool.db.seal`) saying how
 * far the database got (its commit count, the next contact id, the next submission number and the
 * contacts submitted so far), rewritten after every commit. SQLite replays a WAL up to its last
 * valid commit frame and says nothing of what lies past it (a cut tail, flipped bytes, a deleted
 * WAL, an emptied database file): the seal is the witness outside the WAL by which the next open
 * knows that the database holds less than it did (docs/decisions.md, "The durable store checks
 * what it reads").
 *
 * Two slots of 64 bytes written in turn (commit n in slot n % 2), each with its own checksum: a
 * write torn by a crash spoils one slot and the other still holds the commit before. The seal is
 * not synced: the commit before it is (synchronous=FULL), so a power cut can leave the seal behind
 * the database, never ahead of it.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';

/** What the seal says of the database. */
export interface SealState {
  /** The store's id (32 hex digits), also kept in the database: a seal of another store is told apart. */
  readonly storeId: string;
  /** Commits written (each `write` is one). */
  readonly commit: number;
  /** The server's next contact id (contact ids below it were given out). */
  readonly nextContactId: number;
  /** The engine's next submission number. */
  readonly nextSeq: number;
  /** Contacts the engine took so far (its `counts.submitted`). */
  readonly submitted: number;
}

/** The seal as found: none, unreadable (both slots spoiled), or the newest good slot. */
export type SealFound = { readonly kind: 'absent' } | { readonly kind: 'damaged'; readonly size: number } | { readonly kind: 'ok'; readonly seal: SealState };

const MAGIC = Buffer.from('SPSEAL1\n', 'latin1');
const SLOT = 64;
const BODY = 56;

function checksum(body: Buffer): Buffer {
  return createHash('sha256')
    .update(body)
    .digest()
    .subarray(0, SLOT - BODY);
}

function encode(s: SealState): Buffer {
  const b = Buffer.alloc(SLOT);
  MAGIC.copy(b, 0);
  Buffer.from(s.storeId, 'hex').copy(b, 8, 0, 16);
  b.writeDoubleLE(s.commit, 24);
  b.writeDoubleLE(s.nextContactId, 32);
  b.writeDoubleLE(s.nextSeq, 40);
  b.writeDoubleLE(s.submitted, 48);
  checksum(b.subarray(0, BODY)).copy(b, BODY);
  return b;
}

function decode(b: Buffer): SealState | undefined {
  if (b.length < SLOT || !b.subarray(0, 8).equals(MAGIC) || !checksum(b.subarray(0, BODY)).equals(b.subarray(BODY, SLOT))) return undefined;
  return {
    storeId: b.subarray(8, 24).toString('hex'),
    commit: b.readDoubleLE(24),
    nextContactId: b.readDoubleLE(32),
    nextSeq: b.readDoubleLE(40),
    submitted: b.readDoubleLE(48),
  };
}

/** Reads the seal: the slot with the higher commit among those whose checksum holds. */
export function readSeal(file: string): SealFound {
  if (!existsSync(file)) return { kind: 'absent' };
  const bytes = readFileSync(file);
  const slots = [decode(bytes.subarray(0, SLOT)), decode(bytes.subarray(SLOT, 2 * SLOT))].filter((s): s is SealState => s !== undefined);
  if (slots.length === 0) return { kind: 'damaged', size: bytes.length };
  return { kind: 'ok', seal: slots.reduce((a, b) => (b.commit > a.commit ? b : a)) };
}

/** Writes the seal after each commit (one 64-byte write at its slot, no sync). */
export class SealWriter {
  readonly #fd: number;

  constructor(file: string) {
    this.#fd = openSync(file, existsSync(file) ? 'r+' : 'w+');
  }

  write(state: SealState): void {
    writeSync(this.#fd, encode(state), 0, SLOT, (state.commit % 2) * SLOT);
  }

  /** Both slots at once (a new seal, or one made to agree with a recovered database). */
  reset(state: SealState): void {
    writeSync(this.#fd, encode(state), 0, SLOT, 0);
    writeSync(this.#fd, encode(state), 0, SLOT, SLOT);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
