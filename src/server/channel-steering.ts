/**
 * What a channel's engine-steering events do in the server: a template's status and a number's
 * limits change in the engine, and the dispatch worker looks again at once (a resumed template or
 * a raised limit may let queued contacts go). An event naming what the engine does not know (a
 * template removed from the fleet) or limits it refuses is logged and dropped: the provider's word
 * never stops the server.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Engine } from '../core/engine.js';
import type { NumberLimitsUpdate, TemplateStatusUpdate } from './channel.js';

export interface Steering {
  templateStatus(update: TemplateStatusUpdate): void;
  numberLimits(update: NumberLimitsUpdate): void;
}

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
  return {
    templateStatus: (u) =>
      apply({ templateId: u.templateId, status: u.status, until: u.until, reason: u.reason }, () =>
        engine.setTemplateStatus(u.templateId, u.status, { source: 'channel', ...(u.status === 'paused' && u.until !== undefined ? { until: u.until } : {}) }),
      ),
    numberLimits: (u) => apply({ phone: u.phone, limits: u.limits, reason: u.reason }, () => engine.setNumberLimits(u.phone, u.limits)),
  };
}
