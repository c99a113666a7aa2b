/**
 * The accepted journal of an instance on Redis with a state file (reset.ts, docs/scaling.md "Redis
 * comes back empty"): the chunks this instance wrote to the queue for its 202s and has not seen
 * done, kept outside Redis so that a Redis that comes back empty while every instance restarted
 * does not lose them. It holds exactly what the instance keeps in memory to write again after a
 * reset.
 *
 * **Format, version 1.** A text file of JSON lines (`<state file's name>.accepted.jsonl`, readable
 * by its owner only: contacts are personal data). The first line is the header
 * `{"journal":"sendpool-accepted","version":1}`; then one record a line:
 *
 * - `{"op":"add","stream":S,"entry":E,"epoch":P,"body":B}`: chunk `B` (the queue's JSON of it) was
 *   written as entry `E` of stream `S` under the queue's epoch `P`;
 * - `{"op":"done","stream":S,"entry":E}`: that chunk is done (or was written again: a new `add`
 *   names its new entry).
 *
 * **Writes.** An `add` is appended (one write for a whole step's chunks) once the step is in Redis,
 * before the step's waiters (its 202s) are resolved; `done` records as the instance forgets chunks
 * (acknowledged done by its own step, or seen gone from their streams).
 * Neither is fsynced: the page cache survives a kill of the process, not a power cut of the host.
 * When the `done` records outnumber the chunks not done (and `compactAfter` at least), the file is
 * written again whole with only the `add` records of those not done (a temporary file renamed over
 * it), so its size follows what is not done.
 *
 * **Reading.** At open the file is read whole and written again compacted. A line that is not a
 * record (a tail cut by a kill in the middle of a write, an edit) is skipped and counted; the caller
 * logs the count with the file's name. A header of another version is refused with an error naming
 * the file (a newer sendpool wrote it).
 */
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { StateFileError } from '../../../runtime/state-file-error.js';
import type { ChunkBody } from './chunks.js';

/** The journal's format version (the header's `version`). */
export const ACCEPTED_JOURNAL_VERSION = 1;

const HEADER = `${JSON.stringify({ journal: 'sendpool-accepted', version: ACCEPTED_JOURNAL_VERSION })}\n`;

/** One chunk in the journal. */
export interface JournalEntry {
  readonly stream: string;
  readonly entryId: string;
  /** The queue's epoch it was written under. */
  readonly epoch: string;
  readonly body: ChunkBody;
  /** `body`'s JSON when already made (the queue's step wrote it): not made again. @default made here */
  readonly json?: string;
}

/** An `add` record's line. */
function addLine(e: JournalEntry): string {
  return `{"op":"add","stream":${JSON.stringify(e.stream)},"entry":${JSON.stringify(e.entryId)},"epoch":${JSON.stringify(e.epoch)},"body":${e.json ?? JSON.stringify(e.body)}}\n`;
}

/** The journal kept beside a state file: `redis-state.json` → `redis-state.accepted.jsonl`. */
export function acceptedJournalPath(stateFile: string): string {
  return `${stateFile.endsWith('.json') ? stateFile.slice(0, -'.json'.length) : stateFile}.accepted.jsonl`;
}

const keyOf = (stream: string, entryId: string): string => `${stream} ${entryId}`;

/** What `AcceptedJournal.open` found in the file. */
export interface JournalOpened {
  readonly journal: AcceptedJournal;
  /** The chunks not done, in the order they were added. */
  readonly entries: readonly JournalEntry[];
  /** Lines skipped: not a record (a cut tail, a damaged line). */
  readonly damaged: number;
}

/** Is this a chunk's body as the queue writes it (what a damaged line would not be)? */
function isBody(b: unknown): b is ChunkBody {
  if (typeof b !== 'object' || b === null) return false;
  const o = b as Record<string, unknown>;
  return typeof o['requestId'] === 'string' && typeof o['companyId'] === 'number' && Array.isArray(o['contacts']);
}

export class AcceptedJournal {
  readonly #path: string;
  readonly #compactAfter: number;
  /** The chunks not done (what a compaction writes). */
  readonly #live = new Map<string, JournalEntry>();
  /** `done` records in the file, and `add` records they made dead. */
  #dead = 0;

  private constructor(path: string, compactAfter: number) {
    this.#path = path;
    this.#compactAfter = compactAfter;
  }

  /**
   * Reads the journal at `path` (absent: empty), answers the chunks not done and the lines skipped,
   * and writes it again compacted (which also drops a cut tail before anything is appended to it).
   * `compactAfter`: `done` records the file may hold before a compaction is considered.
   * @throws when the file cannot be read, or its header names another version.
   */
  static open(path: string, compactAfter = 1000): JournalOpened {
    const journal = new AcceptedJournal(path, compactAfter);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    const lines = text.split('\n');
    // The text after the last newline: empty, or a line cut before its end.
    const tail = lines.pop() ?? '';
    let damaged = tail === '' ? 0 : 1;
    lines.forEach((line, n) => {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        damaged++;
        return;
      }
      if (typeof record !== 'object' || record === null) return void damaged++;
      const r = record as Record<string, unknown>;
      if (n === 0 && r['journal'] === 'sendpool-accepted') {
        if (r['version'] !== ACCEPTED_JOURNAL_VERSION)
          throw new StateFileError('accepted journal', path, {
            field: '$.version',
            expected: String(ACCEPTED_JOURNAL_VERSION),
            actual: JSON.stringify(r['version']),
            advice: 'written by another sendpool version: start that version, or move the file away to lose its chunks',
          });
        return;
      }
      const { op, stream, entry } = r;
      if (typeof stream !== 'string' || typeof entry !== 'string') return void damaged++;
      if (op === 'add' && typeof r['epoch'] === 'string' && isBody(r['body'])) {
        journal.#live.set(keyOf(stream, entry), { stream, entryId: entry, epoch: r['epoch'], body: r['body'] });
      } else if (op === 'done') journal.#live.delete(keyOf(stream, entry));
      else damaged++;
    });
    journal.compact();
    return { journal, entries: [...journal.#live.values()], damaged };
  }

  /** The file's path. */
  get path(): string {
    return this.#path;
  }

  /** Chunks not done. */
  get live(): number {
    return this.#live.size;
  }

  /** Records in the file (its size in lines, header aside). */
  get records(): number {
    return this.#live.size + 2 * this.#dead;
  }

  /** Records chunks written to the queue (one write). */
  add(entries: readonly JournalEntry[]): void {
    if (entries.length === 0) return;
    let text = '';
    for (const e of entries) {
      const key = keyOf(e.stream, e.entryId);
      // The same entry added again (never in practice): the older record is dead.
      if (this.#live.has(key)) this.#dead++;
      // Kept without its JSON (the body is what memory holds anyway); a compaction makes it again.
      this.#live.set(key, { stream: e.stream, entryId: e.entryId, epoch: e.epoch, body: e.body });
      text += addLine(e);
    }
    appendFileSync(this.#path, text, { mode: 0o600 });
  }

  /** Records chunks done (one write; those not in the journal are ignored); compacts when they dominate. */
  done(entries: readonly Pick<JournalEntry, 'stream' | 'entryId'>[]): void {
    let text = '';
    for (const e of entries) {
      if (!this.#live.delete(keyOf(e.stream, e.entryId))) continue;
      this.#dead++;
      text += `${JSON.stringify({ op: 'done', stream: e.stream, entry: e.entryId })}\n`;
    }
    if (text === '') return;
    if (this.#dead >= Math.max(this.#compactAfter, this.#live.size)) this.compact();
    else appendFileSync(this.#path, text, { mode: 0o600 });
  }

  /** Writes the file again with only the chunks not done. */
  compact(): void {
    mkdirSync(dirname(this.#path), { recursive: true });
    const parts = [HEADER];
    for (const e of this.#live.values()) parts.push(addLine(e));
    const tmp = `${this.#path}.tmp`;
    writeFileSync(tmp, parts.join(''), { mode: 0o600 });
    renameSync(tmp, this.#path);
    this.#dead = 0;
  }
}
