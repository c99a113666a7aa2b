/**
 * What the platform's account events mean for the engine: a template status event becomes a
 * template status (with the pause's end when the event tells it), a number's messaging-limit tier
 * becomes its 24 h limit, a throughput upgrade its per-second rate, the business portfolio's
 * messaging limit a limit of the portfolio (never one number's), a restricted, disabled or deleted
 * account pauses its numbers and its lifting resumes them, a flag for low quality is a flag. Pure:
 * docs/channels.md lists the same rules with their sources.
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

/**
 * The limits a number quality event gives, or undefined when it gives none (see above). The
 * portfolio's `max_daily_conversations_per_business` is Meta's current field and `current_limit`
 * its deprecated one: when both come, the portfolio's limit is what holds, and it is no number's
 * own 24 h limit ({@link businessLimitOf}), so the number's limits are left as they are.
 */
export function numberLimitsOf(e: Extract<WebhookEvent, { kind: 'quality' }>, perSecond: number | undefined): NumberLimitsChange | undefined {
  if (e.event !== 'THROUGHPUT_UPGRADE' && e.businessTier !== undefined) return undefined;
  return limitsChange(e, perSecond);
}

/** A business portfolio's messaging limit, from `max_daily_conversations_per_business`. */
export interface BusinessLimit {
  readonly tier: string;
  /** Unique users in a moving 24 h, shared by the portfolio's numbers. */
  readonly limit: number;
}

/**
 * The portfolio's messaging limit a number quality event gives, or undefined: without
 * `max_daily_conversations_per_business`, with a tier that is no limit (TIER_NOT_SET), or on a
 * throughput upgrade (its tier names the throughput, not a limit).
 */
export function businessLimitOf(e: Extract<WebhookEvent, { kind: 'quality' }>): BusinessLimit | undefined {
  if (e.event === 'THROUGHPUT_UPGRADE' || e.businessTier === undefined) return undefined;
  const limit = TIER_LIMITS[e.businessTier];
  return limit === undefined ? undefined : { tier: e.businessTier, limit };
}

/**
 * Whether a number quality event flags the number for low quality (true), clears the flag
 * (false), or says nothing of it (undefined): FLAGGED and a YELLOW or RED rating flag it,
 * UNFLAGGED and a GREEN rating clear it.
 */
export function flagOf(e: Extract<WebhookEvent, { kind: 'quality' }>): boolean | undefined {
  if (e.event === 'FLAGGED') return true;
  if (e.event === 'UNFLAGGED') return false;
  if (e.rating === 'RED' || e.rating === 'YELLOW') return true;
  if (e.rating === 'GREEN') return false;
  return undefined;
}

/**
 * Restrictions that stop template messages: a template message starts a conversation, which
 * RESTRICTED_BIZ_INITIATED_MESSAGING forbids. The others (adding numbers, calls, replying to users,
 * creating or Direct-Sending utility templates) leave the sends the channel makes possible.
 */
export const SENDING_RESTRICTIONS: ReadonlySet<string> = new Set(['RESTRICTED_BIZ_INITIATED_MESSAGING']);

/** What an account event does to every number of the account. */
export type AccountChange =
  /** The numbers leave their pools, until the restriction's end when it has one. */
  | { readonly kind: 'pause'; readonly until?: number; readonly reason: string }
  /** What paused them is over: the numbers the account's events paused come back. */
  | { readonly kind: 'resume'; readonly reason: string }
  /** Nothing steered; operators see it and it is logged. */
  | { readonly kind: 'notice'; readonly reason: string };

/**
 * What an `account_update` event does, or undefined when it concerns neither sending nor
 * operators (partners, pricing, locations…). `now` is the clock time the event is applied: a
 * restriction whose end has passed restricts nothing.
 *
 * - ACCOUNT_RESTRICTION lists every restriction the account has now: one that stops template
 *   messages ({@link SENDING_RESTRICTIONS}) pauses, until its `expiration` (the latest, when several
 *   do; none: until lifted); a list without one, or with only ended ones, is the lifting: resume.
 * - DISABLED_UPDATE: DISABLE pauses (no end), REINSTATE resumes, SCHEDULE_FOR_DISABLE is a notice
 *   (the account still sends until it is disabled).
 * - ACCOUNT_DELETED pauses (no end); ACCOUNT_VIOLATION, ACCOUNT_OFFBOARDED and ACCOUNT_RECONNECTED
 *   are notices: a violation restricts nothing by itself (a restriction comes as its own event).
 */
export function accountChange(e: Extract<WebhookEvent, { kind: 'account' }>, now: number): AccountChange | undefined {
  switch (e.event) {
    case 'ACCOUNT_RESTRICTION': {
      const all = e.restrictions.map((r) => r.type);
      const stopping = e.restrictions.filter((r) => SENDING_RESTRICTIONS.has(r.type) && (r.until === undefined || r.until > now));
      if (stopping.length === 0) return { kind: 'resume', reason: ['ACCOUNT_RESTRICTION', all.length === 0 ? 'lifted' : `${all.join(' ')} (sending allowed)`].join(' ') };
      const reason = ['ACCOUNT_RESTRICTION', ...all].join(' ');
      const ends = stopping.map((r) => r.until);
      if (ends.some((u) => u === undefined)) return { kind: 'pause', reason };
      return { kind: 'pause', until: Math.max(...(ends as number[])), reason };
    }
    case 'DISABLED_UPDATE': {
      const reason = ['DISABLED_UPDATE', e.banState].filter((x) => x !== undefined).join(' ');
      if (e.banState === 'DISABLE') return { kind: 'pause', reason };
      if (e.banState === 'REINSTATE') return { kind: 'resume', reason };
      return { kind: 'notice', reason };
    }
    case 'ACCOUNT_DELETED':
      return { kind: 'pause', reason: 'ACCOUNT_DELETED' };
    case 'ACCOUNT_VIOLATION':
    case 'ACCOUNT_OFFBOARDED':
    case 'ACCOUNT_RECONNECTED':
      return { kind: 'notice', reason: [e.event, e.violation].filter((x) => x !== undefined).join(' ') };
    default:
      return undefined;
  }
}
