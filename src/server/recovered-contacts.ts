/**
 * Contacts a damaged store lost, reported to their company (docs/server.md, "A damaged store"):
 * when the store is started with `recover` and its intake journal names contacts the database no
 * longer holds (accepted in commits that were lost, or in rows left out of a damaged file), each
 * gets a FAILED HSM notification with the reason {@link LOST_REASON}, counted in its campaign's
 * statistics. The notifications are written with the first step and delivered after it, as any.
 *
 * A company whose webhook configuration the database lost too (the file emptied, or the
 * configuration set in a lost commit) gets the one the journal recorded last, so the
 * notifications have an address and a signing secret (and later ones too).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { RecoveredLoss } from '../storage/store-open.js';
import type { ServerContact } from './contacts.js';
import type { CompanyWebhooks, Notifier } from './notifier.js';

/** The `reason` of the FAILED notification of a contact lost in a damaged store (spec 7.1's shape). */
export const LOST_REASON = 'Sendpool, 0, lost in a damaged store';

export interface RecoveredContactsParts {
  readonly notifier: Notifier;
  readonly clock: Clock;
  /** The webhook configurations the recovered database holds (its `webhooks` value), if any. */
  readonly storedWebhooks: unknown;
  readonly log: FastifyBaseLogger;
}

/** Reports every contact of `loss` FAILED; answers how many. */
export function reportLostContacts(loss: RecoveredLoss, parts: RecoveredContactsParts): number {
  const { notifier, clock, log } = parts;
  const known = new Set(Array.isArray(parts.storedWebhooks) ? (parts.storedWebhooks as CompanyWebhooks[]).map((w) => w.companyId) : []);
  if (Array.isArray(loss.webhooks)) {
    const restored = (loss.webhooks as CompanyWebhooks[]).filter((w) => !known.has(w.companyId));
    notifier.loadWebhooks(restored);
    if (restored.length > 0) log.warn({ companies: restored.map((w) => w.companyId) }, 'store recovered: webhook configurations the database lost were taken from the intake journal');
  }
  const now = clock.now();
  let failed = 0;
  for (const s of loss.submissions) {
    const contacts = s.contacts as ServerContact[];
    // Accepted in a lost commit: its admission went with it; counted again (by request, as intake does).
    if (s.lostIn === 'commit') admitAgain(notifier, s.campaignId, contacts, log);
    for (const c of contacts) {
      notifier.hsm(c, s.campaignId, null, now, { status: 'FAILED', from: null, message: null, failure: { reason: LOST_REASON } });
      failed++;
    }
  }
  return failed;
}

/** Admits lost contacts in their campaign's statistics, one id range per request (other ids in it not counted). */
function admitAgain(notifier: Notifier, campaignId: number, contacts: readonly ServerContact[], log: FastifyBaseLogger): void {
  const byRequest = new Map<string, ServerContact[]>();
  for (const c of contacts) {
    const list = byRequest.get(c.requestId);
    if (list) list.push(c);
    else byRequest.set(c.requestId, [c]);
  }
  for (const list of byRequest.values()) {
    const ids = list.map((c) => c.id).sort((a, b) => a - b);
    const first = ids[0]!;
    const last = ids[ids.length - 1]!;
    const have = new Set(ids);
    const others: (readonly [number, undefined])[] = [];
    for (let id = first; id <= last; id++) if (!have.has(id)) others.push([id, undefined]);
    try {
      notifier.admit(list[0]!.companyId, campaignId, first, last - first + 1, others);
    } catch (e) {
      // Admitted already (the database kept the admission): the FAILED counts under it.
      log.warn({ err: e, campaignId, first, last }, 'store recovered: lost contacts not admitted again in their campaign statistics');
    }
  }
}
