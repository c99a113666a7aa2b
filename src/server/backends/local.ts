/**
 * The backend of one process, in memory or on the embedded database: its contact ids are a counter
 * of its own, its sets (blocklist, campaign and sent phones, idempotency keys) are this process's,
 * its contacts go to the engine. The two differ only in their persistence: nothing to wait for
 * (backends/memory), or a group commit to the database (backends/sqlite), and in whether the
 * books remember their changes for it (`durable`).
 */
import { succeeded } from '../lib/succeeded.js';
import type { Clock } from '../../core/clock.js';
import type { Engine } from '../../core/engine.js';
import { localDeadLetters } from '../dead-letter-store.js';
import type { IdempotencyBook } from '../idempotency.js';
import type { Late } from '../lib/late.js';
import type { BackendName, KeptAnswer, KeyedAnswer, QueuedRequest, RequestWrite, SendHold } from '../ports/backend.js';
import type { OutgoingSms } from '../ports/channel.js';
import type { LocalContactIds } from '../ports/contact-ids.js';
import type { Persistence } from '../ports/persistence.js';
import type { DeadLetterStore } from '../ports/dead-letters.js';
import type { FleetDispatch, ServerBackend } from '../ports/server-backend.js';
import type { ServerContact } from '../ports/server-contact.js';
import type { BackendParts } from './server-backend.js';
import type { OutboxEvent } from '../../events/outbox.js';

export interface LocalBackendDeps {
  readonly name: Extract<BackendName, 'memory' | 'sqlite'>;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly contactIds: LocalContactIds;
  readonly idempotency: IdempotencyBook;
  readonly persistence: Persistence;
  /** Every step is written before what it made leaves (the embedded database). */
  readonly durable: boolean;
  /** The parts, once made (set by `attach`). */
  readonly parts: Late<BackendParts>;
  /** Dead letters an operator replayed: back in the outbox (durable: with a step, which this resolves after). */
  readonly replay: (events: readonly OutboxEvent[]) => Promise<void>;
  /** Once the parts are made (`attach`): what the store kept loaded into them. @default nothing */
  readonly restore?: () => void;
  /** The reports changed (the durable step writes them then, not at every step). @default none */
  readonly reportsChanged?: () => void;
  readonly metricsSources?: ServerBackend['metricsSources'];
  /** Once the server is built. @default nothing */
  readonly start?: () => void;
}

const NO_HOLD: SendHold = { taken: undefined, sent: undefined, release: () => Promise.resolve() };

export class LocalBackend implements ServerBackend<BackendParts> {
  readonly name: LocalBackendDeps['name'];
  readonly persistence: Persistence;
  readonly contactIds: LocalContactIds;
  readonly campaignsHere = true;
  readonly screensWhileParsing = true;
  readonly tracksChanges: boolean;
  readonly blocklistTracksChanges: boolean;
  readonly recallsSends = false;
  readonly channelMemory: ServerBackend['channelMemory'];
  readonly notifier: ServerBackend['notifier'];
  readonly dispatch: ServerBackend['dispatch'];
  readonly fleet: FleetDispatch;
  readonly durableCommit: ServerBackend['durableCommit'];
  readonly smsAnswered: ServerBackend['smsAnswered'];
  readonly reportsChanged: (() => void) | undefined;
  readonly #deps: LocalBackendDeps;
  #deadLetters: DeadLetterStore | undefined;

  constructor(deps: LocalBackendDeps) {
    this.#deps = deps;
    const { persistence, durable, engine } = deps;
    this.name = deps.name;
    this.persistence = persistence;
    this.contactIds = deps.contactIds;
    this.tracksChanges = durable;
    this.blocklistTracksChanges = durable;
    this.reportsChanged = deps.reportsChanged;
    this.channelMemory = durable ? { trackChanges: true, onChange: () => persistence.schedule() } : {};
    // In memory the notifier puts its events in the outbox itself; durable, they wait for their step.
    this.notifier = durable
      ? {
          stage: (event) => persistence.stage(event),
          stageRun: (run) => persistence.stageRun(run),
          onRunDone: (runId) => persistence.delivered([runId]),
          onRunChanged: (run) => persistence.runChanged(run),
          trackChanges: true,
        }
      : {};
    this.durableCommit = durable ? () => persistence.commit() : undefined;
    // A message goes to the channel once the step that handed it out is written.
    this.dispatch = this.durableCommit ? { beforeSend: this.durableCommit } : {};
    this.smsAnswered = durable ? (id) => persistence.smsAnswered(id) : undefined;
    this.fleet = {
      handedOut: () => {},
      handOutEnded: () => {},
      outcomes: () => {},
      retryIndexOf: (o) => o.retryIndex,
      about: (_contact, fn) => fn(),
      roomFreed: () => {},
      resubmit: (submission) => engine.submit(submission),
    };
  }

  get deadLetters(): DeadLetterStore {
    return (this.#deadLetters ??= localDeadLetters({ book: this.#deps.parts.get().deadLetterBook, clock: this.#deps.clock, replay: this.#deps.replay }));
  }

  attach(parts: BackendParts): void {
    this.#deps.parts.set(parts);
    this.#deps.restore?.();
  }

  refusal(): undefined {
    return undefined;
  }

  backlog(): number {
    const s = this.#deps.engine.stats();
    return s.queued + s.waitingRetry + s.inFlight;
  }

  hold(): Promise<SendHold> {
    return Promise.resolve(NO_HOLD);
  }

  queue(request: QueuedRequest): void {
    const { campaignPhones, sentPhones } = this.#deps.parts.get();
    if (request.submission.contacts.length > 0) this.#deps.engine.submit(request.submission);
    campaignPhones.remember(request.companyId, request.campaignId, request.phones);
    // A later contact with one of these phones is already_sent (within the window).
    sentPhones.remember(request.submission.businessId, request.submission.typeId, request.phones, request.now);
  }

  async writeRequest<A extends { readonly answer: KeptAnswer }>(
    requestId: string,
    run: () => A,
    keyed: (out: A) => KeyedAnswer | undefined,
  ): Promise<{ readonly out: A; readonly write: RequestWrite }> {
    const out = run();
    if (out.answer.status !== 202) return { out, write: { kind: 'written' } };
    // The answer under its key goes in the same write as the contacts.
    return { out, write: await this.#commitKept(requestId, keyed(out)) };
  }

  async writeSms(requestId: string, items: readonly OutgoingSms[], keyed: KeyedAnswer | undefined): Promise<RequestWrite> {
    // Written before the 202, and before the gateway sees them.
    this.persistence.stageSms(items);
    const write = await this.#commitKept(requestId, keyed);
    if (write.kind === 'written') this.#deps.parts.get().sms.enqueue(items);
    return write;
  }

  async #commitKept(requestId: string, keyed: KeyedAnswer | undefined): Promise<RequestWrite> {
    const { idempotency, clock } = this.#deps;
    if (keyed !== undefined) idempotency.keep(keyed.companyId, keyed.key, requestId, keyed.answer, clock.now());
    try {
      await this.persistence.commit();
    } catch (error) {
      return { kind: 'failed', error };
    }
    if (keyed !== undefined) idempotency.settle(keyed.companyId, keyed.key, requestId);
    return { kind: 'written' };
  }

  beginKey(companyId: number, key: string, fingerprint: string, requestId: string, now: number) {
    return Promise.resolve(this.#deps.idempotency.begin(companyId, key, fingerprint, requestId, now));
  }

  endKey(companyId: number, key: string, requestId: string): Promise<void> {
    this.#deps.idempotency.end(companyId, key, requestId);
    return Promise.resolve();
  }

  readConfigs(): Promise<void> {
    return Promise.resolve();
  }

  writeConfig(): Promise<boolean> {
    return this.written();
  }

  blocklistReady(): Promise<void> {
    return Promise.resolve();
  }

  blocklistChanged(): void {
    this.persistence.schedule();
  }

  blocklistWritten(): Promise<boolean> {
    return this.written();
  }

  written(): Promise<boolean> {
    return succeeded(this.persistence.commit());
  }

  releaseSent(contact: ServerContact, businessId: number, typeId: number): void {
    const { sentPhones } = this.#deps.parts.get();
    if (sentPhones.enabled && sentPhones.release(businessId, typeId, contact.phone, this.#deps.clock.now())) this.persistence.schedule();
  }

  metricsSources(): ReturnType<ServerBackend['metricsSources']> {
    return this.#deps.metricsSources?.() ?? {};
  }

  start(): void {
    this.#deps.start?.();
  }

  stop(): void {}

  release(): Promise<void> {
    return Promise.resolve();
  }

  idle(): boolean {
    return true;
  }
}
