/**
 * The redis backend: an instance of a fleet (docs/scaling.md). Contacts wait in a queue every
 * instance shares and any instance sends them; contact ids, webhook configurations, the blocklist,
 * campaign and sent phones, idempotency keys, statistics and dead letters are the fleet's. A step
 * is written to Redis before what it made leaves, as on the embedded database.
 *
 * Made in two halves (redis-wiring.ts): the shared queue and memory first, which the
 * server's parts are built over, then, once they exist (`attach`), the persistence that writes
 * their changes and feeds the engine.
 */
import { succeeded } from '../../lib/succeeded.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../../core/clock.js';
import type { Engine } from '../../../core/engine.js';
import type { RandomSource } from '../../../events/random.js';
import { Late } from '../../lib/late.js';
import type { KeptAnswer, KeyedAnswer, QueuedRequest, RequestWrite, SendHold, SendIntent } from '../../ports/backend.js';
import type { OutgoingSms } from '../../ports/channel.js';
import type { DeadLetterStore } from '../../ports/dead-letters.js';
import type { Persistence } from '../../ports/persistence.js';
import type { FleetDispatch, ServerBackend } from '../../ports/server-backend.js';
import type { ServerContact } from '../../ports/server-contact.js';
import type { ServerParts } from '../../ports/server-parts.js';
import type { TrackedMessage } from '../../ports/tracked-message.js';
import { chunksOf } from './chunks.js';
import type { RedisServerOptions } from './options.js';
import { redisParts, redisPersistence, type RedisParts } from './redis-wiring.js';

export interface RedisBackendOptions {
  readonly redis: RedisServerOptions;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly random: RandomSource;
  /** The notifier's bound of tracked messages; the channel's memory holds twice as many ids. */
  readonly maxTracked: number;
  readonly batchIntervalMs: number;
  readonly failureWindowMs: number;
  readonly log: FastifyBaseLogger;
  /** Bounds of the fleet's dead letters. */
  readonly deadLetters: { readonly maxPerCompany: number; readonly maxAgeMs: number };
}

type Wired = ReturnType<typeof redisPersistence>;

export class RedisBackend implements ServerBackend {
  readonly name = 'redis';
  readonly campaignsHere = false;
  readonly screensWhileParsing = false;
  readonly tracksChanges = false;
  /** The blocklist's changes are synchronised with the fleet's. */
  readonly blocklistTracksChanges = true;
  readonly recallsSends = true;
  readonly reportsChanged = undefined;
  readonly channelMemory: ServerBackend['channelMemory'];
  readonly notifier: ServerBackend['notifier'];
  readonly dispatch: ServerBackend['dispatch'];
  readonly fleet: FleetDispatch;
  readonly durableCommit: () => Promise<void>;
  readonly smsAnswered: (smsId: string) => void;
  readonly contactIds: RedisParts['ids'];
  readonly #options: RedisBackendOptions;
  readonly #shared: RedisParts;
  readonly #wired = new Late<Wired>('the Redis persistence');
  readonly #parts = new Late<ServerParts>('the server parts');

  constructor(options: RedisBackendOptions) {
    this.#options = options;
    const shared = redisParts(options.redis, options.engine, {
      maxTracked: options.maxTracked,
      batchIntervalMs: options.batchIntervalMs,
      failureWindowMs: options.failureWindowMs,
      clock: options.clock,
      random: options.random,
      durability: () => this.persistence,
      log: () => options.log,
    });
    this.#shared = shared;
    this.contactIds = shared.ids;
    const persistence = () => this.persistence;
    this.channelMemory = { trackChanges: true, onChange: () => persistence().schedule(), recall: shared.recallChannel, scan: shared.scanChannel };
    this.notifier = {
      stage: (event) => persistence().stage(event),
      stageRun: (run) => persistence().stageRun(run),
      onRunDone: (runId) => persistence().delivered([runId]),
      onRunChanged: (run) => persistence().runChanged(run),
      statistics: shared.statistics,
      trackChanges: true,
      forgetRows: false,
      // What another instance sent: its company's webhooks are read before its status is notified
      // (an instance just started has not read them yet, and would build nothing).
      recall: async (keys) => {
        const rows = await shared.recallTracked(keys);
        await this.#wired.get().context.webhooks.ensure(companiesOf(rows));
        return rows;
      },
    };
    this.durableCommit = () => persistence().commit();
    // Hand-outs are written (with the step `beforeSend` waits for) before any is sent.
    this.dispatch = { beforeSend: this.durableCommit, messageForChannel: (m) => shared.shared.forChannel(m) };
    this.smsAnswered = (id) => persistence().smsAnswered(id);
    this.fleet = {
      handedOut: (messages) => shared.shared.handedOut(messages),
      handOutEnded: (m) => shared.shared.ended(m),
      outcomes: (outcomes) => shared.shared.outcomes(outcomes),
      retryIndexOf: (o) => shared.shared.retryIndexOf(o),
      about: (contact, fn) => this.#wired.get().persistence.about(contact, fn),
      roomFreed: () => {
        if (shared.shared.open < shared.prefetch / 2) this.#wired.get().persistence.kick();
      },
      // A chunk of the shared queue, its hand-outs after the failed one (ids never repeat).
      resubmit: (submission, contact, handout) => this.#wired.get().persistence.stageChunks(chunksOf(submission, contact.requestId, contact.companyId, handout + 1)),
    };
  }

  get persistence(): Persistence {
    return this.#wired.get().persistence;
  }

  get deadLetters(): DeadLetterStore {
    return this.#wired.get().deadLetters;
  }

  attach(parts: ServerParts): void {
    this.#parts.set(parts);
    const { notifier, blocklist, channelMemory, dispatch, sms, deliver, log, sentPhones } = parts;
    this.#wired.set(
      redisPersistence(this.#options.redis, this.#shared, {
        notifier,
        blocklist,
        channelMemory,
        dispatch,
        sms,
        secrets: parts.secrets,
        deliver,
        log,
        deadLetters: this.#options.deadLetters,
        now: () => this.#options.clock.now(),
        alreadySentWindowMs: sentPhones.windowMs,
      }),
    );
  }

  refusal() {
    return this.#wired.get().persistence.refusal;
  }

  backlog(): number {
    return this.#wired.get().persistence.backlog;
  }

  async hold(intent: SendIntent): Promise<SendHold> {
    const { context } = this.#wired.get();
    const { blocklist, sentPhones, log } = this.#parts.get();
    const { companyId, campaignId, requestId } = intent;
    // Enough contact ids reserved from the shared counter before the intake runs.
    await this.contactIds.ensure(intent.contactCount);
    // Its ENQUEUED notifications go to the company's shared configuration.
    await context.webhooks.ensure([companyId]);
    // Contacts are screened against the fleet's blocklist (loaded once at start).
    await context.blocklist.ready();
    // A phone goes once per campaign, and once per business and type within the window
    // (already_sent), fleet-wide: the request reserves its phones first, taking over those of
    // requests whose instance died before their 202.
    const blocked = blocklist.view(companyId);
    const reserved = intent.phones.filter((p) => !blocked.has(p));
    const scope = sentPhones.enabled ? { businessId: intent.businessId, typeId: intent.typeId, now: this.#options.clock.now() } : undefined;
    const { taken, sent } = await context.phones.reserveTakingOver(companyId, campaignId, requestId, reserved, scope);
    return {
      taken,
      sent,
      // Best effort: phones not given back now are taken over as orphans once their hold lapses.
      release: async () => {
        if (reserved.length === 0) return;
        await context.phones
          .release(companyId, campaignId, requestId, reserved, scope)
          .catch((e: unknown) => log.warn({ err: e, campaignId, phones: reserved.length }, 'campaign phones of a request without a 202 not given back: taken over once their hold lapses'));
      },
    };
  }

  queue(request: QueuedRequest): void {
    // The contacts go to the shared queue (with the step the 202 waits for); any instance sends
    // them. Their phones were reserved before (`hold`).
    if (request.submission.contacts.length > 0) this.#wired.get().persistence.stageChunks(chunksOf(request.submission, request.requestId, request.companyId));
  }

  async writeRequest<A extends { readonly answer: KeptAnswer }>(
    requestId: string,
    run: () => A,
    keyed: (out: A) => KeyedAnswer | undefined,
  ): Promise<{ readonly out: A; readonly write: RequestWrite }> {
    const { persistence } = this.#wired.get();
    // What the intake stages besides chunks (its ENQUEUED run, its admissions) is the request's
    // part: written with its commit mark, or not at all if it is voided.
    const captured = persistence.capture(run);
    const out = captured.value;
    if (out.answer.status !== 202) return { out, write: { kind: 'written' } };
    persistence.stageRequest(requestId, captured, this.#keyRecord(keyed(out)));
    try {
      return { out, write: (await persistence.commitRequest(requestId)) ? { kind: 'written' } : { kind: 'voided' } };
    } catch (error) {
      return { out, write: { kind: 'failed', error } };
    }
  }

  async writeSms(requestId: string, items: readonly OutgoingSms[], keyed: KeyedAnswer | undefined): Promise<RequestWrite> {
    const { persistence } = this.#wired.get();
    // The SMS wait in the shared queue: any instance takes and sends them.
    persistence.stageSms(items);
    try {
      if (keyed === undefined) {
        await persistence.commit();
        return { kind: 'written' };
      }
      // A request of SMS reserves no phones: none is voided (the fence), but the answer says so if one were.
      persistence.stageRequest(requestId, { events: [], reports: [] }, this.#keyRecord(keyed));
      return (await persistence.commitRequest(requestId)) ? { kind: 'written' } : { kind: 'voided' };
    } catch (error) {
      return { kind: 'failed', error };
    }
  }

  #keyRecord(keyed: KeyedAnswer | undefined): { readonly key: string; readonly answer: string } | undefined {
    if (keyed === undefined) return undefined;
    return { key: this.#wired.get().context.idempotency.recordKey(keyed.companyId, keyed.key), answer: JSON.stringify(keyed.answer) };
  }

  beginKey(companyId: number, key: string, fingerprint: string, requestId: string) {
    // Keys are the fleet's; a key a dead instance's request holds is taken over through the fence.
    return this.#wired.get().context.idempotency.begin(companyId, key, fingerprint, requestId);
  }

  async endKey(companyId: number, key: string, requestId: string): Promise<void> {
    // Best effort: a key its dead holder left is taken over once that request is voided.
    await this.#wired
      .get()
      .context.idempotency.end(companyId, key, requestId)
      .catch((e: unknown) => this.#parts.get().log.warn({ err: e }, 'idempotency key of a request without a 202 not freed: taken over once its request is voided'));
  }

  readConfigs(companyIds: readonly number[], fresh?: boolean): Promise<void> {
    // The configuration is every instance's: read as it is now (another instance may have changed it).
    return this.#wired.get().context.webhooks.ensure(companyIds, fresh);
  }

  writeConfig(companyId: number): Promise<boolean> {
    return succeeded(this.#wired.get().context.webhooks.save(companyId));
  }

  blocklistReady(): Promise<void> {
    return this.#wired.get().context.blocklist.ready();
  }

  blocklistChanged(): void {
    // Written for every instance now (and again with the next renewal if Redis is away). A failure
    // is not lost: the change stays pending and the next sync (every second, logged) writes it.
    this.#wired
      .get()
      .context.blocklist.sync()
      .catch(() => {});
  }

  blocklistWritten(): Promise<boolean> {
    return succeeded(this.#wired.get().context.blocklist.sync());
  }

  written(): Promise<boolean> {
    return succeeded(this.persistence.commit());
  }

  releaseSent(contact: ServerContact, businessId: number, typeId: number): void {
    const { sentPhones, log } = this.#parts.get();
    if (!sentPhones.enabled) return;
    this.#wired
      .get()
      .context.phones.releaseSent(businessId, typeId, contact.requestId, contact.phone, this.#options.clock.now())
      .catch((e: unknown) => log.warn({ err: e }, 'a phone given back (already_sent) not written to Redis'));
  }

  metricsSources() {
    return { redis: this.#wired.get().metrics };
  }

  /** Work waiting in the shared queue (and any dead instance's) starts at once. */
  start(): void {
    this.#wired.get().persistence.start();
  }

  stop(): void {
    this.#wired.get().stop();
  }

  release(): Promise<void> {
    return this.#wired.get().release();
  }

  idle(): boolean {
    return this.#wired.get().idle();
  }
}

/** The companies of tracked messages (`m:` rows) and SMS (`s:` rows) read back from Redis. */
function companiesOf(rows: ReadonlyMap<string, unknown>): number[] {
  const out = new Set<number>();
  for (const [key, row] of rows) {
    if (key.startsWith('m:')) out.add((row as TrackedMessage).contact.companyId);
    else if (key.startsWith('s:')) out.add((row as OutgoingSms).companyId);
  }
  return [...out];
}
