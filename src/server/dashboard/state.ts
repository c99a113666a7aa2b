/**
 * What the dashboard keeps beyond the engine's and the outbox's own views: output samples for the
 * charts, the causes of status changes, the campaigns' pools and submissions, webhook delivery
 * rates. The server feeds it from the hooks it already has (hand-outs, delivery outcomes, the
 * channel's steering events, the engine's status listeners); it never decides anything.
 */
import type { Clock } from '../../core/clock.js';
import type { Engine } from '../../core/engine.js';
import type { OutgoingMessage } from '../../core/dispatch/types.js';
import type { DeliveryOutcome } from '../../events/outbox.js';
import type { AccountNotice, BusinessLimitUpdate, NumberLimitsUpdate, TemplateStatusUpdate } from '../ports/channel.js';
import { CampaignPoolIndex, poolKey } from './campaign-pools.js';
import { DeliveryRates } from './delivery-rates.js';
import { HISTORY_MS, type DashboardOptions } from './options.js';
import { OutputHistory } from './output-history.js';
import { businessKey } from './campaign-pools.js';
import { StatusNotes } from './status-notes.js';

/** @see DashboardOptions.sampleIntervalMs */
const DEFAULT_SAMPLE_INTERVAL_MS = 10_000;

export class DashboardState {
  readonly sampleIntervalMs: number;
  readonly history: OutputHistory;
  readonly notes = new StatusNotes();
  readonly campaigns = new CampaignPoolIndex();
  readonly deliveries = new DeliveryRates();
  readonly #engine: Engine;
  readonly #clock: Clock;
  #timer: NodeJS.Timeout | undefined;
  #offStatus: (() => void) | undefined;

  constructor(engine: Engine, clock: Clock, options: DashboardOptions) {
    this.#engine = engine;
    this.#clock = clock;
    this.sampleIntervalMs = options.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
    this.history = new OutputHistory(HISTORY_MS / this.sampleIntervalMs + 1);
  }

  /** Starts sampling and listening to the engine's status changes. */
  start(): void {
    this.#offStatus = this.#engine.onStatusChange((c) => this.notes.statusChanged(c));
    this.sample();
    this.#timer = setInterval(() => this.sample(), this.sampleIntervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#offStatus?.();
  }

  /** Takes one sample of every pool's output now, and of each business's with each number once (the totals' line). */
  sample(): void {
    const outputs = new Map<string, number>();
    for (const b of this.#engine.businesses()) {
      for (const t of b.template_types) outputs.set(poolKey(b.id, t.id), t.output);
      outputs.set(businessKey(b.id), this.#engine.capacity(b.id).output);
    }
    this.history.record(this.#clock.now(), outputs);
  }

  handedOut(messages: readonly OutgoingMessage[]): void {
    this.campaigns.handedOut(messages);
  }

  delivered(outcomes: readonly DeliveryOutcome[]): void {
    this.deliveries.outcomes(outcomes);
  }

  channelTemplate(update: TemplateStatusUpdate): void {
    this.notes.channelTemplate(update);
  }

  channelNumber(update: { readonly phone: string; readonly limits?: NumberLimitsUpdate['limits']; readonly reason?: string; readonly flagged?: boolean }): void {
    this.notes.channelNumber(update, this.#clock.now());
  }

  channelAccount(update: AccountNotice): void {
    this.notes.channelAccount(update, this.#clock.now());
  }

  channelBusinessLimit(update: BusinessLimitUpdate): void {
    this.notes.channelBusinessLimit(update, this.#clock.now());
  }
}
