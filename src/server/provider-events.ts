/**
 * The sink the server gives its channel (`channel.attach`): what the provider reports later. A
 * message's statuses, a closed attendance, an SMS's DLR and MO go to the notifier; a template's
 * status, a number's limits and a number's status steer the engine (channel-steering.ts) and show
 * on the dashboard; a number's flag, an account's notice and a portfolio's messaging limit are
 * logged and shown on the dashboard.
 * Once the server is closing (`detach`) they are ignored. On the durable server the channel
 * acknowledges the provider's webhook or receipt once what it did is written (`written`); on Redis
 * the server first reads what the fleet remembers of what another instance sent (`recall`).
 *
 * Separate from buildServer, which only attaches it: this is where each kind of provider event goes.
 */
import type { ChannelSink } from './ports/channel.js';
import type { Steering } from './channel-steering.js';
import type { DashboardState } from './dashboard/state.js';
import type { Notifier } from './notifier.js';
import type { Turns } from './turns.js';

export interface ProviderEventsParts {
  readonly notifier: Notifier;
  readonly steering: Steering;
  readonly dashboard: DashboardState | undefined;
  /** The server on Redis: what the provider reports on may have been sent by another instance. */
  readonly recall: boolean;
  /** The durable server's commit: resolves once everything so far is written. @default none: nothing is kept */
  readonly commit: (() => Promise<void>) | undefined;
  /** Where a message's statuses, attendances, DLRs and MOs are handled: in turns, after the sends' answers. */
  readonly turns: Turns;
}

/** The channel's sink, and the switch that makes it ignore what comes once the server closes. */
export function providerEvents(parts: ProviderEventsParts): { readonly sink: ChannelSink; readonly detach: () => void } {
  const { notifier, steering, dashboard, commit, turns } = parts;
  let detached = false;
  // In the turns' order: a message's status after its send's answer (which made it known). Ignored
  // once detached; what came before is handled (the shutdown waits for it before it detaches).
  const later = (work: () => void) => {
    if (!detached) turns.later(work);
  };
  const sink: ChannelSink = {
    messageStatus: (u) => later(() => void notifier.laterStatus(u)),
    attendanceClosed: (r) => later(() => void notifier.attendance(r)),
    smsStatus: (u) => later(() => void notifier.smsStatus(u.smsId, u.status, u.reason ?? null, u.at)),
    smsReply: (r) => later(() => void notifier.smsReply(r.smsId, r.text, r.at)),
    templateStatus: (u) => {
      if (detached) return;
      dashboard?.channelTemplate(u);
      steering.templateStatus(u);
    },
    numberLimits: (u) => {
      if (detached) return;
      dashboard?.channelNumber(u);
      steering.numberLimits(u);
    },
    numberStatus: (u) => {
      if (detached) return;
      dashboard?.channelNumber({ phone: u.phone, reason: u.reason ?? `number ${u.status}` });
      steering.numberStatus(u);
    },
    numberQuality: (u) => {
      if (detached) return;
      dashboard?.channelNumber(u);
      steering.numberQuality(u);
    },
    accountNotice: (u) => {
      if (detached) return;
      dashboard?.channelAccount(u);
      steering.accountNotice(u);
    },
    businessLimit: (u) => {
      if (detached) return;
      dashboard?.channelBusinessLimit(u);
      steering.businessLimit(u);
    },
    // Another instance may have sent what the provider reports on: read what the fleet remembers.
    ...(parts.recall ? { recall: (ids: Parameters<typeof notifier.recall>[0]) => notifier.recall(ids) } : {}),
    // The provider's webhook or receipt is acknowledged once what it did is handled and on disk (in Redis).
    ...(commit
      ? {
          // Not when a handling threw: the provider delivers it again.
          written: () =>
            turns.settled().then((handled) =>
              handled
                ? commit().then(
                    () => true,
                    () => false,
                  )
                : false,
            ),
        }
      : {}),
  };
  return {
    sink,
    detach: () => {
      detached = true;
    },
  };
}
