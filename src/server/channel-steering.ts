/**
 * What a channel's engine-steering events do in the server: a template's status, a number's
 * limits and a number's status change in the engine, and the dispatch worker looks again at once
 * (a resumed template or a raised limit may let queued contacts go). An event naming what the
 * engine does not know (a template removed from the fleet) or limits it refuses is logged and
 * dropped: the provider's word never stops the server. What steers nothing (a number flagged, an
 * account's violation, a portfolio's messaging limit) is logged.
 *
 * A provider's resume (an account's restriction lifted) brings back a paused number unless this
 * server saw it paused since by someone else (an operator's call, a failed send's failover): the
 * provider lifts what the provider imposed, not an operator's pause.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Engine } from '../core/engine.js';
import type { AccountNotice, BusinessLimitUpdate, NumberLimitsUpdate, NumberQualityUpdate, NumberStatusUpdate, TemplateStatusUpdate } from './ports/channel.js';

export interface Steering {
  templateStatus(update: TemplateStatusUpdate): void;
  numberLimits(update: NumberLimitsUpdate): void;
  numberStatus(update: NumberStatusUpdate): void;
  numberQuality(update: NumberQualityUpdate): void;
  accountNotice(update: AccountNotice): void;
  businessLimit(update: BusinessLimitUpdate): void;
}

/** Sources of a number's status change that are the provider's or follow from it: the pause stays the provider's. */
const PROVIDER_SOURCES: ReadonlySet<string> = new Set(['channel', 'fleet', 'timer']);

export function channelSteering(engine: Engine, kick: () => void, log: FastifyBaseLogger): Steering {
  const apply = (what: Record<string, unknown>, change: () => void) => {
    try {
      change();
      log.info(what, 'channel changed the fleet');
      kick();
    } catch (e) {
      log.warn({ ...what, err: e instanceof Error ? e.message : String(e) }, 'channel change refused');
    }
  };
  // Numbers whose last status change this server saw came from someone other than the provider.
  const pausedByOthers = new Set<string>();
  let statuses: Map<string, string> | undefined;
  engine.onStatusChange((c) => {
    if (c.kind !== 'number') return;
    statuses = undefined;
    if (c.status === 'paused' && !PROVIDER_SOURCES.has(c.source)) pausedByOthers.add(c.phone);
    else pausedByOthers.delete(c.phone);
  });
  // Statuses read once for the events of one notification (an account's resume names all its numbers).
  const statusOf = (phone: string) => {
    if (statuses === undefined) {
      statuses = new Map(engine.numbers().map((n) => [n.phone, n.status]));
      queueMicrotask(() => (statuses = undefined));
    }
    return statuses.get(phone);
  };
  return {
    templateStatus: (u) =>
      apply({ templateId: u.templateId, status: u.status, until: u.until, reason: u.reason }, () =>
        engine.setTemplateStatus(u.templateId, u.status, { source: 'channel', ...(u.status === 'paused' && u.until !== undefined ? { until: u.until } : {}) }),
      ),
    numberLimits: (u) => apply({ phone: u.phone, limits: u.limits, reason: u.reason }, () => engine.setNumberLimits(u.phone, u.limits)),
    numberStatus: (u) => {
      const what = { phone: u.phone, status: u.status, until: u.until, reason: u.reason };
      if (u.status === 'active') {
        const now = statusOf(u.phone);
        if (now === 'active') return log.info(what, 'channel resume: number already active');
        if (pausedByOthers.has(u.phone)) return log.info(what, 'channel resume: number stays paused (paused by an operator or a failed send since)');
      }
      apply(what, () => engine.setNumberStatus(u.phone, u.status, { source: 'channel', ...(u.status === 'paused' && u.until !== undefined ? { until: u.until } : {}) }));
    },
    numberQuality: (u) =>
      (u.flagged === true ? log.warn : log.info).call(log, { phone: u.phone, reason: u.reason, flagged: u.flagged }, u.flagged === true ? 'channel flagged a number' : 'channel reported on a number'),
    accountNotice: (u) => log.warn({ accountId: u.accountId, phones: u.phones.length, reason: u.reason }, 'channel reported on an account'),
    // The engine has no limit shared by several numbers: the portfolio's limit is logged (and shown), not applied.
    businessLimit: (u) => {
      // The portfolio the fleet gives the account's numbers takes the limit; numbers without one keep theirs.
      const portfolios = new Set<string>();
      for (const phone of u.phones) {
        const id = engine.portfolioOf(phone);
        if (id !== undefined) portfolios.add(id);
      }
      if (portfolios.size === 0) {
        log.info(
          { accountId: u.accountId, phones: u.phones.length, limit: u.limit, tier: u.tier, reason: u.reason },
          'channel reported a business portfolio messaging limit (not applied: the fleet gives its numbers no portfolio)',
        );
        return;
      }
      for (const id of portfolios) apply({ accountId: u.accountId, portfolioId: id, limit: u.limit, tier: u.tier, reason: u.reason }, () => engine.setPortfolioLimit(id, u.limit));
    },
  };
}
