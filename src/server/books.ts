/**
 * The server's books: what it keeps beside the engine and the outbox (the channel's ids of its
 * messages, each company's blocklist, the phones each campaign and each business took, the dead
 * letters, the activity of the period reports), made over the backend's hooks (whether they
 * remember their changes for its writes) and loaded from a snapshot file (`restore`). What a
 * store kept is loaded by the store's components once the parts are made
 * (backends/sqlite/components/).
 */
import { ActivityLog } from './activity-log.js';
import { Blocklist } from './blocklist.js';
import { CampaignPhones } from './campaign-phones.js';
import { ChannelMemoryStore } from './channels/memory.js';
import { DeadLetterBook } from './dead-letters.js';
import { DEFAULT_ALREADY_SENT_WINDOW_MS, type BuildServerOptions } from './options.js';
import type { OutgoingSms } from './ports/channel.js';
import { SentPhones } from './sent-phones.js';
import type { BuildKit } from './server-env.js';

export interface ServerBooks {
  /** The provider's ids of the messages sent (docs/channels.md, "What survives a restart"). */
  readonly channelMemory: ChannelMemoryStore;
  /** Each company's blocked phones. */
  readonly blocklist: Blocklist;
  /** Phones each campaign took. */
  readonly campaignPhones: CampaignPhones;
  /** The phones each business took per template type (already_sent); on Redis the fleet's (shared-phones.ts). */
  readonly sentPhones: SentPhones;
  /** Dead-lettered events, kept for an operator to see and replay (dead-letters.ts). */
  readonly deadLetterBook: DeadLetterBook;
  /** What the period reports read; bounded by age and count (docs/decisions.md, "Report data"). */
  readonly activity: ActivityLog;
}

export function openBooks({ env, options, backend }: BuildKit): ServerBooks {
  const { clock, engine } = env;
  const { restore } = options;
  // Two entries a message (its platform id, its recipient), so twice the tracked bound.
  const channelMemory = new ChannelMemoryStore(2 * env.maxTracked, backend.channelMemory);
  // In this process written with each durable step; on Redis the fleet's are the backend's.
  const deadLetterBook = new DeadLetterBook(options.deadLetters, backend.tracksChanges);
  deadLetterBook.load(restore?.deadLetters ?? []);
  const blocklist = new Blocklist(backend.blocklistTracksChanges);
  const campaignPhones = new CampaignPhones(backend.tracksChanges);
  blocklist.load(restore?.blocklist ?? []);
  campaignPhones.load(restore?.campaignPhones ?? []);
  const sentPhones = new SentPhones({ windowMs: options.alreadySentWindowMs ?? DEFAULT_ALREADY_SENT_WINDOW_MS, trackChanges: backend.tracksChanges });
  sentPhones.load(restore?.sentPhones ?? [], clock.now());
  let businessOfNumber = new Map<string, number>();
  // Read again on a miss: a fleet replaced at run time may bring numbers.
  const businessOf = (phone: string) => businessOfNumber.get(phone) ?? (businessOfNumber = new Map(engine.numbers().map((n) => [n.phone, n.businessId]))).get(phone);
  const activity = new ActivityLog({
    clock,
    retentionMs: env.reportRetentionMs,
    maxMessages: options.maxReportMessages ?? 500_000,
    maxAttendances: options.maxReportAttendances ?? 100_000,
    businessOf,
    trackChanges: backend.tracksChanges,
    onChange: () => backend.persistence.schedule(),
  });
  activity.load(restore?.activity ?? []);
  return { channelMemory, blocklist, campaignPhones, sentPhones, deadLetterBook, activity };
}

/** SMS a snapshot kept, accepted and not answered by the gateway: they go again (at least once). */
export function pendingSms(options: BuildServerOptions): readonly OutgoingSms[] {
  return options.restore?.sms ?? [];
}
