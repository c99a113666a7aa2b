/**
 * The snapshot file: the engine's snapshot and the server's own state (webhook configurations and
 * secrets, campaign statistics, the delivery outbox, queued SMS, reports and their data, ids), as
 * one JSON document written atomically (temporary file, fsync, rename), so a crash while writing
 * leaves the previous snapshot intact.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import type { BlocklistRow } from './blocklist.js';
import type { DeadLetter } from './dead-letters.js';
import type { CampaignPhonesRow } from './campaign-phones.js';
import type { SentPhonesRow } from './sent-phones.js';
import type { EngineSnapshot } from '../core/snapshot.js';
import type { OutboxSnapshot } from '../events/outbox.js';
import type { OutgoingSms } from './ports/channel.js';
import type { NotifierSnapshot } from './notifier.js';
import type { ReportRecord } from './report-service.js';

export const SERVER_SNAPSHOT_FORMAT = 'sendpool-server-snapshot';
export const SERVER_SNAPSHOT_VERSION = 1;

/** The server's part of a snapshot. */
export interface ServerStateSnapshot {
  readonly version: 1;
  /** Next contact id (the HSM `id`). */
  readonly nextContactId: number;
  readonly notifier: NotifierSnapshot;
  readonly outbox: OutboxSnapshot;
  readonly reports: { readonly nextId: number; readonly reports: readonly ReportRecord[] };
  /** SMS accepted but not yet handed to the gateway. */
  readonly sms: readonly OutgoingSms[];
  /** Every company's blocked phones (absent in older files). */
  readonly blocklist?: readonly BlocklistRow[];
  /** Phones each campaign took (absent in older files). */
  readonly campaignPhones?: readonly CampaignPhonesRow[];
  /** Phones each business took per template type within `alreadySentWindowMs` (absent in older files). */
  readonly sentPhones?: readonly SentPhonesRow[];
  /** Messages sent and attendances closed, for the period reports (absent in older snapshots). */
  readonly activity?: readonly (readonly [string, unknown])[];
  /** Webhook events dead-lettered and kept (absent in older snapshots). */
  readonly deadLetters?: readonly DeadLetter[];
  /**
   * The engine's ids (`<submission>.<index>`) of contacts whose end a send's result notified while
   * the engine's outcome of it was not taken yet (kept in `engine`): not notified again after the
   * restart. Absent when there are none, and in older snapshots.
   */
  readonly endsNotified?: readonly string[];
}

/** The whole file. */
export interface SnapshotFile {
  readonly format: typeof SERVER_SNAPSHOT_FORMAT;
  readonly version: 1;
  /** Wall-clock time of the snapshot, epoch ms. */
  readonly takenAt: number;
  /** Give it to `createEngine(fleet, { snapshot })`. */
  readonly engine: EngineSnapshot;
  /** Give it to `buildServer({ restore })`. */
  readonly server: ServerStateSnapshot;
}

const SNAPSHOT_FILE = Symbol.for('sendpool.SnapshotFileError');

/** Thrown for a file that is not a server snapshot of a known version. */
export class SnapshotFileError extends Error {
  readonly [SNAPSHOT_FILE] = true;
  /** The file at fault. */
  readonly path: string;

  constructor(path: string, detail: string) {
    super(`Snapshot file ${path}: ${detail}`);
    this.name = 'SnapshotFileError';
    this.path = path;
  }
}

/** True when `e` is a {@link SnapshotFileError}, from this copy of sendpool or another. */
export function isSnapshotFileError(e: unknown): e is SnapshotFileError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[SNAPSHOT_FILE] === true;
}

/** Reads a snapshot file; undefined when it does not exist (a first start). */
export function readSnapshotFile(path: string): SnapshotFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new SnapshotFileError(path, `not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const v = value as Partial<SnapshotFile> | null;
  if (typeof v !== 'object' || v === null || v.format !== SERVER_SNAPSHOT_FORMAT) {
    throw new SnapshotFileError(path, `expected "format": "${SERVER_SNAPSHOT_FORMAT}"`);
  }
  if (v.version !== SERVER_SNAPSHOT_VERSION) throw new SnapshotFileError(path, `expected version ${SERVER_SNAPSHOT_VERSION}, got ${String(v.version)}`);
  if (typeof v.engine !== 'object' || typeof v.server !== 'object') throw new SnapshotFileError(path, 'expected "engine" and "server" objects');
  return v as SnapshotFile;
}

/** Writes a snapshot file atomically. */
export function writeSnapshotFile(path: string, file: SnapshotFile): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, JSON.stringify(file));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}
