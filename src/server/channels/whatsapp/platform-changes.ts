/**
 * What the platform's account events mean for the engine: a template status event becomes a
 * template status (with the pause's end when the event tells it), a number's messaging-limit tier
 * becomes its 24 h limit, a throughput upgrade its per-second rate. Pure: docs/channels.md lists
 * the same rules with their sources.
 */
import type { NumberLimitsChange } from '../../../core/engine.js';
import { MAX_MESSAGING_LIMIT_24H } from '../../../core/fleet.js';
import type { WebhookEvent } from './webhook-events.js';

const HOUR = 3_600_000;

/** Messaging-limit tiers of a number (or its business portfolio) as 24 h limits. */
export const TIER_LIMITS: Readonly<Record<string, number>> = Object.freeze({
  TIER_50: 50,
  TIER_250: 250,
  TIER_1K: 1_000,
  TIER_2K: 2_000,
  TIER_10K: 10_000,
  TIER_100K: 100_000,
  TIER_UNLIMITED: MAX_MESSAGING_LIMIT_24H,
});

/** The per-second throughput a number has after the platform's throughput upgrade. */
export const UPGRADED_MESSAGES_PER_SECOND = 1_000;

/**
 * The per-second throughput the platform gives a number by default: the channel's default
 * `defaultMessagesPerSecond`, which the server gives the engine's numbers the fleet gives no rate.
 */
export const DEFAULT_MESSAGES_PER_SECOND = 80;

/** Pause lengths the platform gives by the pause's title (first pause 3 h, second 6 h). */
const PAUSE_HOURS: Readonly<Record<string, number>> = { FIRST_PAUSE: 3, SECOND_PAUSE: 6 };

export type TemplateChange = { readonly status: 'active' | 'paused' | 'disabled'; readonly until?: number };

/**
 * The status a template event gives, or undefined when the event changes nothing that sending
 * depends on (FLAGGED, PENDING, IN_APPEAL, LOCKED, …). `now` is the clock time the event is
 * applied, used when the event has no time of its own.
 */
export function templateChange(e: Extract<WebhookEvent, { kind: 'template' }>, now: number): TemplateChange | undefined {
  if (e.title === 'UNPAUSE') return { status: 'active' };
  switch (e.event) {
    case 'APPROVED':
    case 'REINSTATED':
    case 'UNPAUSED':
      return { status: 'active' };
    case 'PAUSED': {
      const hours = PAUSE_HOURS[e.title ?? ''] ?? hoursIn(e.description);
      // A pause without a known length lasts until the platform says it is over (UNPAUSE, APPROVED).
      return hours === undefined ? { status: 'paused' } : { status: 'paused', until: (e.at ?? now) + hours * HOUR };
    }
    case 'DISABLED':
    case 'REJECTED':
    case 'DELETED':
    case 'PENDING_DELETION':
    case 'ARCHIVED':
      return { status: 'disabled' };
    default:
      return undefined;
  }
}

/** "paused for 6 hours until …": the number of hours, when the description says it. */
function hoursIn(description: string | undefined): number | undefined {
  const m = description ? /\bfor (\d{1,3}) hours?\b/i.exec(description) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * The limits a number quality event gives, or undefined when it gives none. `perSecond` is the
 * fleet's per-second rate of the number; a number without one is paced at the platform's default
 * (80, `DEFAULT_MESSAGES_PER_SECOND`, given by the server), so a throughput upgrade raises either
 * to 1,000, and never lowers a fleet's rate above it.
 */
export function limitsChange(e: Extract<WebhookEvent, { kind: 'quality' }>, perSecond: number | undefined): NumberLimitsChange | undefined {
  // The throughput upgrade's tier reads "higher throughput", not a messaging limit.
  if (e.event === 'THROUGHPUT_UPGRADE') {
    return (perSecond ?? DEFAULT_MESSAGES_PER_SECOND) < UPGRADED_MESSAGES_PER_SECOND ? { messagesPerSecond: UPGRADED_MESSAGES_PER_SECOND } : undefined;
  }
  const limit = e.tier === undefined ? undefined : TIER_LIMITS[e.tier];
  return limit === undefined ? undefined : { messagingLimit24h: limit };
}
