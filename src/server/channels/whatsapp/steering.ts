/**
 * Steering: the platform's template, number and account events as signals to the engine, through
 * the sink. A template paused or disabled leaves the pools (failover without a failed send) and
 * comes back when approved again (`templateStatus`); a number's tier or throughput changes its
 * limits (`numberLimits`); an account restricted, disabled or deleted pauses its numbers and the
 * lifting resumes them (`numberStatus`). What steers nothing is reported to operators
 * (`numberQuality`, `accountNotice`, `businessLimit`). What each event means is platform-changes.ts;
 * this part finds the fleet's templates and numbers it concerns.
 */
import type { ChannelSink } from '../../ports/channel.js';
import type { FleetIds } from './fleet-ids.js';
import { accountChange, businessLimitOf, flagOf, numberLimitsOf, templateChange } from './platform-changes.js';
import type { WebhookEvent } from './webhook-events.js';

/** The events that steer: a template's, a number's, an account's. */
export type SteeringEvent = Extract<WebhookEvent, { kind: 'template' | 'quality' | 'account' }>;

export interface SteeringOptions {
  readonly ids: FleetIds;
  readonly now: () => number;
  /** Told of an event for a template, number or account the fleet does not have. */
  readonly onWarning: (message: string, details: Readonly<Record<string, unknown>>) => void;
}

export function steer(e: SteeringEvent, o: SteeringOptions, to: ChannelSink): void {
  switch (e.kind) {
    case 'template':
      return template(e, o, to);
    case 'quality':
      return quality(e, o, to);
    case 'account':
      return account(e, o, to);
  }
}

/** The event's template, as every template of the fleet it names. */
function template(e: Extract<SteeringEvent, { kind: 'template' }>, o: SteeringOptions, to: ChannelSink): void {
  const change = templateChange(e, o.now());
  if (!change) return;
  const templateIds = o.ids.templatesOf({ wabaId: e.wabaId, id: e.templateId, name: e.name, language: e.language });
  if (templateIds.length === 0)
    return o.onWarning('template event for a template the fleet does not have', { event: e.event, templateId: e.templateId ?? null, name: e.name ?? null, language: e.language ?? null });
  const reason = [e.event, e.title, e.reason].filter((x) => x !== undefined).join(' ');
  for (const templateId of templateIds) to.templateStatus?.({ templateId, status: change.status, ...(change.until !== undefined ? { until: change.until } : {}), reason });
}

/**
 * A number's tier or throughput (its limits), its portfolio's messaging limit (the portfolio's,
 * not the number's), a flag for low quality, or a word on it that changes nothing.
 */
function quality(e: Extract<SteeringEvent, { kind: 'quality' }>, o: SteeringOptions, to: ChannelSink): void {
  const phone = o.ids.phoneOfDisplay(e.displayPhoneNumber);
  if (phone === undefined) return o.onWarning('number event for a number the fleet does not have', { event: e.event, displayPhoneNumber: e.displayPhoneNumber });
  const business = businessLimitOf(e);
  if (business) {
    const accountId = e.wabaId ?? o.ids.number(phone)?.wabaId;
    const phones = accountId === undefined ? [phone] : o.ids.phonesOfWaba(accountId);
    to.businessLimit?.({ accountId: accountId ?? '', phones, limit: business.limit, tier: business.tier, reason: [e.event, business.tier].join(' ') });
  }
  const limits = numberLimitsOf(e, o.ids.number(phone)?.messagesPerSecond);
  const flagged = flagOf(e);
  const reason = [e.event, business ? undefined : e.tier, e.rating].filter((x) => x !== undefined).join(' ');
  if (limits) to.numberLimits?.({ phone, limits, reason });
  if (flagged !== undefined || (!limits && !business)) to.numberQuality?.({ phone, reason, ...(flagged !== undefined ? { flagged } : {}) });
}

/** An account restricted, disabled or deleted pauses every number of it in the fleet; lifted, resumes them. */
function account(e: Extract<SteeringEvent, { kind: 'account' }>, o: SteeringOptions, to: ChannelSink): void {
  const change = accountChange(e, o.now());
  if (!change) return;
  const phones = e.wabaId === undefined ? [] : o.ids.phonesOfWaba(e.wabaId);
  if (phones.length === 0) return o.onWarning('account event for an account the fleet has no number of', { event: e.event, wabaId: e.wabaId ?? null });
  if (change.kind === 'notice') return to.accountNotice?.({ accountId: e.wabaId!, phones, reason: change.reason });
  for (const phone of phones) {
    if (change.kind === 'pause') to.numberStatus?.({ phone, status: 'paused', ...(change.until !== undefined ? { until: change.until } : {}), reason: change.reason });
    else to.numberStatus?.({ phone, status: 'active', reason: change.reason });
  }
}
