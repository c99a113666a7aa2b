/**
 * The dead letters of the server on Redis, shared by every instance: the instance whose delivery
 * dead-letters an event writes it with the step that acknowledges the event in the shared outbox
 * (queue.ts, scripts/step.ts); any instance lists them and replays them. A replay is one script
 * (scripts/dead-letter-replay.ts): the dead letter goes, and the event goes back into the shared
 * outbox as a replay (`{ replay: event }`: the instance that claims it puts it into its outbox with
 * `Outbox.replay`, even if that instance remembers the id as finished).
 *
 * Keys (`<p>` the queue's prefix with its hash tag, so the scripts run in one Cluster slot):
 *   <p>dl:h             hash: event id -> the dead letter (JSON, dead-letters.ts's DeadLetter)
 *   <p>dl:t             sorted set of every dead letter's event id by the time it was dead-lettered
 *   <p>dl:t:<company>   the same, per company (the per-company bound)
 *   <p>dl:q, dl:q:<c>   the same ids by the order they were dead-lettered (a counter, <p>dl:seq):
 *                       a replay of all goes in this order, so a contact's notifications keep theirs
 *   <p>dl:n             hash: family -> dead letters kept (the gauge)
 * Bounds as in the book of one process: per company the newest `maxPerCompany`, none older than
 * `maxAgeMs` (dropped when one is added, and before a list).
 */
import type { WebhookFamily } from '../../../events/outbox.js';
import { afterCursor, formatCursor, type DeadLetter, type DeadLetterPage, type DeadLetterStore } from '../../ports/dead-letters.js';
import type { QueueClient } from './queue.js';
import { callScript } from './scripts/codec.js';
import { DEAD_LETTER_PRUNE } from './scripts/dead-letter-prune.js';
import { DEAD_LETTER_REPLAY, type DeadLetterReplayArgs } from './scripts/dead-letter-replay.js';

/** Ids read from the sorted set per round of a list. */
const LIST_BATCH = 200;

export interface SharedDeadLettersDeps {
  readonly client: QueueClient;
  /** The queue's prefix (with its hash tag). */
  readonly prefix: string;
  /** The shared outbox stream and its group. */
  readonly outboxKey: string;
  readonly outboxGroup: string;
  readonly maxPerCompany: number;
  readonly maxAgeMs: number;
  readonly now: () => number;
  /** Writes a dead letter with the next step (the one that acknowledges its event). */
  readonly stage: (d: DeadLetter) => void;
  /** Events were put into the shared outbox: claim them. */
  readonly kick: () => void;
}

/** The dead letters of the fleet, in Redis. */
export function sharedDeadLetters(deps: SharedDeadLettersDeps): DeadLetterStore {
  const { client, prefix } = deps;
  const root = `${prefix}dl:`;
  const replay = async (companyId: number | null, which: DeadLetterReplayArgs['which']): Promise<DeadLetter[]> => {
    const replayed = await callScript(client, DEAD_LETTER_REPLAY, { outbox: deps.outboxKey, outboxGroup: deps.outboxGroup, byTime: `${root}t`, companyId, which });
    if (replayed.length > 0) deps.kick();
    return replayed.map((json) => JSON.parse(json) as DeadLetter);
  };
  return {
    deadLettered: (d) => deps.stage(d),
    list: async (scope, query) => {
      await callScript(client, DEAD_LETTER_PRUNE, { byTime: `${root}t`, oldest: deps.now() - deps.maxAgeMs });
      const key = scope === null ? `${root}t` : `${root}t:${scope}`;
      const items: DeadLetter[] = [];
      const before = query.before;
      let offset = 0;
      let more = false;
      // Newest first (reverse score, then reverse id: ZREVRANGEBYSCORE's order), from the cursor on.
      for (;;) {
        const page = (await client.call('ZREVRANGEBYSCORE', key, before === undefined ? '+inf' : before.at, '-inf', 'LIMIT', offset, LIST_BATCH)) as string[];
        if (page.length === 0) break;
        offset += page.length;
        const rows = (await client.call('HMGET', `${root}h`, ...page)) as (string | null)[];
        for (const json of rows) {
          if (json === null) continue;
          const d = JSON.parse(json) as DeadLetter;
          if (before !== undefined && !afterCursor(d, before)) continue;
          if (query.family !== undefined && d.event.family !== query.family) continue;
          if (items.length === query.limit) {
            more = true;
            break;
          }
          items.push(d);
        }
        if (more || page.length < LIST_BATCH) break;
      }
      const last = items[items.length - 1];
      const answer: DeadLetterPage = { items, next: more && last ? formatCursor({ at: last.deadLetteredAt, id: last.event.id }) : null };
      return answer;
    },
    replay: async (scope, eventId) => (await replay(scope, { one: eventId }))[0],
    replayAll: async (scope, family) => (await replay(scope, { family: family ?? null })).length,
    counts: async () => {
      const flat = (await client.call('HGETALL', `${root}n`)) as string[] | Record<string, string>;
      const pairs = Array.isArray(flat) ? flat : Object.entries(flat).flat();
      const out = new Map<WebhookFamily, number>();
      for (let i = 0; i + 1 < pairs.length; i += 2) out.set(pairs[i] as WebhookFamily, Number(pairs[i + 1]));
      return out;
    },
    rows: () => undefined,
  };
}
