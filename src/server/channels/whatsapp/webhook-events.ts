/**
 * Meta's webhook notifications, read into the few events the channel acts on. The payload is
 * `{ object: "whatsapp_business_account", entry: [{ id: <WABA id>, time?, changes: [{ field,
 * value }] }] }` (docs/channels.md, "Sources"):
 *
 * - field `messages`, `value.statuses[]`: a sent message's `sent` / `delivered` / `read` /
 *   `failed` (with `errors[]`), carrying our message id back in `biz_opaque_callback_data`;
 * - field `messages`, `value.messages[]`: a message a user sent to one of our numbers
 *   (`metadata.phone_number_id`), with `context.id` when it replies to one of ours;
 * - field `message_template_status_update`: a template paused, disabled, approved again…;
 * - field `phone_number_quality_update`: a number's messaging-limit tier or throughput changed, its
 *   business portfolio's messaging limit changed (`max_daily_conversations_per_business`), or the
 *   number was flagged for low quality (FLAGGED, UNFLAGGED);
 * - field `account_update`: the WABA restricted (`restriction_info[]` with `restriction_type` and
 *   `expiration`), disabled or reinstated (`ban_info.waba_ban_state`), found in violation
 *   (`violation_info.violation_type`), deleted.
 *
 * Anything else (other fields, status values, message types) is read as far as it matters or
 * skipped: a new field Meta adds never breaks the receiver. Every event has a `key` naming it, so
 * a notification Meta delivers twice is acted on once.
 */

/** Type of a user's message, in the attendance's words. */
export type InboundType = 'text' | 'audio' | 'image' | 'video' | 'file';

export type WebhookEvent =
  | {
      readonly kind: 'status';
      readonly key: string;
      readonly wamid: string;
      /**
       * `held_for_quality_assessment`: the platform holds a paced template's message until its
       * early feedback is in; a `sent` (released) or a `failed` (dropped) follows.
       */
      readonly status: StatusValue;
      /** `biz_opaque_callback_data`: the message id the send carried. */
      readonly opaque: string | undefined;
      /** Milliseconds (the webhook's `timestamp` is in seconds). */
      readonly at: number | undefined;
      readonly bsuid: string | null;
      readonly username: string | null;
      readonly errorCode: number | undefined;
    }
  | {
      readonly kind: 'message';
      readonly key: string;
      readonly wamid: string;
      readonly phoneNumberId: string | undefined;
      readonly displayPhoneNumber: string | undefined;
      /** The user's phone (`from`). */
      readonly from: string | undefined;
      /** The message it replies to (`context.id`). */
      readonly contextId: string | undefined;
      readonly at: number | undefined;
      readonly type: InboundType;
      readonly text: string;
      /** Quick-reply button payload (a template's opt-out button says so here). */
      readonly buttonPayload: string | undefined;
      readonly bsuid: string | null;
      readonly username: string | null;
    }
  | {
      readonly kind: 'template';
      readonly key: string;
      readonly wabaId: string | undefined;
      readonly event: string;
      readonly templateId: string | undefined;
      readonly name: string | undefined;
      readonly language: string | undefined;
      readonly reason: string | undefined;
      /** `other_info.title`: FIRST_PAUSE, SECOND_PAUSE, RATE_LIMITING_PAUSE, UNPAUSE… */
      readonly title: string | undefined;
      readonly description: string | undefined;
      readonly at: number | undefined;
    }
  | {
      readonly kind: 'quality';
      readonly key: string;
      readonly wabaId: string | undefined;
      readonly event: string;
      readonly displayPhoneNumber: string;
      /** `current_limit` (deprecated by Meta): the number's own tier, read only without `businessTier`. */
      readonly tier: string | undefined;
      /** `max_daily_conversations_per_business`: the business portfolio's messaging limit, shared by its numbers. */
      readonly businessTier: string | undefined;
      /** `quality_rating` when a payload carries one (GREEN, YELLOW, RED, UNKNOWN). */
      readonly rating: string | undefined;
      readonly at: number | undefined;
    }
  | {
      readonly kind: 'account';
      readonly key: string;
      readonly wabaId: string | undefined;
      /** ACCOUNT_RESTRICTION, ACCOUNT_VIOLATION, DISABLED_UPDATE, ACCOUNT_DELETED, … */
      readonly event: string;
      /** `restriction_info[]`: every restriction on the account now, each with its end when it has one. */
      readonly restrictions: readonly AccountRestriction[];
      /** `ban_info.waba_ban_state`: DISABLE, SCHEDULE_FOR_DISABLE, REINSTATE. */
      readonly banState: string | undefined;
      /** `violation_info.violation_type`. */
      readonly violation: string | undefined;
      readonly at: number | undefined;
    };

/** One of an account's restrictions (`restriction_info[]`). */
export interface AccountRestriction {
  /** `restriction_type`, e.g. RESTRICTED_BIZ_INITIATED_MESSAGING. */
  readonly type: string;
  /** `expiration` in milliseconds (Meta sends Unix seconds), when the restriction has an end. */
  readonly until: number | undefined;
}

/** The statuses of a sent message the channel reads. */
export type StatusValue = 'sent' | 'delivered' | 'read' | 'failed' | 'held_for_quality_assessment';

/** What a notification held: the events, and how many parts could not be read. */
export interface ReadWebhook {
  readonly events: WebhookEvent[];
  readonly skipped: number;
}

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined);
/** Unix seconds (a string or a number) as milliseconds. */
const seconds = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) && n > 0 ? n * 1000 : undefined;
};

/** A time as Unix seconds (the documented form), or an ISO 8601 date some relays write, in milliseconds. */
const when = (v: unknown): number | undefined => {
  const s = seconds(v);
  if (s !== undefined || typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T/.test(v)) return s;
  const ms = Date.parse(v);
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined;
};

const STATUSES: ReadonlySet<string> = new Set<StatusValue>(['sent', 'delivered', 'read', 'failed', 'held_for_quality_assessment']);

/** Reads a parsed notification body. Never throws. */
export function readWebhook(body: unknown): ReadWebhook {
  const events: WebhookEvent[] = [];
  let skipped = 0;
  for (const rawEntry of arr(obj(body)?.['entry'])) {
    const entry = obj(rawEntry);
    if (!entry) {
      skipped++;
      continue;
    }
    const wabaId = str(entry['id']);
    const entryTime = seconds(entry['time']);
    for (const rawChange of arr(entry['changes'])) {
      const change = obj(rawChange);
      const value = obj(change?.['value']);
      if (!change || !value) {
        skipped++;
        continue;
      }
      switch (change['field']) {
        case 'messages':
          skipped += readMessages(value, events);
          break;
        case 'message_template_status_update': {
          const event = str(value['event']);
          if (!event) {
            skipped++;
            break;
          }
          const other = obj(value['other_info']);
          const templateId = str(value['message_template_id']);
          const name = str(value['message_template_name']);
          const language = str(value['message_template_language']);
          events.push({
            kind: 'template',
            key: `t:${wabaId}:${templateId ?? `${name}/${language}`}:${event}:${str(other?.['title']) ?? ''}:${entryTime ?? ''}`,
            wabaId,
            event,
            templateId,
            name,
            language,
            reason: str(value['reason']),
            title: str(other?.['title']),
            description: str(other?.['description']),
            at: entryTime,
          });
          break;
        }
        case 'phone_number_quality_update': {
          const event = str(value['event']);
          const display = str(value['display_phone_number']);
          if (!event || !display) {
            skipped++;
            break;
          }
          const tier = str(value['current_limit']);
          const businessTier = str(value['max_daily_conversations_per_business']);
          const rating = str(value['quality_rating']);
          events.push({
            kind: 'quality',
            key: `q:${wabaId}:${display}:${event}:${tier ?? ''}:${businessTier ?? ''}:${rating ?? ''}:${entryTime ?? ''}`,
            wabaId,
            event,
            displayPhoneNumber: display,
            tier,
            businessTier,
            rating,
            at: entryTime,
          });
          break;
        }
        case 'account_update': {
          const event = str(value['event']);
          if (!event) {
            skipped++;
            break;
          }
          const restrictions: AccountRestriction[] = [];
          // Documented as an array; a single object (as some relays write it) is read as one.
          const info = value['restriction_info'];
          for (const raw of Array.isArray(info) ? info : obj(info) ? [info] : []) {
            const type = str(obj(raw)?.['restriction_type']);
            if (type !== undefined) restrictions.push({ type, until: when(obj(raw)?.['expiration']) });
          }
          const banState = str(obj(value['ban_info'])?.['waba_ban_state']);
          const violation = str(obj(value['violation_info'])?.['violation_type']);
          const said = restrictions.map((r) => `${r.type}@${r.until ?? ''}`).join(',');
          events.push({
            kind: 'account',
            key: `a:${wabaId}:${event}:${said}:${banState ?? ''}:${violation ?? ''}:${entryTime ?? ''}`,
            wabaId,
            event,
            restrictions,
            banState,
            violation,
            at: entryTime,
          });
          break;
        }
        default:
          // A field the channel does not act on (calls, business capabilities…): nothing to do.
          break;
      }
    }
  }
  return { events, skipped };
}

function readMessages(value: Obj, events: WebhookEvent[]): number {
  let skipped = 0;
  const metadata = obj(value['metadata']);
  const phoneNumberId = str(metadata?.['phone_number_id']);
  const displayPhoneNumber = str(metadata?.['display_phone_number']);
  // Users' ids as the contacts array gives them, by phone (wa_id) or BSUID (user_id).
  const people = arr(value['contacts'])
    .map(obj)
    .filter((c): c is Obj => c !== undefined);
  const personOf = (phone: string | undefined, userId: string | undefined) =>
    people.find((c) => (phone !== undefined && str(c['wa_id']) === phone) || (userId !== undefined && str(c['user_id']) === userId)) ?? (people.length === 1 ? people[0] : undefined);
  for (const raw of arr(value['statuses'])) {
    const s = obj(raw);
    const wamid = str(s?.['id']);
    const status = str(s?.['status']);
    if (!s || !wamid || !status) {
      skipped++;
      continue;
    }
    if (!STATUSES.has(status)) continue; // deleted, warning, …: nothing for the HSM notifications
    const recipient = str(s['recipient_id']);
    const person = personOf(recipient, str(s['recipient_user_id']));
    const errorCode = obj(arr(s['errors'])[0])?.['code'];
    events.push({
      kind: 'status',
      key: `s:${wamid}:${status}`,
      wamid,
      status: status as StatusValue,
      opaque: str(s['biz_opaque_callback_data']),
      at: seconds(s['timestamp']),
      bsuid: str(s['recipient_user_id']) ?? str(person?.['user_id']) ?? null,
      username: str(obj(person?.['profile'])?.['username']) ?? null,
      errorCode: typeof errorCode === 'number' && Number.isInteger(errorCode) ? errorCode : undefined,
    });
  }
  for (const raw of arr(value['messages'])) {
    const m = obj(raw);
    const wamid = str(m?.['id']);
    if (!m || !wamid) {
      skipped++;
      continue;
    }
    const from = str(m['from']);
    const person = personOf(from, str(m['from_user_id']));
    const { type, text, buttonPayload } = contentOf(m);
    events.push({
      kind: 'message',
      key: `m:${wamid}`,
      wamid,
      phoneNumberId,
      displayPhoneNumber,
      from,
      contextId: str(obj(m['context'])?.['id']),
      at: seconds(m['timestamp']),
      type,
      text,
      buttonPayload,
      bsuid: str(m['from_user_id']) ?? str(person?.['user_id']) ?? null,
      username: str(obj(person?.['profile'])?.['username']) ?? null,
    });
  }
  return skipped;
}

/** What a user's message says, in the attendance's types: text, a button's label, a caption. */
function contentOf(m: Obj): { type: InboundType; text: string; buttonPayload: string | undefined } {
  const kind = str(m['type']) ?? 'unknown';
  const part = obj(m[kind]);
  switch (kind) {
    case 'text':
      return { type: 'text', text: str(part?.['body']) ?? '', buttonPayload: undefined };
    case 'button':
      // A quick-reply button of a template: its label and its payload.
      return { type: 'text', text: str(part?.['text']) ?? '', buttonPayload: str(part?.['payload']) };
    case 'interactive': {
      const reply = obj(part?.['button_reply']) ?? obj(part?.['list_reply']);
      return { type: 'text', text: str(reply?.['title']) ?? '', buttonPayload: str(reply?.['id']) };
    }
    case 'image':
    case 'video':
    case 'audio':
      return { type: kind, text: str(part?.['caption']) ?? '', buttonPayload: undefined };
    case 'document':
      return { type: 'file', text: str(part?.['caption']) ?? str(part?.['filename']) ?? '', buttonPayload: undefined };
    default:
      return { type: 'text', text: '', buttonPayload: undefined };
  }
}
