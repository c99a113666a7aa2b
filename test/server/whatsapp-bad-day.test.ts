/**
 * The WhatsApp Cloud API on a bad day, over real HTTP: one campaign over 10 numbers in two WABAs
 * against the fake Graph API, while the platform, by its own rules, mixes everything it documents
 * going wrong:
 *
 * - the pair rate limit (131056 when a number messages a user again within 6 s: the fake keeps the
 *   pair clock of the messages it took);
 * - throttling (130429, some answers with `Retry-After`), bursts of 5xx without a code, and
 *   answers held past the channel's `requestTimeoutMs` (the platform took the message, the client
 *   never learns it);
 * - failures reported later by status webhook (131026, 131000, 131049, 131056, 130429, 131048,
 *   132015), delivered to the server's webhook path once the receiver has the send's SENT;
 * - a template paused (the platform refuses it from then on, and says so by webhook), a quality
 *   downgrade lowering a number's tier, one WABA restricted from business-initiated messaging
 *   (its sends refused with 368 until the restriction's expiration);
 * - the access token expiring (190, HTTP 401) until the operator, having read the server's log,
 *   gives the channel a new one (`setAccessToken`).
 *
 * Then, from the fake's own record of requests and the receiver's record of HSM notifications:
 * no number's windows keep the charge of a refused send, no pair is messaged within 6 s after a
 * 131056, every contact has the one outcome the error table gives it (none lost, none sent twice
 * beyond the same-id resend of an unknown outcome), the token failure is in the log within 10 s,
 * and the server goes idle.
 *
 * Size: `SENDPOOL_BAD_DAY_CONTACTS` contacts (default 3,000: about 35 s here). The 20,000
 * took 153 s of campaign on this loaded 2-core machine (5 checks passed, the same 2 expected
 * failures), too slow for the default suite. For investigation: `SENDPOOL_BAD_DAY_TIMEOUT_MS`
 * (the channel's timeout), `SENDPOOL_BAD_DAY_OFF=pause,tier,spam,restrict,token,late` (leave events
 * out; the checks of those events then fail), `SENDPOOL_BAD_DAY_DUMP=file` (every request, send,
 * late failure and HSM notification as JSON).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionForCode } from '../../src/core/channel-errors.js';
import { ManualClock } from '../../src/index.js';
import { createEngine } from '../../src/engine.js';
import { createWhatsAppChannel, type WhatsAppChannel } from '../../src/server/channels/whatsapp/index.js';
import type { SendOutcome } from '../../src/core/dispatch/types.js';
import type { SimulatedChannel } from '../../src/server/index.js';
import { api, contacts, startReceiver, startServer, waitFor, type Receiver, type Started } from './helpers.js';
import {
  ACCESS_TOKEN,
  APP_SECRET,
  VERIFY_TOKEN,
  WABA_ID,
  accountNotification,
  deliver,
  qualityNotification,
  startFakeGraph,
  statusNotification,
  templateNotification,
  type FakeGraph,
  type GraphNumber,
  type GraphRequest,
  type GraphTemplate,
} from './whatsapp-fake-graph.js';

const N = Number(process.env.SENDPOOL_BAD_DAY_CONTACTS ?? 3_000);
/** The seed of every choice the platform makes (which send is throttled, held, failed later, with which code). */
const SEED = 0x5eed_bad;
const WABA_A = WABA_ID;
const WABA_B = '102290129340777';
const NEW_TOKEN = 'EAAtest-renewed-access-token-9876543210';
/** The channel's timeout, and how long the platform holds the answers it holds (past the timeout, whatever undici's timer granularity). */
/**
 * The channel's `requestTimeoutMs`. Not 500 ms: with the server, the fake and the receiver in one
 * process on a loaded 2-core machine, 500 ms turned about 1,550 of 5,075 sends into client
 * timeouts (most while the campaign started, 1,323 of them before the request even reached the
 * fake), hiding most of the platform's answers (898 answers 190 read as 13). 2 s keeps the
 * timeouts the platform's (held answers) and the client's own few.
 */
const REQUEST_TIMEOUT_MS = Number(process.env.SENDPOOL_BAD_DAY_TIMEOUT_MS ?? 2_000);
const HOLD_MS = REQUEST_TIMEOUT_MS + 2_500;
const PAIR_INTERVAL_MS = 6_000;
const PER_HOUR = 10_000;
const HOUR = 3_600_000;
const MAX_RETRIES = 1;

/** FNV-1a over the text, mixed with the seed: a fixed choice in [0, 1) per text. */
function chance(text: string): number {
  let h = 0x811c9dc5 ^ SEED;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 13;
  h = Math.imul(h, 0x5bd1e995);
  h ^= h >>> 15;
  return (h >>> 0) / 2 ** 32;
}

const phones = Array.from({ length: 10 }, (_, i) => `55119900000${String(i + 1).padStart(2, '0')}`);
const numberIds = Array.from({ length: 10 }, (_, i) => `10654035224293${i}`);
const wabaOf = (i: number) => (i < 5 ? WABA_A : WABA_B);

/** Business 1, 10 numbers in two WABAs (five each), type 10 with each WABA's three templates. */
function badDayFleet() {
  const names = ['billing_a', 'billing_b', 'billing_c'];
  return {
    businesses: [
      {
        id: 1,
        name: 'Acme',
        companyId: 1,
        whatsapp: { wabaId: WABA_A },
        numbers: phones.map((phone, i) => ({
          phone,
          throughputPerHour: PER_HOUR,
          messagingLimit24h: 100_000,
          status: 'active',
          account: wabaOf(i),
          whatsapp: { phoneNumberId: numberIds[i], wabaId: wabaOf(i) },
        })),
        templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101, 102, 103, 104, 105] }],
      },
    ],
    templates: [WABA_A, WABA_B].flatMap((waba, w) =>
      names.map((name, k) => ({
        id: 100 + 3 * w + k,
        name: `${name}_${w}`,
        text: `${name}: Hi {{1}}, your bill is due.`,
        businessIds: [1],
        status: 'active',
        account: waba,
        whatsapp: { name, language: 'pt_BR', wabaId: waba },
      })),
    ),
  };
}

const graphNumbers: GraphNumber[] = phones.map((phone, i) => ({ phone, phoneNumberId: numberIds[i]!, wabaId: wabaOf(i) }));
const graphTemplates: GraphTemplate[] = [WABA_A, WABA_B].flatMap((wabaId) => ['billing_a', 'billing_b', 'billing_c'].map((name) => ({ name, language: 'pt_BR', placeholders: 1, wabaId })));

/** One send as the client saw it: what the server handed the channel and what the channel answered. */
interface ClientSend {
  /** The sending number's phone. */
  readonly number: string;
  /** The recipient. */
  readonly to: string;
  readonly id: string;
  readonly templateId: number;
  readonly startedAt: number;
  endedAt?: number;
  outcome?: SendOutcome;
}

/** One failure the test delivered later by status webhook: the message it names and the code. */
interface LateFailure {
  readonly send: ClientSend;
  readonly request: GraphRequest;
  readonly code: number;
  due: number;
  deliveredAt?: number;
}

/** What the client knew of a send: sent, refused by the platform (a Graph error), or unknown (no answer, a 5xx without a code). */
function knew(o: SendOutcome | undefined): 'sent' | 'refused' | 'unknown' {
  if (o === undefined) return 'unknown';
  if (o.status === 'sent') return 'sent';
  return o.status === 'failed' && o.refused === true ? 'refused' : 'unknown';
}

/** What the table says a failure reported later does to the contact, in this scenario (a follow-up bound far away). */
function goesAgain(code: number, retried: boolean): boolean {
  const kind = actionForCode(code).kind;
  if (kind === 'give-up') return false;
  if (kind === 'retry') return !retried && MAX_RETRIES > 0;
  return true;
}

describe(`a campaign of ${N} contacts over 10 numbers on a bad day of the Cloud API`, () => {
  const fleet = badDayFleet();
  let graph: FakeGraph;
  let channel: WhatsAppChannel;
  let s: Started;
  let hook: string;
  let receiver: Receiver;
  const logs: Record<string, unknown>[] = [];

  // The scenario's own record: every send as the client saw it, and every failure delivered later.
  const sends: ClientSend[] = [];
  const lates: LateFailure[] = [];
  const latesOf = new Map<string, LateFailure[]>();
  const events: Record<string, number> = {};
  let firstRequestAt = 0;
  let first190At: number | undefined;
  let tokenRenewedAt: number | undefined;
  let campaignMs = 0;
  let idleMs = 0;

  beforeAll(async () => {
    graph = await startFakeGraph({ numbers: graphNumbers, templates: graphTemplates });
    graph.pairIntervalMs = PAIR_INTERVAL_MS;
    channel = createWhatsAppChannel({
      fleet,
      accessToken: ACCESS_TOKEN,
      appSecret: APP_SECRET,
      verifyToken: VERIFY_TOKEN,
      graphUrl: graph.url,
      attendanceIdleMs: false,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    });
    // The client's side of each send, beside the fake's: in one process the fake cannot tell an
    // answer the client read from one written after the client's timer gave up.
    const send = channel.send.bind(channel);
    channel.send = async (m) => {
      const record: ClientSend = { number: m.phone, to: m.contact.phone, id: m.messageId, templateId: m.templateId, startedAt: Date.now() };
      sends.push(record);
      const outcome = await send(m);
      record.outcome = outcome;
      record.endedAt = Date.now();
      return outcome;
    };
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    s = await startServer({ fleet, channel: channel as unknown as SimulatedChannel, logger: { level: 'warn', stream } as never });
    hook = `${s.url}/whatsapp/webhook`;
    receiver = await startReceiver(() => s.server.sendpool.webhookSecret(1));
    expect((await api(s.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm` } })).status).toBe(200);

    // The platform's choices for each send, fixed by the seed, the message id and its try.
    let answers = 0;
    const tries = new Map<string, number>();
    graph.respond = (r) => {
      const i = answers++;
      const id = String(r.body.biz_opaque_callback_data);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      // A burst of 5xx without a code: 60 answers in every 1,500 (a gateway in front of the platform failing).
      if (i % 1_500 >= 700 && i % 1_500 < 760) return { kind: 'raw', status: i % 2 === 0 ? 503 : 502, body: '<html><body><h1>503 Service Unavailable</h1></body></html>' };
      const x = chance(`answer ${id} ${n}`);
      if (x < 0.0015) return { kind: 'error', code: 130429, details: 'Rate limit hit', headers: { 'retry-after': String(1 + (i % 2)) } };
      if (x < 0.003) return { kind: 'error', code: 130429, details: 'Rate limit hit' };
      if (x < 0.007) return { kind: 'accept', delayMs: HOLD_MS };
      return { kind: 'accept' };
    };

    const all = contacts(N);
    const started = Date.now();
    for (let from = 0; from < N; from += 10_000) {
      const answer = await api(s.url, '/messenger/messages/', {
        body: { business_id: 1, template_type_id: 10, campaign_id: 77, max_retries: MAX_RETRIES, retry_interval: 0, contacts: all.slice(from, from + 10_000) },
      });
      expect(answer.status).toBe(202);
      expect(answer.json.accepted).toBe(Math.min(10_000, N - from));
    }

    await runScenario();
    campaignMs = Date.now() - started;
    const idleFrom = Date.now();
    await waitFor(() => s.server.sendpool.idle(), 'the server idle after the bad day');
    idleMs = Date.now() - idleFrom;
    firstRequestAt = graph.requests[0]?.at ?? 0;

    const platform: Record<string, number> = {};
    for (const r of graph.requests) platform[r.answer ?? 'unanswered'] = (platform[r.answer ?? 'unanswered'] ?? 0) + 1;
    const client: Record<string, number> = {};
    for (const x of sends) {
      const key = x.outcome?.status === 'failed' ? `${knew(x.outcome)} ${x.outcome.code ?? x.outcome.reason?.slice(0, 40)}` : (x.outcome?.status ?? 'unanswered');
      client[key] = (client[key] ?? 0) + 1;
    }
    const latesBy: Record<string, number> = {};
    for (const l of lates) latesBy[l.code] = (latesBy[l.code] ?? 0) + 1;
    if (process.env.SENDPOOL_BAD_DAY_DUMP) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        process.env.SENDPOOL_BAD_DAY_DUMP,
        JSON.stringify({
          requests: graph.requests.map((r) => ({
            n: r.phoneNumberId,
            to: r.body.to,
            id: r.body.biz_opaque_callback_data,
            t: r.body.template.name,
            auth: r.headers.authorization,
            at: r.at,
            answer: r.answer,
            answeredAt: r.answeredAt,
            wamid: r.wamid,
          })),
          sends,
          lates: lates.map((l) => ({ id: l.send.id, to: l.send.to, code: l.code, deliveredAt: l.deliveredAt })),
          hsm: receiver.all('/hsm').map((e) => ({ to: e.to, status: e.status, is_retry: e.is_retry, reason: e.reason, datetime: e.datetime, message: e.message })),
          logs,
          first190At,
          tokenRenewedAt,
          windows: phones.map((p) => s.server.sendpool.engine.numberWindows(p)),
          templates: s.server.sendpool.engine.templates(),
        }),
      );
    }
    console.info(
      JSON.stringify({ contacts: N, requests: graph.requests.length, platform, client, lateFailures: latesBy, events, campaignMs, idleMs, dispatch: s.server.sendpool.stats().dispatch }, null, 1),
    );
  }, 900_000);

  afterAll(async () => {
    await s?.server.close();
    await receiver?.close();
    await graph?.close();
  });

  /** The HSM notifications of each contact (by phone), in the order they reached the receiver. */
  function hsmByPhone(): Map<string, any[]> {
    const by = new Map<string, any[]>();
    for (const e of receiver.all('/hsm')) by.set(e.to, [...(by.get(e.to) ?? []), e]);
    return by;
  }

  /**
   * Drives the bad day until every event has happened, every failure chosen to come later was
   * delivered, and nothing is left to send.
   */
  async function runScenario(): Promise<void> {
    const firstStart = Date.now();
    let sendCursor = 0;
    let requestCursor = 0;
    const open = new Set<ClientSend>();
    /** The platform's taken requests by message id, in arrival order. */
    const takenById = new Map<string, GraphRequest[]>();
    const unanswered = new Set<GraphRequest>();
    const retried = new Set<string>();
    const pendingOf = new Set<string>();
    let hsmCursor = 0;
    const sentCount = new Map<string, number>();
    const againCount = new Map<string, number>();
    let sentSends = 0;
    const off = (process.env.SENDPOOL_BAD_DAY_OFF ?? '').split(',');
    const stage = {
      paused: off.includes('pause'),
      downgraded: off.includes('tier'),
      spam: off.includes('spam'),
      restricted: off.includes('restrict'),
      expired: off.includes('token'),
      renewed: off.includes('token'),
    };
    const graphNumber = (phone: string) => graphNumbers.find((n) => n.phone === phone)!;
    /** The platform's request that took the client's send: the last taken one of its id that arrived before the answer. */
    const takenOf = (x: ClientSend) => (takenById.get(x.id) ?? []).filter((r) => r.at <= x.endedAt! && r.phoneNumberId === graphNumber(x.number).phoneNumberId).at(-1);
    const schedule = (x: ClientSend, code: number, due: number) => {
      const request = takenOf(x);
      if (request === undefined) return;
      const late: LateFailure = { send: x, request, code, due };
      lates.push(late);
      latesOf.set(x.to, [...(latesOf.get(x.to) ?? []), late]);
      pendingOf.add(x.to);
    };
    const latest = new Map<string, ClientSend>();

    /** A send the client saw accepted: perhaps failed later, by the seed. */
    const consider = (x: ClientSend) => {
      latest.set(x.to, x);
      if (pendingOf.has(x.to) || (latesOf.get(x.to)?.length ?? 0) >= 3) return;
      if (stage.paused && !stage.spam && sentSends >= N * 0.5 && x.number === phones[3]) {
        stage.spam = true;
        events['131048 later at'] = sentSends;
        return schedule(x, 131048, x.endedAt! + 1_000);
      }
      if (off.includes('late') || chance(`late ${x.id}`) >= 0.02) return;
      const y = chance(`code ${x.id}`);
      const code = retried.has(x.to) ? (y < 0.5 ? 131049 : 131000) : ([131026, 131000, 131056, 130429] as const)[Math.floor(y * 4)]!;
      schedule(x, code, x.endedAt! + 1_000);
    };

    const deliverLate = async (l: LateFailure) => {
      const r = l.request;
      const payload = statusNotification(graphNumber(l.send.number), { wamid: r.wamid!, status: 'failed', recipient: l.send.to, opaque: l.send.id, errorCode: l.code });
      const answer = await deliver(hook, payload);
      expect(answer.status).toBe(200);
      l.deliveredAt = Date.now();
      pendingOf.delete(l.send.to);
      if (goesAgain(l.code, retried.has(l.send.to))) againCount.set(l.send.to, (againCount.get(l.send.to) ?? 0) + 1);
      if (actionForCode(l.code).kind === 'retry') retried.add(l.send.to);
    };

    for (;;) {
      // What the platform took.
      const requests = graph.requests;
      for (; requestCursor < requests.length; requestCursor++) unanswered.add(requests[requestCursor]!);
      for (const r of unanswered) {
        if (r.answer === undefined) continue;
        unanswered.delete(r);
        if (r.wamid !== undefined) takenById.set(r.body.biz_opaque_callback_data, [...(takenById.get(r.body.biz_opaque_callback_data) ?? []), r]);
        if (r.answer === 'error 190' && first190At === undefined) first190At = r.answeredAt;
      }
      // What the client heard.
      for (; sendCursor < sends.length; sendCursor++) open.add(sends[sendCursor]!);
      for (const x of open) {
        if (x.outcome === undefined) continue;
        open.delete(x);
        if (x.outcome.status === 'sent') {
          sentSends++;
          consider(x);
        }
      }
      // The receiver's SENT per contact.
      const hsm = receiver.all('/hsm');
      for (; hsmCursor < hsm.length; hsmCursor++) {
        const e = hsm[hsmCursor];
        if (e.status === 'SENT') sentCount.set(e.to, (sentCount.get(e.to) ?? 0) + 1);
      }

      // The day's events, at fixed points of the campaign.
      const now = Date.now();
      if (!stage.paused && sentSends >= N * 0.25) {
        stage.paused = true;
        events['template paused at'] = sentSends;
        // The platform pauses billing_a of WABA A, and says so; the messages of it it held for
        // early feedback in the last seconds are dropped (132015, later).
        graph.pauseTemplate('billing_a', 'pt_BR', WABA_A);
        const answer = await deliver(
          hook,
          templateNotification({ name: 'billing_a', language: 'pt_BR', event: 'PAUSED', title: 'FIRST_PAUSE', description: 'Your WhatsApp message template has been paused for 3 hours.' }),
        );
        expect(answer.status).toBe(200);
        const held = sends.filter((x) => x.outcome?.status === 'sent' && x.templateId === 100 && now - x.endedAt! < 3_000 && latest.get(x.to) === x && !pendingOf.has(x.to));
        for (const x of held.slice(-15)) schedule(x, 132015, now + 500);
      }
      if (!stage.downgraded && sentSends >= N * 0.4) {
        stage.downgraded = true;
        events['tier lowered at'] = sentSends;
        const answer = await deliver(hook, qualityNotification({ display: phones[1]!, event: 'DOWNGRADE', oldLimit: 'TIER_100K', currentLimit: 'TIER_250' }));
        expect(answer.status).toBe(200);
      }
      if (!stage.restricted && sentSends >= N * 0.55) {
        stage.restricted = true;
        events['WABA B restricted at'] = sentSends;
        const expiration = Math.ceil(now / 1000) + 8;
        graph.restrictAccount(WABA_B, expiration * 1000);
        const answer = await deliver(hook, accountNotification({ event: 'ACCOUNT_RESTRICTION', wabaId: WABA_B, restrictions: [{ type: 'RESTRICTED_BIZ_INITIATED_MESSAGING', expiration }] }));
        expect(answer.status).toBe(200);
      }
      if (!stage.expired && sentSends >= N * 0.7) {
        stage.expired = true;
        events['token expired at'] = sentSends;
        graph.expireToken(ACCESS_TOKEN);
      }
      // The operator reads the log and renews the token (at least 2 s after the first refusal; at
      // most 12 s, logged or not: the check below says whether the log told them).
      if (stage.expired && !stage.renewed && first190At !== undefined) {
        const logged = logs.some((l) => l['level'] === 50 && l['code'] === 190);
        if ((logged && now - first190At >= 2_000) || now - first190At >= 12_000) {
          stage.renewed = true;
          graph.acceptToken(NEW_TOKEN);
          channel.setAccessToken(NEW_TOKEN);
          tokenRenewedAt = Date.now();
        }
      }

      // Failures reported later, once due and once the receiver has the SENT they follow.
      const due = lates.filter((l) => l.deliveredAt === undefined && l.due <= now && ((sentCount.get(l.send.to) ?? 0) >= 1 + (againCount.get(l.send.to) ?? 0) || now - l.due > 30_000));
      for (const l of due) await deliverLate(l);

      const allHappened = stage.paused && stage.downgraded && stage.restricted && stage.renewed;
      if (allHappened && pendingOf.size === 0 && s.server.sendpool.idle()) return;
      if (now - firstStart > 600_000) throw new Error(`the bad day did not end: ${JSON.stringify({ stage, sentSends, pending: pendingOf.size, stats: s.server.sendpool.stats().dispatch })}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('keeps the charge of no refused send in any number’s windows (an unknown outcome keeps its own)', () => {
    const rows = phones.map((phone, i) => {
      const mine = sends.filter((x) => x.number === phone);
      // What the client knew: a send accepted, or one whose outcome it never learned (no answer in
      // time, a 5xx without a code), keeps its charge; a Graph error it read gives it back.
      const sent = mine.filter((x) => knew(x.outcome) === 'sent').length;
      const unknown = mine.filter((x) => knew(x.outcome) === 'unknown').length;
      const refused = mine.filter((x) => knew(x.outcome) === 'refused').length;
      // What the platform took from the number: between the client's acceptances and those plus its unknowns.
      const taken = graph.requests.filter((r) => r.phoneNumberId === numberIds[i] && r.wamid !== undefined).length;
      const windows = s.server.sendpool.engine.numberWindows(phone)!;
      const leak = Math.ceil((PER_HOUR * (Date.now() - firstRequestAt)) / HOUR) + 1;
      return { phone, sent, unknown, refused, taken, day: windows.day.used, hour: windows.hour.used, hourFloor: Math.max(0, sent + unknown - leak) };
    });
    expect(rows.reduce((n, r) => n + r.refused, 0)).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.taken, JSON.stringify(row)).toBeGreaterThanOrEqual(row.sent);
      expect(row.taken, JSON.stringify(row)).toBeLessThanOrEqual(row.sent + row.unknown);
      expect(row.day, JSON.stringify(row)).toBe(row.sent + row.unknown);
      // The hour window is a token bucket: it drains while the campaign runs. A refusal gives back
      // only the weight its message has not drained yet (memory-store.ts, refund): at 10,000 an
      // hour a message weighs 360 ms, so a refusal read later than that (a loaded machine) gives
      // the hour window nothing back. Its bound is every charge made; the exact account of
      // refusals given back is the day window's, above.
      expect(row.hour, JSON.stringify(row)).toBeLessThanOrEqual(row.sent + row.unknown + row.refused);
      expect(row.hour, JSON.stringify(row)).toBeGreaterThanOrEqual(row.hourFloor);
    }
  });

  it('messages no user from a number within 6 s after the client read the platform’s 131056 on that pair', () => {
    const refusals = sends.filter((x) => x.outcome?.status === 'failed' && x.outcome.code === 131056);
    expect(refusals.length).toBeGreaterThan(0);
    const byPair = new Map<string, GraphRequest[]>();
    for (const r of graph.requests) byPair.set(`${r.phoneNumberId}/${r.body.to}`, [...(byPair.get(`${r.phoneNumberId}/${r.body.to}`) ?? []), r]);
    const early = refusals.flatMap((x) => {
      const pair = `${graphNumbers.find((n) => n.phone === x.number)!.phoneNumberId}/${x.to}`;
      return (byPair.get(pair) ?? [])
        .filter((r) => r.at > x.endedAt! && r.at - x.endedAt! < PAIR_INTERVAL_MS)
        .map((r) => ({ pair, refusedId: x.id, readAt: x.endedAt, againAfterMs: r.at - x.endedAt!, againId: r.body.biz_opaque_callback_data }));
    });
    expect(early).toEqual([]);
  });

  it('gives every contact the one outcome the error table says, none lost', () => {
    const hsm = hsmByPhone();
    expect(hsm.size).toBe(N);
    expect(receiver.badSignatures).toBe(0);
    const wrong: unknown[] = [];
    for (const phone of contacts(N).map((c) => c.phone_number)) {
      // What the table says: ENQUEUED, SENT, and for each failure delivered later, FAILED with its
      // code and a SENT when it goes again (a retry's SENT is_retry, and so is every one after it).
      const expected = ['ENQUEUED', 'SENT'];
      let retried = false;
      for (const l of latesOf.get(phone) ?? []) {
        expected.push(`FAILED ${l.code}`);
        const goes = goesAgain(l.code, retried);
        if (actionForCode(l.code).kind === 'retry') retried = true;
        if (!goes) break;
        expected.push(retried ? 'SENT retry' : 'SENT');
      }
      const actual = (hsm.get(phone) ?? [])
        .filter((e) => e.status !== 'SERVER' && e.status !== 'DEVICE' && e.status !== 'READ')
        .map((e) => (e.status === 'FAILED' ? `FAILED ${/, (\d+),/.exec(String(e.reason))?.[1] ?? e.reason}` : e.status === 'SENT' && e.is_retry ? 'SENT retry' : e.status));
      if (JSON.stringify(actual) !== JSON.stringify(expected)) wrong.push({ phone, expected, actual });
    }
    expect({ contactsWrong: wrong.length, first: wrong.slice(0, 5) }).toEqual({ contactsWrong: 0, first: [] });
  });

  /**
   * A send whose answer never came (a timeout) goes again under the same message id; when the
   * platform took the first try, the repeat meets the pair rate limit (131056) on the same number.
   * The contact's later tries keep that id (the engine remembers an unknown outcome was seen), so
   * the platform never takes the contact under a second id for it. (Before: 34 contacts of 3,000
   * went out under two ids at a 2 s timeout, 89 to 99 at 500 ms.)
   */
  it('has the platform take each contact under one message id per send the table asked for, the same id again only after an unknown outcome', () => {
    const takenOf = new Map<string, GraphRequest[]>();
    for (const r of graph.requests) if (r.wamid !== undefined) takenOf.set(r.body.to, [...(takenOf.get(r.body.to) ?? []), r]);
    const unknownOf = new Map<string, number>();
    for (const x of sends) if (knew(x.outcome) === 'unknown') unknownOf.set(x.id, (unknownOf.get(x.id) ?? 0) + 1);
    const wrong: unknown[] = [];
    for (const phone of contacts(N).map((c) => c.phone_number)) {
      let retried = false;
      let again = 0;
      for (const l of latesOf.get(phone) ?? []) {
        const goes = goesAgain(l.code, retried);
        if (actionForCode(l.code).kind === 'retry') retried = true;
        if (!goes) break;
        again++;
      }
      const taken = takenOf.get(phone) ?? [];
      const ids = [...new Set(taken.map((r) => r.body.biz_opaque_callback_data as string))];
      // An id taken more often than its tries with an unknown outcome allow.
      const twice = ids.filter((id) => taken.filter((r) => r.body.biz_opaque_callback_data === id).length > 1 + (unknownOf.get(id) ?? 0));
      if (ids.length !== 1 + again || twice.length > 0) {
        const mine = sends
          .filter((x) => x.to === phone)
          .map((x) => `${x.id}@${x.number.slice(-2)} ${x.outcome?.status === 'failed' ? knew(x.outcome) + ' ' + (x.outcome.code ?? x.outcome.reason) : x.outcome?.status}`);
        wrong.push({ phone, takenIds: ids, allowedIds: 1 + again, twice, client: mine });
      }
    }
    expect({ contactsWrong: wrong.length, first: wrong.slice(0, 5) }).toEqual({ contactsWrong: 0, first: [] });
  });

  it('logs the expired token as an error naming the number and 190 within 10 s of the first refusal', () => {
    expect(first190At).toBeDefined();
    expect(tokenRenewedAt).toBeDefined();
    const line = logs.find((l) => l['level'] === 50 && l['code'] === 190);
    expect(line, 'an error line with code 190').toBeDefined();
    expect(String(line!['msg'])).toContain(String(line!['number']));
    expect(Number(line!['time']) - first190At!).toBeLessThanOrEqual(10_000);
    // Sends the server starts after the renewal carry the new token, and the platform takes them.
    const after = sends.filter((x) => x.startedAt > tokenRenewedAt!);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((x) => x.outcome?.status === 'failed' && x.outcome.code === 190).map((x) => x.id)).toEqual([]);
  });

  it('leaves nothing stuck: idle, every request well formed, the day’s events applied', () => {
    expect(events['131048 later at']).toBeDefined();
    expect(s.server.sendpool.idle()).toBe(true);
    expect(graph.requests.filter((r) => r.problems.length > 0).map((r) => r.problems)).toEqual([]);
    const engine = s.server.sendpool.engine;
    expect(engine.templates().find((t) => t.id === 100)!.status).toBe('paused');
    expect(engine.templates().filter((t) => t.id !== 100 && t.status !== 'active')).toEqual([]);
    expect(engine.numbers().find((n) => n.phone === phones[1])!.messagingLimit24h).toBe(250);
    const stats = s.server.sendpool.stats().dispatch;
    expect(stats.queued + stats.inFlight + stats.waitingRetry).toBe(0);
  });
});

/**
 * A number taken out for an hour by 131048 stays out for the hour when a later, shorter rest of the
 * same number comes (130429's 1 s, a credentials error's 10 s, from a send already in flight): a
 * failure never shortens a pause (in the scenario the number came back within seconds before).
 */
describe('a number out for an hour (131048) and a throttled send of it answered after', () => {
  it('stays out for the hour', () => {
    const clock = new ManualClock(1_000_000);
    const engine = createEngine(badDayFleet(), { clock });
    engine.submit({ businessId: 1, typeId: 10, contacts: Array.from({ length: 20 }, (_, i) => ({ phone: `55119800${String(i).padStart(5, '0')}`, variables: ['x'] })) });
    const [spam, throttled] = engine.poll({ limit: 20 }).filter((m) => m.phone === phones[0]);
    expect(throttled).toBeDefined();
    engine.report(spam!.messageId, { status: 'failed', code: 131048, refused: true });
    expect(engine.numbers().find((n) => n.phone === phones[0])).toMatchObject({ status: 'paused', pausedUntil: 1_000_000 + HOUR });
    // A send of the same number still at the platform comes back throttled (1 s rest).
    engine.report(throttled!.messageId, { status: 'failed', code: 130429, refused: true, action: { kind: 'requeue', restMs: 1_000 } });
    expect(engine.numbers().find((n) => n.phone === phones[0])!.pausedUntil).toBe(1_000_000 + HOUR);
  });
});
