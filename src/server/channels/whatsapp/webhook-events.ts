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
    if (entry) skipped += readEntry(entry, events);
    else skipped++;
  }
  return { events, skipped };
}

/** What an entry tells of each of its changes: the business account (WABA id) and the entry's time. */
interface EntryFacts {
  readonly wabaId: string | undefined;
  readonly at: number | undefined;
}

/** Reads the changes of an entry into `events`; returns how many parts could not be read. */
function readEntry(entry: Obj, events: WebhookEvent[]): number {
  const facts: EntryFacts = { wabaId: str(entry['id']), at: seconds(entry['time']) };
  let skipped = 0;
  for (const rawChange of arr(entry['changes'])) {
    const change = obj(rawChange);
    const value = obj(change?.['value']);
    if (!change || !value) {
      skipped++;
      continue;
    }
    // A field the channel does not act on (calls, business capabilities…) has no reader: nothing to do.
    skipped += CHANGE_READERS.get(change['field'])?.(value, facts, events) ?? 0;
  }
  return skipped;
}

/** Reads a change's `value` into `events`; returns how many of its parts could not be read. */
type ChangeReader = (value: Obj, entry: EntryFacts, events: WebhookEvent[]) => number;

/** A change that is one event, or none when it lacks what names it (a part skipped). */
const oneEvent =
  (read: (value: Obj, entry: EntryFacts) => WebhookEvent | undefined): ChangeReader =>
  (value, entry, events) => {
    const event = read(value, entry);
    if (event === undefined) return 1;
    events.push(event);
    return 0;
  };

/** The reader of each change field the channel acts on. */
const CHANGE_READERS: ReadonlyMap<unknown, ChangeReader> = new Map<unknown, ChangeReader>([
  ['messages', (value, _entry, events) => readMessages(value, events)],
  ['message_template_status_update', oneEvent(templateEvent)],
  ['phone_number_quality_update', oneEvent(qualityEvent)],
  ['account_update', oneEvent(accountEvent)],
]);

/** A template paused, disabled, approved again… */
function templateEvent(value: Obj, { wabaId, at }: EntryFacts): WebhookEvent | undefined {
  const event = str(value['event']);
  if (!event) return undefined;
  const other = obj(value['other_info']);
  const templateId = str(value['message_template_id']);
  const name = str(value['message_template_name']);
  const language = str(value['message_template_language']);
  return {
    kind: 'template',
    key: `t:${wabaId}:${templateId ?? `${name}/${language}`}:${event}:${str(other?.['title']) ?? ''}:${at ?? ''}`,
    wabaId,
    event,
    templateId,
    name,
    language,
    reason: str(value['reason']),
    title: str(other?.['title']),
    description: str(other?.['description']),
    at,
  };
}

/** A number's tier or throughput changed, its portfolio's messaging limit changed, or it was flagged. */
function qualityEvent(value: Obj, { wabaId, at }: EntryFacts): WebhookEvent | undefined {
  const event = str(value['event']);
  const display = str(value['display_phone_number']);
  if (!event || !display) return undefined;
  const tier = str(value['current_limit']);
  const businessTier = str(value['max_daily_conversations_per_business']);
  const rating = str(value['quality_rating']);
  return {
    kind: 'quality',
    key: `q:${wabaId}:${display}:${event}:${tier ?? ''}:${businessTier ?? ''}:${rating ?? ''}:${at ?? ''}`,
    wabaId,
    event,
    displayPhoneNumber: display,
    tier,
    businessTier,
    rating,
    at,
  };
}

/** The business account restricted, disabled or reinstated, found in violation, deleted. */
function accountEvent(value: Obj, { wabaId, at }: EntryFacts): WebhookEvent | undefined {
  const event = str(value['event']);
  if (!event) return undefined;
  const restrictions = restrictionsOf(value['restriction_info']);
  const banState = str(obj(value['ban_info'])?.['waba_ban_state']);
  const violation = str(obj(value['violation_info'])?.['violation_type']);
  const said = restrictions.map((r) => `${r.type}@${r.until ?? ''}`).join(',');
  return {
    kind: 'account',
    key: `a:${wabaId}:${event}:${said}:${banState ?? ''}:${violation ?? ''}:${at ?? ''}`,
    wabaId,
    event,
    restrictions,
    banState,
    violation,
    at,
  };
}

/** `restriction_info`: documented as an array; a single object (as some relays write it) is read as one. */
function restrictionsOf(info: unknown): AccountRestriction[] {
  const restrictions: AccountRestriction[] = [];
  for (const raw of Array.isArray(info) ? info : obj(info) ? [info] : []) {
    const type = str(obj(raw)?.['restriction_type']);
    if (type !== undefined) restrictions.push({ type, until: when(obj(raw)?.['expiration']) });
  }
  return restrictions;
}

/** The contact of a user an event names by phone (wa_id) or BSUID (user_id); the only one when a change lists one. */
type PersonOf = (phone: string | undefined, userId: string | undefined) => Obj | undefined;

/** Statuses of our messages, then users' messages to our numbers. */
function readMessages(value: Obj, events: WebhookEvent[]): number {
  // Users' ids as the contacts array gives them, by phone (wa_id) or BSUID (user_id).
  const people = arr(value['contacts'])
    .map(obj)
    .filter((c): c is Obj => c !== undefined);
  const personOf: PersonOf = (phone, userId) =>
    people.find((c) => (phone !== undefined && str(c['wa_id']) === phone) || (userId !== undefined && str(c['user_id']) === userId)) ?? (people.length === 1 ? people[0] : undefined);
  return readStatuses(value, personOf, events) + readUserMessages(value, personOf, events);
}

/** The user's ids on an event: the BSUID it gives, else its contact's; the contact's username. */
function userOf(userId: string | undefined, person: Obj | undefined): { bsuid: string | null; username: string | null } {
  return { bsuid: userId ?? str(person?.['user_id']) ?? null, username: str(obj(person?.['profile'])?.['username']) ?? null };
}

function readStatuses(value: Obj, personOf: PersonOf, events: WebhookEvent[]): number {
  let skipped = 0;
  for (const raw of arr(value['statuses'])) {
    const s = obj(raw);
    const wamid = str(s?.['id']);
    const status = str(s?.['status']);
    if (!s || !wamid || !status) {
      skipped++;
      continue;
    }
    if (!STATUSES.has(status)) continue; // deleted, warning, …: nothing for the HSM notifications
    const userId = str(s['recipient_user_id']);
    const errorCode = obj(arr(s['errors'])[0])?.['code'];
    events.push({
      kind: 'status',
      key: `s:${wamid}:${status}`,
      wamid,
      status: status as StatusValue,
      opaque: str(s['biz_opaque_callback_data']),
      at: seconds(s['timestamp']),
      ...userOf(userId, personOf(str(s['recipient_id']), userId)),
      errorCode: typeof errorCode === 'number' && Number.isInteger(errorCode) ? errorCode : undefined,
    });
  }
  return skipped;
}

function readUserMessages(value: Obj, personOf: PersonOf, events: WebhookEvent[]): number {
  const metadata = obj(value['metadata']);
  const phoneNumberId = str(metadata?.['phone_number_id']);
  const displayPhoneNumber = str(metadata?.['display_phone_number']);
  let skipped = 0;
  for (const raw of arr(value['messages'])) {
    const m = obj(raw);
    const wamid = str(m?.['id']);
    if (!m || !wamid) {
      skipped++;
      continue;
    }
    const from = str(m['from']);
    const userId = str(m['from_user_id']);
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
      ...userOf(userId, personOf(from, userId)),
    });
  }
  return skipped;
}

/** What a user's message says, in the attendance's types: text, a button's label, a caption. */
interface Content {
  readonly type: InboundType;
  readonly text: string;
  readonly buttonPayload: string | undefined;
}

/** An image, a video, an audio: what its caption says. */
const caption = (type: InboundType) => (part: Obj | undefined) => ({ type, text: str(part?.['caption']) ?? '', buttonPayload: undefined });

/** How each type of message says it, from its part (`m[type]`); any other type says nothing the attendance shows. */
const CONTENT_READERS: ReadonlyMap<string, (part: Obj | undefined) => Content> = new Map<string, (part: Obj | undefined) => Content>([
  ['text', (part) => ({ type: 'text', text: str(part?.['body']) ?? '', buttonPayload: undefined })],
  // A quick-reply button of a template: its label and its payload.
  ['button', (part) => ({ type: 'text', text: str(part?.['text']) ?? '', buttonPayload: str(part?.['payload']) })],
  [
    'interactive',
    (part) => {
      const reply = obj(part?.['button_reply']) ?? obj(part?.['list_reply']);
      return { type: 'text', text: str(reply?.['title']) ?? '', buttonPayload: str(reply?.['id']) };
    },
  ],
  ['image', caption('image')],
  ['video', caption('video')],
  ['audio', caption('audio')],
  ['document', (part) => ({ type: 'file', text: str(part?.['caption']) ?? str(part?.['filename']) ?? '', buttonPayload: undefined })],
]);

function contentOf(m: Obj): Content {
  const kind = str(m['type']) ?? 'unknown';
  return CONTENT_READERS.get(kind)?.(obj(m[kind])) ?? { type: 'text', text: '', buttonPayload: undefined };
}
