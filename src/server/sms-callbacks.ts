/**
 * The bodies of the SMS callbacks (docs/server.md, "SMS callbacks"): the DLR (`sms.status`, to
 * the item's `url_callback_dlr`) and the MO (`sms.reply`, to its `url_callback_mo`). Unlike the
 * webhooks of spec part 6 they go to each SMS's own URLs, and their format is sendpool's.
 *
 * Separate from the notifier, which decides whether and when a callback goes: this is its format.
 */
import { formatUtcMinus3 } from '../events/datetime.js';
import type { OutgoingSms, SmsStatus } from './ports/channel.js';

/** DLR: the SMS's status, at `at` (epoch milliseconds). */
export function smsStatusCallback(id: string, sms: OutgoingSms, status: SmsStatus, reason: string | null, at: number) {
  return {
    event_id: id,
    event: 'sms.status',
    ...smsFields(sms),
    status,
    reason,
    parts: sms.parts,
    datetime: formatUtcMinus3(at),
  };
}

/** MO: a reply to the SMS, at `at` (epoch milliseconds). */
export function smsReplyCallback(id: string, sms: OutgoingSms, text: string, at: number) {
  return {
    event_id: id,
    event: 'sms.reply',
    ...smsFields(sms),
    text,
    datetime: formatUtcMinus3(at),
  };
}

function smsFields(sms: OutgoingSms) {
  return {
    sms_id: sms.smsId,
    request_id: sms.requestId,
    index: sms.index,
    reference: sms.reference ?? null,
    campaign_id: sms.campaignId ?? null,
    phone: sms.phone,
  };
}
