/**
 * The dispatch side, the server's side of the channel: the dispatch worker over the engine and the
 * channel (the backend deciding what a send waits for), the notifications of its results and
 * outcomes, the turns the channel's answers are handled in, the provider's later events
 * (provider-events.ts, steering the fleet: channel-steering.ts) and its late failures
 * (late-failures.ts), which may send a contact again through the worker.
 */
import type { Clock } from '../core/clock.js';
import type { Engine } from '../core/engine.js';
import { channelSteering } from './channel-steering.js';
import type { ServerContact } from './contacts.js';
import { dispatchNotifications, type DispatchNotifications } from './dispatch-notifications.js';
import { DispatchWorker } from './dispatch-worker.js';
import { lateFailures } from './late-failures.js';
import type { Notifier } from './notifier.js';
import type { NumberIncidents } from './number-incidents.js';
import { providerEvents } from './provider-events.js';
import type { BuildKit } from './server-env.js';
import { createTurns, type Turns } from './turns.js';

export interface DispatchParts {
  readonly notifier: Notifier;
  readonly incidents: NumberIncidents;
}

export interface DispatchSide {
  readonly dispatch: DispatchWorker;
  /** The turns the channel's answers and the provider's reports are handled in (turns.ts). */
  readonly turns: Turns;
  /** A failure the provider reported later (the notifier's `onLateFailure`). */
  readonly late: ReturnType<typeof lateFailures>;
  /** The provider's later events: the sink the channel is attached to, and its `detach` at shutdown. */
  readonly provider: ReturnType<typeof providerEvents>;
  /** The notifications of the worker's results and outcomes (a snapshot keeps which ends they notified). */
  readonly notifications: DispatchNotifications;
}

export function createDispatchSide(kit: BuildKit, parts: DispatchParts): DispatchSide {
  const { env, options, backend, dashboard, log, metrics } = kit;
  const { engine, clock } = env;
  const { notifier, incidents } = parts;
  /** A contact ended FAILED or EXPIRED without reaching its recipient: its phone is the business's to send again. */
  const ended = (contact: ServerContact, businessId: number, typeId: number) => backend.releaseSent(contact, businessId, typeId);
  // A snapshot keeps the contacts whose end was notified beside the engine's outcomes not taken yet.
  const endsNotified = options.restore?.endsNotified;
  const notifications = dispatchNotifications({ notifier, clock, fleet: backend.fleet, ended, ...(endsNotified ? { endsNotified } : {}) });
  // The channel's answers and reports, handled in turns of the event loop (turns.ts).
  // A throw there is a bug: logged, and the provider's event it came with is not acknowledged.
  const turns = createTurns((e) => log.error({ err: e }, 'a channel answer or provider report was not handled'));
  const dispatch = new DispatchWorker(
    {
      later: (work) => turns.later(work),
      engine,
      channel: env.channel,
      clock,
      ...backend.dispatch,
      rateOf: perSecondRates(engine, clock),
      onHandOut: (messages) => {
        // On Redis, hand-outs are written (with the step `beforeSend` waits for) before any is sent.
        backend.fleet.handedOut(messages);
        dashboard?.handedOut(messages);
        const m = metrics();
        if (!m) return;
        for (const message of messages) m.assigned(message.phone);
      },
      onResult: (m, outcome, result) => {
        // The result is written in this turn's step (nobody waits for it; a crash before re-sends it).
        backend.persistence.schedule();
        metrics()?.sent(m.phone, result.ok ? result.effect : 'ignored');
        incidents.result(m.phone, outcome);
        if (result.ok) notifications.result(m, outcome, result);
      },
      onOutcomes: (outcomes) => notifications.outcomes(outcomes),
    },
    options.dispatch,
  );
  const late = lateFailures({
    engine,
    clock,
    log,
    incidents,
    resubmit: (submission, contact, handout) => {
      backend.fleet.resubmit(submission, contact, handout);
      // The contact goes again: its FAILED, recorded next, keeps it remaining in the statistics.
      notifier.sendingAgain();
      backend.persistence.schedule();
      dispatch.kick();
    },
    retryPending: (contact, campaignId, retryIndex) => backend.fleet.about(contact, () => notifier.retryPending(contact, campaignId, retryIndex)),
    ...(options.failureWindowMs !== undefined ? { failureWindowMs: options.failureWindowMs } : {}),
    onOutcome: (outcome) => metrics()?.lateFailures.inc({ outcome }),
    onEnded: (contact, again) => ended(contact, again.businessId, again.typeId),
  });
  const steering = channelSteering(engine, () => dispatch.kick(), log);
  const provider = providerEvents({ notifier, steering, dashboard, turns, recall: backend.recallsSends, commit: backend.durableCommit });
  return { dispatch, turns, late, provider, notifications };
}

/**
 * Each number's per-second rate (0 without one), for the pace sends leave at: read from the engine
 * at most once a second, and again at once for a phone it did not know (a fleet replaced at run time).
 */
function perSecondRates(engine: Engine, clock: Clock): (phone: string) => number {
  let rates = new Map<string, number>();
  let readAt = Number.NEGATIVE_INFINITY;
  const read = (now: number) => {
    rates = new Map(engine.numbers().map((n) => [n.phone, n.messagesPerSecond ?? 0]));
    readAt = now;
  };
  return (phone) => {
    const now = clock.now();
    if (now - readAt >= 1000 || (!rates.has(phone) && now !== readAt)) read(now);
    return rates.get(phone) ?? 0;
  };
}
