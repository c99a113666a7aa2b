/**
 * A large request is screened in slices before its one piece (intake-parse.ts) and the one piece
 * uses that screening only while the version of the sets it read is unchanged. The property that
 * makes this safe: whatever happens to the blocklist, the campaigns' phones, the phones already
 * sent and the clock in between, an unchanged version means screening again would give the same
 * answer. And the shortcut is taken: with nothing changed, the version is the same.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParsedSendRequest } from '../../src/contract/parse-send-request.js';
import { Blocklist } from '../../src/server/blocklist.js';
import { CampaignPhones } from '../../src/server/campaign-phones.js';
import { screeningVersion, startRequestScreening, type ScreeningSets } from '../../src/server/intake.js';
import { SentPhones } from '../../src/server/sent-phones.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const COMPANY = 1;
const phone = (i: number) => `55119${String(10_000_000 + i).padStart(8, '0')}`;

/** A request of business 1, type 10, campaign 1 whose contacts (all passing the contract) have these phones. */
function request(phones: readonly number[]): ParsedSendRequest {
  const contacts = phones.map((p) => ({ phone_number: phone(p) }));
  return {
    request: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts },
    accepted: contacts.map((contact, index) => ({ index, contact })),
    rejected: [],
  };
}

function screen(sets: ScreeningSets, parsed: ParsedSendRequest, now: number, stepSize = Infinity): ParsedSendRequest {
  const screening = startRequestScreening(sets, COMPANY, parsed, now);
  while (!screening.step(stepSize));
  return screening.result();
}

/** What may happen to the sets between the screening in slices and the one piece. */
type Op =
  | { kind: 'block' | 'unblock'; phone: number; company: number }
  | { kind: 'campaign'; campaign: number; phones: number[] }
  | { kind: 'drop'; campaign: number }
  | { kind: 'sent'; business: number; phones: number[] }
  | { kind: 'release'; phone: number }
  | { kind: 'wait'; ms: number };

const PHONES = fc.integer({ min: 0, max: 7 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constantFrom('block' as const, 'unblock' as const), phone: PHONES, company: fc.constantFrom(1, 2) }),
  fc.record({ kind: fc.constant('campaign' as const), campaign: fc.constantFrom(1, 2), phones: fc.array(PHONES, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('drop' as const), campaign: fc.constantFrom(1, 2) }),
  fc.record({ kind: fc.constant('sent' as const), business: fc.constantFrom(1, 2), phones: fc.array(PHONES, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('release' as const), phone: PHONES }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 3 * HOUR })) }),
);

function apply(sets: { blocklist: Blocklist; campaignPhones: CampaignPhones; sentPhones: SentPhones }, o: Op, now: number): number {
  switch (o.kind) {
    case 'block':
      sets.blocklist.add(o.company, phone(o.phone), now, 'operator');
      return now;
    case 'unblock':
      sets.blocklist.remove(o.company, phone(o.phone));
      return now;
    case 'campaign':
      sets.campaignPhones.remember(COMPANY, o.campaign, o.phones.map(phone));
      return now;
    case 'drop':
      sets.campaignPhones.drop(COMPANY, o.campaign);
      return now;
    case 'sent':
      sets.sentPhones.remember(o.business, 10, o.phones.map(phone), now);
      return now;
    case 'release':
      sets.sentPhones.release(1, 10, phone(o.phone), now);
      return now;
    case 'wait':
      return now + o.ms;
  }
}

describe('screening before the one piece', () => {
  it('with the version unchanged, screening again gives the same answer, whatever happened in between', () => {
    fc.assert(
      fc.property(
        fc.array(PHONES, { minLength: 1, maxLength: 8 }).map((ps) => [...new Set(ps)]),
        fc.array(op, { maxLength: 6 }),
        fc.array(op, { maxLength: 6 }),
        fc.integer({ min: 1, max: 3 }),
        (phones, before, between, stepSize) => {
          const sets = { blocklist: new Blocklist(), campaignPhones: new CampaignPhones(), sentPhones: new SentPhones({ windowMs: DAY }) };
          let now = 10 * DAY;
          for (const o of before) now = apply(sets, o, now);
          const parsed = request(phones);
          // As intake-parse.ts does: the views read, then the version, then the steps.
          const screening = startRequestScreening(sets, COMPANY, parsed, now);
          const version = screeningVersion(sets, now);
          // What happens between the steps and after them, up to the one piece.
          const ops = [...between];
          let done = false;
          while (!done) {
            done = screening.step(stepSize);
            const o = ops.shift();
            if (o !== undefined) now = apply(sets, o, now);
          }
          for (const o of ops) now = apply(sets, o, now);
          const prescreened = screening.result();
          if (screeningVersion(sets, now) === version) expect(prescreened).toEqual(screen(sets, parsed, now));
        },
      ),
    );
  });

  it('keeps the version while nothing changes, so a quiet moment needs no second screening', () => {
    const sets = { blocklist: new Blocklist(), campaignPhones: new CampaignPhones(), sentPhones: new SentPhones({ windowMs: DAY }) };
    const now = 10 * DAY + 5 * 60_000;
    sets.sentPhones.remember(1, 10, [phone(1)], now);
    sets.campaignPhones.remember(COMPANY, 1, [phone(2)]);
    sets.blocklist.add(COMPANY, phone(3), now, 'reply');
    const parsed = request([0, 1, 2, 3]);
    const screening = startRequestScreening(sets, COMPANY, parsed, now);
    const version = screeningVersion(sets, now);
    screening.step(Infinity);
    expect(screening.result().rejected.map((r) => r.reason)).toEqual(['already_sent', 'duplicated', 'blocked']);
    // Reading views and the passing of a second change nothing.
    startRequestScreening(sets, COMPANY, parsed, now + 1000).step(Infinity);
    expect(screeningVersion(sets, now + 1000)).toBe(version);
    // Each kind of change does.
    const changes: (() => void)[] = [
      () => sets.sentPhones.remember(1, 10, [phone(4)], now),
      () => sets.campaignPhones.remember(COMPANY, 2, [phone(4)]),
      () => sets.blocklist.add(2, phone(4), now, 'reply'),
      () => sets.blocklist.remove(2, phone(4)),
      () => sets.sentPhones.release(1, 10, phone(1), now),
      () => sets.campaignPhones.drop(COMPANY, 2),
    ];
    let last = version;
    for (const change of changes) {
      change();
      const next = screeningVersion(sets, now);
      expect(next).not.toBe(last);
      last = next;
    }
    // And the clock, once a bucket of the window may have left it (a bucket is 1/24 of the window).
    expect(screeningVersion(sets, now + DAY / 24)).not.toBe(last);
  });
});
