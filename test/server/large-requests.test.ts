/**
 * Large POST /messenger/messages/ requests are decoded and checked in slices, other requests are
 * answered in between, and the intake keeps its rules: a request is taken whole or refused whole,
 * and the intake bound holds however two large requests interleave.
 *
 * Ordering is asserted by events, never by time. To make "while a large request is checked" a
 * condition rather than a race, a test can hold a check open: the template type is looked up when
 * a check starts and again when it ends, and a check whose type changed in between runs again
 * (as after a fleet change). So answering another placeholder count at the end keeps the check
 * running, turn after turn of the event loop, until the awaited event has happened; then the real
 * answer lets it finish against the real fleet. A check that did not yield would never see the
 * event: after a few passes the hold gives up and the assertions on order fail.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/index.js';
import type { Engine } from '../../src/core/engine.js';
import { api, contacts, startServer, testFleet, type Started } from './helpers.js';

const LARGE = 20_000;
/** Passes after which a held check is let go (a check that does not yield cannot be held open). */
const MAX_HELD_PASSES = 20;

/** Business 1 of the test fleet with a second type (11), its numbers paused: what is taken stays queued. */
function pausedEngine(): Engine {
  const fleet = testFleet();
  fleet.businesses[0]!.templateTypes.push({ id: 11, name: 'reminders', templateIds: [100] });
  const engine = createEngine(fleet);
  for (const n of engine.numbers()) if (n.phone.startsWith('5511')) engine.setNumberStatus(n.phone, 'paused');
  return engine;
}

const send = (typeId: number, list: unknown[], campaignId = 1) => ({ body: { business_id: 1, template_type_id: typeId, campaign_id: campaignId, contacts: list } });

/**
 * Watches the template type lookups of the requests' checks (one request per type at a time) and
 * holds a check open while `hold(typeId)` is true: see the file's comment.
 */
function watchChecks(engine: Engine, hooks: { onStart?: (typeId: number) => void; hold?: (typeId: number) => boolean }) {
  const real = engine.templateType.bind(engine);
  const submit = engine.submit.bind(engine);
  const lookups = new Map<number, number>();
  let submitting = false;
  const events: string[] = [];
  (engine as { templateType: Engine['templateType'] }).templateType = (businessId, typeId) => {
    const info = real(businessId, typeId);
    if (submitting || info === undefined) return info;
    const n = (lookups.get(typeId) ?? 0) + 1;
    lookups.set(typeId, n);
    if (n === 1) {
      events.push(`check ${typeId} started`);
      hooks.onStart?.(typeId);
      return info;
    }
    if (n <= MAX_HELD_PASSES && hooks.hold?.(typeId) === true) return { ...info, placeholders: info.placeholders + n };
    return info;
  };
  (engine as { submit: Engine['submit'] }).submit = (submission) => {
    submitting = true;
    let ticket: ReturnType<Engine['submit']>;
    try {
      ticket = submit(submission);
    } finally {
      submitting = false;
    }
    events.push(`submitted ${submission.typeId}`);
    const s = engine.stats();
    maxWaiting = Math.max(maxWaiting, s.queued + s.waitingRetry + s.inFlight);
    return ticket;
  };
  let maxWaiting = 0;
  return { events, maxWaiting: () => maxWaiting, started: (typeId: number) => (lookups.get(typeId) ?? 0) > 0 };
}

describe('large send requests', () => {
  let s: Started | undefined;
  afterEach(async () => {
    await s?.server.close();
    s = undefined;
  });

  it('takes a 20,000-contact request whole, with the right counts', async () => {
    const engine = pausedEngine();
    s = await startServer({ engine, limits: { maxContacts: LARGE } });
    const list: Record<string, unknown>[] = contacts(LARGE);
    // Field rules still reject one by one: two duplicates of earlier phones, one invalid phone.
    list[LARGE - 1] = { ...list[LARGE - 1], phone_number: list[0]!['phone_number'] };
    list[LARGE - 2] = { ...list[LARGE - 2], phone_number: list[1]!['phone_number'] };
    list[LARGE - 3] = { ...list[LARGE - 3], phone_number: '123' };
    const res = await api(s.url, '/messenger/messages/', send(10, list));
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: LARGE - 3, rejected: 3, rejection_counts: { duplicated: 2, invalid_phone: 1 } });
    expect(res.json.rejections.map((r: { index: number }) => r.index)).toEqual([LARGE - 3, LARGE - 2, LARGE - 1]);
    expect(res.json.rejections[2]).toMatchObject({ reason: 'duplicated', duplicate_of: 0 });
    expect(engine.stats()).toMatchObject({ submitted: LARGE - 3, queued: LARGE - 3 });
  });

  it('rejects alone the contacts of a large request that break the schema (one at the end), and refuses whole a body that breaks it outside its contacts', async () => {
    const engine = pausedEngine();
    s = await startServer({ engine, limits: { maxContacts: LARGE } });
    const before = engine.stats();
    const list: Record<string, unknown>[] = contacts(LARGE);
    list[3] = { ...list[3], phone_number: 5511980000003 };
    list[LARGE - 1] = { ...list[LARGE - 1], nickname: 'x' };
    const res = await api(s.url, '/messenger/messages/', send(10, list));
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ accepted: LARGE - 2, rejected: 2, rejection_counts: { invalid_phone: 1, invalid_data: 1 } });
    expect(res.json.rejections.map((r: { problems: { path: string }[] }) => r.problems[0]!.path)).toEqual(['$.contacts[3].phone_number', `$.contacts[${LARGE - 1}].nickname`]);
    const refused = await api(s.url, '/messenger/messages/', { body: { ...send(10, contacts(LARGE, LARGE), 2).body, priority: 'high' } });
    expect(refused.status).toBe(422);
    expect(refused.json.error.problems.map((p: { path: string }) => p.path)).toEqual(['$.priority']);
    expect(engine.stats().submitted - before.submitted).toBe(LARGE - 2);
    const afterSend = engine.stats();

    // A large body that is not JSON is refused as before (400), with JSON.parse's own message.
    const text = JSON.stringify(send(10, contacts(LARGE)).body);
    const broken = await api(s.url, '/messenger/messages/', { raw: `${text.slice(0, -2)},]}`, headers: { 'content-type': 'application/json' } });
    expect(broken.status).toBe(400);
    expect(broken.json.error.code).toBe('invalid_json');
    let message = '';
    try {
      JSON.parse(`${text.slice(0, -2)},]}`);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(broken.json.error.problems[0].actual).toBe(message.slice(0, broken.json.error.problems[0].actual.length));
    expect(engine.stats()).toEqual(afterSend);
  });

  it('answers GET /messenger/businesses/ while a large request is being checked', async () => {
    const engine = pausedEngine();
    let answered = false;
    const watch = watchChecks(engine, {
      onStart: () => {
        void api(s!.url, '/messenger/businesses/').then(
          (r) => {
            watch.events.push(`GET answered ${r.status}`);
            answered = true;
          },
          () => watch.events.push('GET failed'),
        );
      },
      hold: () => !answered,
    });
    s = await startServer({ engine, limits: { maxContacts: LARGE } });
    const res = await api(s.url, '/messenger/messages/', send(10, contacts(LARGE)));
    expect(res.status).toBe(202);
    expect(res.json.accepted).toBe(LARGE);
    expect(watch.events).toEqual(['check 10 started', 'GET answered 200', 'submitted 10']);
  });

  it('checks two large requests one after the other, first come first served, and keeps the intake bound: one 202, one 429', async () => {
    const engine = pausedEngine();
    // The first check is held until the second has started, or for MAX_HELD_PASSES passes: the
    // second cannot start before the first is checked (one large request decoded and checked at a time).
    const watch = watchChecks(engine, { hold: (typeId) => !watch.started(typeId === 10 ? 11 : 10) });
    s = await startServer({ engine, limits: { maxContacts: LARGE }, maxQueuedContacts: 30_000 });
    const [a, b] = await Promise.all([api(s.url, '/messenger/messages/', send(10, contacts(LARGE, 0), 1)), api(s.url, '/messenger/messages/', send(11, contacts(LARGE, LARGE), 2))]);
    // Whichever body arrived first was checked to its end (and taken) before the other's check started.
    const firstType = watch.events[0] === 'check 10 started' ? 10 : 11;
    const secondType = firstType === 10 ? 11 : 10;
    expect(watch.events).toEqual([`check ${firstType} started`, `submitted ${firstType}`, `check ${secondType} started`]);
    const [taken, refused] = firstType === 10 ? [a, b] : [b, a];
    expect([taken.status, refused.status]).toEqual([202, 429]);
    expect(refused.json.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(engine.stats()).toMatchObject({ submitted: LARGE, queued: LARGE });
    expect(watch.maxWaiting()).toBeLessThanOrEqual(30_000);
  });

  it('never takes a phone twice in a campaign from two large requests posted together with overlapping phones', async () => {
    const engine = pausedEngine();
    const phones: string[] = [];
    const submit = engine.submit.bind(engine);
    (engine as { submit: Engine['submit'] }).submit = (submission) => {
      for (const c of submission.contacts) phones.push(c.phone);
      return submit(submission);
    };
    s = await startServer({ engine, limits: { maxContacts: LARGE } });
    // Contacts 0..LARGE-1 and LARGE/2..LARGE*3/2-1 of campaign 7: half of each overlaps the other.
    const [a, b] = await Promise.all([api(s.url, '/messenger/messages/', send(10, contacts(LARGE, 0), 7)), api(s.url, '/messenger/messages/', send(10, contacts(LARGE, LARGE / 2), 7))]);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.json.accepted + b.json.accepted).toBe(LARGE * 1.5);
    expect(a.json.rejection_counts.duplicated + b.json.rejection_counts.duplicated).toBe(LARGE / 2);
    expect(engine.stats()).toMatchObject({ submitted: LARGE * 1.5, queued: LARGE * 1.5 });
    // Every phone submitted once.
    expect(phones).toHaveLength(LARGE * 1.5);
    expect(new Set(phones).size).toBe(LARGE * 1.5);
  });

  it('lets the next large request in after one refused while decoding (400) or checking (422)', async () => {
    const engine = pausedEngine();
    s = await startServer({ engine, limits: { maxContacts: LARGE } });
    const text = JSON.stringify(send(10, contacts(LARGE)).body);
    const [broken, refused, taken] = await Promise.all([
      api(s.url, '/messenger/messages/', { raw: `${text.slice(0, -2)},]}`, headers: { 'content-type': 'application/json' } }),
      // Checked to its end, then refused: the fleet has no template type 99.
      api(s.url, '/messenger/messages/', send(99, contacts(LARGE, 2 * LARGE), 3)),
      api(s.url, '/messenger/messages/', send(10, contacts(LARGE, LARGE), 4)),
    ]);
    expect([broken.status, refused.status, taken.status]).toEqual([400, 422, 202]);
    expect(taken.json.accepted).toBe(LARGE);
  });
});
