/**
 * The durable components of the sqlite backend, one file each (durable.ts says what one is): the
 * one list a new durable feature is added to. Its type asks for every field of a step
 * (src/storage/server-storage.ts), so a field without its component does not compile. The order is
 * the order of the writes in a step's transaction.
 */
import type { StorePart } from '../../../../storage/sqlite-tables.js';
import { activity } from './activity.js';
import { blocklist } from './blocklist.js';
import { campaignPhones } from './campaign-phones.js';
import { channelMemory } from './channel-memory.js';
import { deadLetters } from './dead-letters.js';
import { type Durable, type DurableName, type NamedComponent, namedComponent, storePart } from './durable.js';
import { idempotency } from './idempotency.js';
import { outbox } from './outbox.js';
import { sentPhones } from './sent-phones.js';
import { sms } from './sms.js';
import type { DurableSources } from './sources.js';
import { statistics } from './statistics.js';
import { tracked } from './tracked.js';
import { values } from './values.js';

const DURABLE: { readonly [N in DurableName]: Durable<N> } = {
  values,
  outbox,
  deadLetters,
  sms,
  tracked,
  statistics,
  campaignPhones,
  sentPhones,
  blocklist,
  activity,
  channelMemory,
  idempotency,
};

/** The parts the store opens: every durable component's tables. */
export function storeParts(): StorePart[] {
  return Object.values(DURABLE).map((d: Durable<DurableName>) => storePart(d));
}

/** Every durable component, made over the server's parts and the backend's books. */
export function durableComponents(sources: DurableSources): NamedComponent[] {
  return Object.values(DURABLE).map((d: Durable<DurableName>) => namedComponent(d, sources));
}
