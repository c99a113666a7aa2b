/**
 * What the group commit (durability.ts) gathers for its next step besides the books' changes: the
 * webhook events and runs made since the last step, runs written before that changed, the events
 * delivered or given up; the SMS accepted and those the gateway answered. The outbox and SMS
 * components take them with each step (components/outbox.ts, components/sms.ts).
 */
import { storedRun, writtenId } from '../../enqueued-runs.js';
import type { OutgoingSms } from '../../ports/channel.js';
import type { EnqueuedRun, WrittenEvent } from '../../ports/persistence.js';
import type { StoredRowChanges } from '../../../storage/server-storage.js';

export class StagedWrites {
  #staged: WrittenEvent[] = [];
  /** Runs written before, to write again as they are now (not delivered again: they are live here). */
  readonly #changedRuns = new Map<string, EnqueuedRun>();
  #delivered: string[] = [];
  #smsIn: OutgoingSms[] = [];
  #smsDone: string[] = [];
  /** What the last step took to put in the outbox: delivered once that step is written. */
  #taken: WrittenEvent[] = [];

  /** A webhook event, a run or a replayed dead letter: written with the next step, delivered after it. */
  stage(record: WrittenEvent): void {
    this.#staged.push(record);
  }

  /** A run written before changed (a dead-lettered notification): its row is written again. */
  runChanged(run: EnqueuedRun): void {
    this.#changedRuns.set(run.id, run);
  }

  /** Events delivered (or given up): their rows go in a later step (lost, they are delivered again). */
  delivered(ids: readonly string[]): void {
    for (const id of ids) this.#delivered.push(id);
  }

  /** SMS accepted: written in the next step. */
  stageSms(items: readonly OutgoingSms[]): void {
    for (const s of items) this.#smsIn.push(s);
  }

  /** An SMS the gateway answered: its row goes in a later step (lost, it is sent again). */
  smsAnswered(smsId: string): void {
    this.#smsDone.push(smsId);
  }

  /**
   * The outbox's rows of a step: what was staged and the runs that changed put (before the
   * deletes: a run that changed and ended in one step goes), the events delivered deleted.
   */
  takeOutbox(): StoredRowChanges | undefined {
    const staged = this.#staged;
    this.#staged = [];
    this.#taken = staged;
    const delivered = this.#delivered;
    this.#delivered = [];
    const changedRuns = [...this.#changedRuns.values()].map((run) => [run.id, { run: storedRun(run) }] as const);
    this.#changedRuns.clear();
    const put = [...staged.map((e) => [writtenId(e), e] as const), ...changedRuns];
    return put.length + delivered.length > 0 ? { put, delete: delivered } : undefined;
  }

  /** The SMS rows of a step: those accepted put, those answered deleted. */
  takeSms(): StoredRowChanges | undefined {
    const smsIn = this.#smsIn;
    this.#smsIn = [];
    const smsDone = this.#smsDone;
    this.#smsDone = [];
    return smsIn.length + smsDone.length > 0 ? { put: smsIn.map((s) => [s.smsId, s] as const), delete: smsDone } : undefined;
  }

  /** The events and runs the last step put in the outbox, once it is written: they may be delivered now. */
  takeWritten(): WrittenEvent[] {
    const taken = this.#taken;
    this.#taken = [];
    return taken;
  }
}
