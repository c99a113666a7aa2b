/**
 * What the dispatch worker's answers become for the company: the HSM notifications (spec 6.3) and
 * campaign statistics of each send's result (SENT, FAILED with the channel's code or reason, a
 * retry that waits, EXPIRED) and of each contact's final outcome the engine reports without a send
 * (a retry that expired while it waited, a failure, an invalid phone rejected).
 *
 * A contact is notified of its end once. A send's result that ends it (SENT, FAILED, EXPIRED)
 * notifies the end, and the engine's outcome of that end, taken after it, does not notify it again:
 * the server keeps which contacts' ends a result notified in a record of its own (the engine's
 * contact ids), never on the contact the engine holds. Each id stays from the result to its outcome
 * (the engine reports one outcome per end, at the next `takeOutcomes`), so the record holds only
 * the ends of the moment. A snapshot keeps it (`endsNotified`) with the engine's outcomes not taken
 * yet, so a restart does not notify those ends again; the durable store and Redis take the
 * outcomes before each write, so it is empty whenever they write.
 *
 * On the server on Redis, a contact's notifications are written with its chunk of the shared queue
 * (`about`), and the retry index is the fleet's (a retry may have been handed out by another
 * instance).
 *
 * Separate from buildServer, which only wires it to the dispatch worker: this is the mapping from
 * the engine's words (send effects, outcome states) to the contract's statuses.
 */
import type { Clock } from '../core/clock.js';
import type { ContactOutcome, OutgoingMessage, ReportResult, SendOutcome } from '../core/dispatch/types.js';
import { serverContact, type ServerContact } from './contacts.js';
import type { Notifier } from './notifier.js';
import type { FleetDispatch } from './ports/server-backend.js';

export interface DispatchNotificationsDeps {
  readonly notifier: Notifier;
  readonly clock: Clock;
  /** The dispatch side of a fleet (the backend's): on Redis, the shared queue's side of each result. */
  readonly fleet: FleetDispatch;
  /**
   * A send ended its contact FAILED or EXPIRED for good (the recipient never got it): the phone it
   * took for its business and type is given back (`already_sent`). @default none
   */
  readonly ended?: (contact: ServerContact, businessId: number, typeId: number) => void;
  /**
   * The engine's ids of contacts whose end a result notified before a restart, their outcome not
   * taken then (a snapshot's `endsNotified`, beside the engine's outcomes it kept). @default none
   */
  readonly endsNotified?: readonly string[];
}

/** The notifications of the dispatch worker's results (`onResult`) and outcomes (`onOutcomes`). */
export interface DispatchNotifications {
  /** A send's result the engine took (`result.ok`), for the channel's message `m`. */
  result(m: OutgoingMessage, outcome: SendOutcome, result: Extract<ReportResult, { ok: true }>): void;
  /** Final outcomes the engine reported. */
  outcomes(outcomes: readonly ContactOutcome[]): void;
  /** The engine's ids of contacts whose end a result notified and whose outcome has not come yet (for a snapshot). */
  endsNotified(): string[];
}

/**
 * Snapshots written before the server kept its own record mark such a contact on the contact itself
 * (`final: 1`); read, never written, so that an outcome they kept is not notified again.
 */
function endedInOlderSnapshot(contact: object): boolean {
  return (contact as { readonly final?: unknown }).final === 1;
}

export function dispatchNotifications(deps: DispatchNotificationsDeps): DispatchNotifications {
  const { notifier, clock, fleet } = deps;
  /** Contacts (the engine's `contactId`) whose end a send's result notified, until their outcome comes. */
  const notifiedEnds = new Set<string>(deps.endsNotified);

  /** The notifications of one send's result (the channel's message `m`). */
  function resultNotifications(m: OutgoingMessage, outcome: SendOutcome, result: Extract<ReportResult, { ok: true }>, contact: ServerContact): void {
    const campaignId = m.campaignId ?? 0;
    const now = clock.now();
    switch (result.effect) {
      case 'sent':
        notifiedEnds.add(m.contactId);
        notifier.sent(m, campaignId);
        break;
      case 'failed':
      case 'retry-scheduled': {
        if (result.effect === 'failed') {
          notifiedEnds.add(m.contactId);
          deps.ended?.(contact, m.businessId, m.typeId);
        } else notifier.retryPending(contact, campaignId, m.retryIndex === null ? 0 : m.retryIndex + 1);
        const code = outcome.status === 'failed' ? outcome.code : undefined;
        const reason = outcome.status === 'failed' ? outcome.reason : undefined;
        notifier.hsm(
          contact,
          campaignId,
          m.retryIndex,
          now,
          { status: 'FAILED', from: m.phone, message: m.text, failure: code !== undefined ? { code } : { reason: `Channel, 0, ${reason ?? 'Unknown error'}` } },
          // A retry waits: the contact is sent again (it stays remaining in the statistics).
          { ...(code === undefined ? {} : { failureCode: code }), retrying: result.effect === 'retry-scheduled' },
        );
        break;
      }
      case 'expired':
        notifiedEnds.add(m.contactId);
        deps.ended?.(contact, m.businessId, m.typeId);
        notifier.hsm(contact, campaignId, m.retryIndex, now, { status: 'EXPIRED', from: m.phone, message: m.text });
        break;
      default:
        // failover and requeued: the message goes again on another pair; not the contact's failure.
        break;
    }
  }

  return {
    result: (m, outcome, result) => {
      const contact = serverContact(m.contact);
      if (result.effect !== 'sent' && result.effect !== 'failed' && result.effect !== 'expired') fleet.handOutEnded(m);
      fleet.about(contact, () => resultNotifications(m, outcome, result, contact));
    },
    outcomes: (outcomes) => {
      fleet.outcomes(outcomes);
      const now = clock.now();
      for (const o of outcomes) {
        const contact = serverContact(o.contact);
        // Its end went out with its send's result (the id leaves the record: the contact ended).
        if (notifiedEnds.delete(o.contactId) || endedInOlderSnapshot(contact) || contact.id === undefined) continue;
        const campaignId = o.campaignId ?? 0;
        const retryIndex = fleet.retryIndexOf(o);
        fleet.about(contact, () => {
          // The attempt that ended: a retry that expired while it waited is the retry's outcome.
          if (o.state === 'expired') notifier.hsm(contact, campaignId, retryIndex, now, { status: 'EXPIRED', from: null, message: null });
          else if (o.state === 'failed') {
            const failure = o.code !== undefined ? { code: o.code } : { reason: o.reason && o.reason.length > 0 ? o.reason : 'Channel, 0, Unknown error' };
            notifier.hsm(contact, campaignId, retryIndex, now, { status: 'FAILED', from: null, message: null, failure }, o.code === undefined ? {} : { failureCode: o.code });
          } else if (o.state === 'rejected') notifier.reject(contact.companyId, campaignId, contact.id, 'invalid-phone');
        });
      }
      // Room in the engine: more work from a shared queue.
      fleet.roomFreed();
    },
    endsNotified: () => [...notifiedEnds],
  };
}
