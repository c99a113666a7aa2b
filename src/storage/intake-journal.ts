/**
 * The intake journal of the durable store: segment files beside the database
 * (`sendpool.db.intake-000001`, …) that say, for each commit holding accepted contacts, what a
 * FAILED notification of them needs if that commit is later lost (docs/server.md, "A damaged
 * store"): the submission's number, its campaign and its contacts as the database keeps them (id,
 * phone, request id, company, cost center, `data`, `document`, `contract`). It also records which of
 * a submission's contacts became final (sent, failed, expired, rejected: the engine's state digits
 * 3 to 6) and the submissions that ended, so a contact already sent is not reported FAILED, and the
 * companies' webhook configurations when they change, so a FAILED notification can be addressed
 * when the database lost them too.
 *
 * Written like the seal (store-seal.ts): after the commit, not synced (the commit is). A record is
 * `[u32 length][8 bytes of SHA-256][u32 body length][body][head]`: the body is the contacts' JSON
 * texts one after the other (as the database row holds them: not serialised twice), the head a
 * small JSON object (the commit, each submission's number, campaign and body bytes, the contacts
 * that became final, the submissions that ended, the configurations), so opening the journal
 * parses the heads only. A record whose checksum fails ends the segment (a cut or torn tail is
 * ignored). Bounded: a new segment starts past `segmentBytes` (with the latest
 * webhook configurations at its head), and a segment is deleted once every submission it has a
 * record of has ended (all its contacts final) and it is not the one written.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** A submission the journal recorded. */
export interface JournalSubmission {
  readonly seq: number;
  /** The commit that wrote it. */
  readonly commit: number;
  /** Its campaign (0: none). */
  readonly campaignId: number;
  /** Its contacts as the database keeps them (JSON text of the array). */
  readonly contacts: string;
}

/** Everything a journal's segments say, oldest first. */
export interface JournalContents {
  /** Submissions recorded, by number (the latest record of a number wins). */
  readonly submissions: ReadonlyMap<number, JournalSubmission>;
  /** Submissions that ended, with the commit that ended them. */
  readonly ended: ReadonlyMap<number, number>;
  /** Per submission, the indexes of its contacts recorded final (sent, failed, expired, rejected). */
  readonly finals: ReadonlyMap<number, ReadonlySet<number>>;
  /** The latest webhook configurations recorded (the `webhooks` value, JSON text), if any. */
  readonly webhooks?: string;
  /** The segment files read, in order. */
  readonly files: readonly string[];
  /** Segments whose tail failed its checksum or was cut: the file and the bytes ignored. */
  readonly cut: readonly { readonly file: string; readonly ignored: number }[];
}

/** What one commit adds to the journal. */
export interface JournalCommit {
  readonly commit: number;
  /** Submissions written with their contacts: number, campaign, contacts' JSON text. */
  readonly accepted: readonly (readonly [seq: number, campaignId: number, contacts: string])[];
  /** Submissions that ended. */
  readonly ended: readonly number[];
  /** Submissions that changed: their state digits (one a contact) as the step wrote them. @default none */
  readonly states?: readonly (readonly [seq: number, state: string])[];
  /** The webhook configurations (JSON text), when the step wrote them. */
  readonly webhooks?: string;
}

/** Options of {@link IntakeJournal}. */
export interface IntakeJournalOptions {
  /**
   * A new segment starts once the one written is this large.
   * @default 8_388_608 (8 MiB)
   */
  readonly segmentBytes?: number;
}

const MAGIC = Buffer.from('SPJRNL2\n', 'latin1');
/** Length, checksum, body length. */
const HEAD = 16;
/** A scratch buffer of this size at most is kept between records (larger ones are made for the record). */
const SCRATCH_KEPT = 4 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(64 * 1024);

function checksum(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest().subarray(0, 8);
}

/**
 * One record: `bodies` (the contacts' texts) one after the other, then the head `head(lengths)`
 * made with their byte lengths. Encoded into a reused buffer (a new Buffer per record costs more
 * than the rest of the record); the answer is valid until the next call.
 */
function frame(bodies: readonly string[], head: (lengths: readonly number[]) => string): Buffer {
  const lengths = bodies.map((b) => Buffer.byteLength(b, 'utf8'));
  const headText = head(lengths);
  const bodyLength = lengths.reduce((a, b) => a + b, 0);
  const size = HEAD + bodyLength + Buffer.byteLength(headText, 'utf8');
  let out = scratch;
  if (out.length < size) {
    out = Buffer.allocUnsafe(size);
    if (size <= SCRATCH_KEPT) scratch = out;
  }
  let at = HEAD;
  for (const b of bodies) at += out.write(b, at, 'utf8');
  out.write(headText, at, 'utf8');
  out.writeUInt32LE(size - 4 - 8, 0);
  out.writeUInt32LE(bodyLength, 12);
  checksum(out.subarray(12, size)).copy(out, 4);
  return out.subarray(0, size);
}

/** The segment files of the journal of `file` (the database), in order. */
export function journalFiles(file: string): string[] {
  const dir = dirname(file);
  const prefix = `${basename(file)}.intake-`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.startsWith(prefix) && /^\d{6}$/.test(n.slice(prefix.length)))
    .sort()
    .map((n) => join(dir, n));
}

function segmentNumber(file: string): number {
  return Number(file.slice(-6));
}

/** A record's head: commit, accepted (number, campaign, body bytes), finals, ended, webhooks. */
interface Head {
  readonly c: number;
  readonly a?: [number, number, number][];
  readonly e?: number[];
  readonly f?: [number, number[]][];
  readonly w?: unknown;
}

/** State digits of a final contact: 3 sent, 4 failed, 5 expired, 6 rejected (core/dispatch). */
const isFinal = (digit: string | undefined) => digit !== undefined && digit >= '3' && digit <= '6';

/**
 * Reads one segment: its records up to the first that is cut or fails its checksum, each as its
 * head and its body; answers the bytes ignored at its end.
 */
function readSegment(file: string, onRecord: (head: Head, body: Buffer) => void): number {
  const bytes = readFileSync(file);
  if (bytes.length < MAGIC.length || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return bytes.length;
  let at = MAGIC.length;
  while (at + HEAD <= bytes.length) {
    const end = at + 12 + bytes.readUInt32LE(at);
    if (end > bytes.length || end < at + HEAD) break;
    if (!checksum(bytes.subarray(at + 12, end)).equals(bytes.subarray(at + 4, at + 12))) break;
    const bodyEnd = at + HEAD + bytes.readUInt32LE(at + 12);
    if (bodyEnd > end) break;
    let head: Head;
    try {
      head = JSON.parse(bytes.toString('utf8', bodyEnd, end)) as Head;
    } catch {
      // A head its checksum let through and JSON does not read: the journal's end, as a cut tail is
      // (the caller reports where reading stopped: the recovery's `journal.cut`).
      break;
    }
    onRecord(head, bytes.subarray(at + HEAD, bodyEnd));
    at = end;
  }
  return bytes.length - at;
}

/** Reads every segment of the journal of `file`; `withContacts` keeps the contacts' text (a recovery). */
export function readJournal(file: string, withContacts = true): JournalContents {
  const submissions = new Map<number, JournalSubmission>();
  const ended = new Map<number, number>();
  const finals = new Map<number, Set<number>>();
  let webhooks: string | undefined;
  const files = journalFiles(file);
  const cut: { file: string; ignored: number }[] = [];
  for (const f of files) {
    const ignored = readSegment(f, (r, body) => {
      let at = 0;
      for (const [seq, campaignId, length] of r.a ?? []) {
        submissions.set(seq, { seq, commit: r.c, campaignId, contacts: withContacts ? body.toString('utf8', at, at + length) : '' });
        at += length;
        ended.delete(seq);
      }
      for (const seq of r.e ?? []) ended.set(seq, r.c);
      for (const [seq, indexes] of r.f ?? []) {
        let set = finals.get(seq);
        if (set === undefined) finals.set(seq, (set = new Set()));
        for (const i of indexes) set.add(i);
      }
      if (r.w !== undefined) webhooks = JSON.stringify(r.w);
    });
    if (ignored > 0) cut.push({ file: f, ignored });
  }
  return { submissions, ended, finals, ...(webhooks !== undefined ? { webhooks } : {}), files, cut };
}

/** Appends to the journal of a database, and drops the segments whose submissions all ended. */
export class IntakeJournal {
  readonly #file: string;
  readonly #segmentBytes: number;
  /** Submissions not ended, by number: the segments holding records of them. */
  readonly #segmentsOf = new Map<number, Set<number>>();
  /** Per segment, the submissions not ended it holds records of. */
  readonly #open = new Map<number, Set<number>>();
  /** Submissions not ended: their state digits as last seen (to record the contacts that became final). */
  readonly #states = new Map<number, string>();
  #current = 0;
  #fd: number | undefined;
  #size = 0;
  #webhooks: string | undefined;
  /** An append failed (a full disk): the journal was deleted and is not written until the next open. */
  #abandoned = false;
  /** Why it was abandoned (the append's error), said once by the server's log. */
  #abandonedBecause: string | undefined;

  /** Opens the journal of `file` (the database): its segments are read to know what is open. */
  constructor(file: string, options: IntakeJournalOptions = {}) {
    this.#file = file;
    this.#segmentBytes = options.segmentBytes ?? 8 * 1024 * 1024;
    const files = journalFiles(file);
    for (const f of files) {
      const n = segmentNumber(f);
      this.#open.set(n, new Set());
      readSegment(f, (r) => {
        for (const [seq] of r.a ?? []) this.#record(seq, n);
        for (const [seq] of r.f ?? []) this.#record(seq, n);
        for (const seq of r.e ?? []) this.#end(seq);
        if (r.w !== undefined) this.#webhooks = JSON.stringify(r.w);
      });
      this.#current = n;
    }
    // Appends go to a new segment (made at the first: opening writes nothing), as the last one may
    // end in a torn record.
    this.#current++;
    this.#open.set(this.#current, new Set());
    this.#dropEnded();
  }

  #record(seq: number, segment: number): void {
    let segments = this.#segmentsOf.get(seq);
    if (segments === undefined) this.#segmentsOf.set(seq, (segments = new Set()));
    segments.add(segment);
    this.#open.get(segment)?.add(seq);
  }

  #end(seq: number): void {
    const segments = this.#segmentsOf.get(seq);
    this.#states.delete(seq);
    if (segments === undefined) return;
    this.#segmentsOf.delete(seq);
    for (const n of segments) this.#open.get(n)?.delete(seq);
  }

  #path(n: number): string {
    return `${this.#file}.intake-${String(n).padStart(6, '0')}`;
  }

  /** Starts the segment `#current` (`next`: a new one after it). */
  #start(next: boolean): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    if (next) {
      this.#current++;
      this.#open.set(this.#current, new Set());
    }
    this.#fd = openSync(this.#path(this.#current), 'w');
    writeSync(this.#fd, MAGIC);
    this.#size = MAGIC.length;
    // Each segment carries the latest configurations: the older ones may go.
    if (this.#webhooks !== undefined) {
      const w = this.#webhooks;
      this.#append([], () => `{"c":0,"w":${w}}`);
    }
  }

  #append(bodies: readonly string[], head: (lengths: readonly number[]) => string): void {
    if (this.#fd === undefined) this.#start(false);
    const b = frame(bodies, head);
    writeSync(this.#fd!, b, 0, b.length, this.#size);
    this.#size += b.length;
  }

  /** Deletes every segment but the current whose submissions all ended. */
  #dropEnded(): void {
    for (const [n, open] of this.#open) {
      if (n === this.#current || open.size > 0) continue;
      rmSync(this.#path(n), { force: true });
      this.#open.delete(n);
    }
  }

  /** Submissions the journal holds as not ended. */
  get openSubmissions(): number {
    return this.#segmentsOf.size;
  }

  /** Segment files kept now. */
  get segments(): number {
    return this.#open.size;
  }

  /** Whether a submission is recorded and not ended. */
  holds(seq: number): boolean {
    return this.#segmentsOf.has(seq);
  }

  /** The indexes of a submission's contacts that became final since its state seen last. */
  #finals(seq: number, state: string): number[] {
    const before = this.#states.get(seq);
    this.#states.set(seq, state);
    const out: number[] = [];
    for (let i = 0; i < state.length; i++) if (isFinal(state[i]) && !isFinal(before?.[i])) out.push(i);
    return out;
  }

  /** Whether an append failed and the journal was deleted (until the next open). */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** The error of the append that failed, when the journal was abandoned. */
  get abandonedBecause(): string | undefined {
    return this.#abandonedBecause;
  }

  /**
   * After a commit: what it accepted, what ended, the configurations if they changed. Never
   * throws: the commit is written whatever happens here. An append that fails (a full disk)
   * deletes the journal, so a recovery never reads one with a hole: until the next open (which
   * makes it again from the database) a recovery has the seal's count and id range only.
   */
  committed(c: JournalCommit): void {
    if (this.#abandoned) return;
    try {
      this.#committed(c);
    } catch (e) {
      // Said by the server (ServerStorage.journalLost, logged once), not thrown: the commit stands.
      this.#abandonedBecause = e instanceof Error ? e.message : String(e);
      this.#abandon();
    }
  }

  #abandon(): void {
    this.#abandoned = true;
    try {
      if (this.#fd !== undefined) closeSync(this.#fd);
    } catch {
      // closed or not, the files go
    }
    this.#fd = undefined;
    for (const f of journalFiles(this.#file)) {
      try {
        rmSync(f, { force: true });
      } catch {
        // not a file of ours to remove (a directory in its place): left
      }
    }
    this.#open.clear();
    this.#segmentsOf.clear();
    this.#states.clear();
  }

  #committed(c: JournalCommit): void {
    const webhooks = c.webhooks !== undefined && c.webhooks !== this.#webhooks ? c.webhooks : undefined;
    const ending = new Set(c.ended);
    const finals: (readonly [number, number[]])[] = [];
    for (const [seq, state] of c.states ?? []) {
      if (ending.has(seq)) continue;
      const indexes = this.#finals(seq, state);
      if (indexes.length > 0) finals.push([seq, indexes]);
    }
    if (c.accepted.length === 0 && c.ended.length === 0 && finals.length === 0 && webhooks === undefined) return;
    this.#append(
      c.accepted.map(([, , contacts]) => contacts),
      (lengths) => {
        let json = `{"c":${c.commit}`;
        if (c.accepted.length > 0) json += `,"a":[${c.accepted.map(([seq, campaignId], i) => `[${seq},${campaignId},${lengths[i]!}]`).join(',')}]`;
        if (finals.length > 0) json += `,"f":[${finals.map(([seq, indexes]) => `[${seq},[${indexes.join(',')}]]`).join(',')}]`;
        if (c.ended.length > 0) json += `,"e":[${c.ended.join(',')}]`;
        if (webhooks !== undefined) json += `,"w":${webhooks}`;
        return `${json}}`;
      },
    );
    if (webhooks !== undefined) this.#webhooks = webhooks;
    for (const [seq] of c.accepted) this.#record(seq, this.#current);
    for (const [seq] of finals) this.#record(seq, this.#current);
    for (const seq of c.ended) this.#end(seq);
    if (this.#size >= this.#segmentBytes) this.#start(true);
    if (c.ended.length > 0 || this.#open.size > 2) this.#dropEnded();
  }

  /**
   * At load, with the submissions the database holds (number, campaign, contacts, state digits):
   * those the journal holds that the database ended are forgotten (their end was not recorded: a
   * stop between the commit and the append), those it lacks (a store older than the journal) are
   * recorded, and the contacts the database holds final are recorded final.
   */
  reconcile(commit: number, live: readonly (readonly [seq: number, campaignId: number, contacts: () => string, state: string])[]): void {
    const liveSeqs = new Set(live.map(([seq]) => seq));
    const ended = [...this.#segmentsOf.keys()].filter((seq) => !liveSeqs.has(seq));
    const missing = live.filter(([seq]) => !this.#segmentsOf.has(seq)).map(([seq, campaignId, contacts]) => [seq, campaignId, contacts()] as const);
    this.committed({ commit, accepted: missing, ended, states: live.map(([seq, , , state]) => [seq, state] as const) });
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** A submission whose contacts the database lost, as the journal recorded it. */
export interface LostSubmission {
  readonly seq: number;
  readonly campaignId: number;
  /**
   * `commit`: accepted in a commit the database lacks (its admission in the campaign statistics
   * was lost with it); `row`: its row was left out of a damaged database file.
   */
  readonly lostIn: 'commit' | 'row';
  /** Its contacts as the database kept them, less those the journal or the statistics show sent or final. */
  readonly contacts: readonly object[];
}

/** What the database still holds, for {@link journalLoss}. */
export interface HeldByDatabase {
  /** Commits it holds. */
  readonly commit: number;
  /** Submissions it holds (live). */
  readonly live: ReadonlySet<number>;
  /** Submissions it holds as finished. */
  readonly finished: ReadonlySet<number>;
  /** Contacts (`company:contact id`) whose statistics show a SENT or a final status. */
  readonly reported: ReadonlySet<string>;
}

/** What the journal says was lost: submissions to report FAILED, and those whose end was lost. */
export interface JournalLoss {
  readonly lost: readonly LostSubmission[];
  /** Submissions that ended in a lost commit: their outcome (sent or notified) cannot be told. */
  readonly endedUnknown: number;
}

/**
 * The journal's submissions the database does not hold: accepted in a commit past the database's
 * (`commit`), or at or before it and neither live nor ended in it (a row left out of a damaged file).
 */
export function journalLoss(journal: JournalContents, held: HeldByDatabase): JournalLoss {
  const lost: LostSubmission[] = [];
  let endedUnknown = 0;
  for (const s of journal.submissions.values()) {
    if (held.live.has(s.seq) || held.finished.has(s.seq)) continue;
    const ended = journal.ended.get(s.seq);
    if (ended !== undefined && ended <= held.commit) continue;
    if (ended !== undefined) {
      endedUnknown++;
      continue;
    }
    const final = journal.finals.get(s.seq);
    const contacts = (JSON.parse(s.contacts) as { id?: unknown; companyId?: unknown }[]).filter((c, i) => final?.has(i) !== true && !held.reported.has(`${String(c.companyId)}:${String(c.id)}`));
    if (contacts.length > 0) lost.push({ seq: s.seq, campaignId: s.campaignId, lostIn: s.commit > held.commit ? 'commit' : 'row', contacts });
  }
  return { lost, endedUnknown };
}
