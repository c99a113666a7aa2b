/**
 * A damaged durable store is never started silently. A real server process (store-check-child.ts)
 * accepts 5,000 contacts in 10 requests with its channel holding every send, and is stopped with
 * SIGKILL or SIGTERM. Copies of its data directory are then damaged for real (the WAL's tail cut,
 * 16 bytes of it flipped, the WAL deleted, the database file emptied, a checkpointed page's text
 * overwritten) and a server is started on each:
 * - without `recover` it refuses to start, naming the file and what to do, and changes no file;
 * - with `recover` it starts, sends every contact that is intact (the channel's own log), and
 *   reports the rest: their count and the exact range of their ids, in its recovery report and
 *   in /metrics, and, from the intake journal, a FAILED notification (`lost in a damaged store`)
 *   to the webhook receiver (an independent record, in this process) for exactly every contact
 *   answered 202 that the channel's log does not have, counted in the campaign's statistics.
 * The intact copies (kill -9 and SIGTERM) start normally and lose nothing.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOST_REASON } from '../../src/server/recovered-contacts.js';
import { builtChild } from './built-child.js';
import { type Receiver, startReceiver, waitFor } from './helpers.js';
import { keyed, kill, logReader } from './send-log.js';

const KEY = 'store-check-test-key-0123456789ab';
const REQUESTS = 10;
const PER_REQUEST = 500;
const TOTAL = REQUESTS * PER_REQUEST;
const root = mkdtempSync(join(tmpdir(), 'sendpool-store-check-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Acme',
      companyId: 1,
      numbers: [{ phone: '5511990000001', throughputPerHour: 1_000_000, messagingLimit24h: 1_000_000, messagesPerSecond: 1000, status: 'active' }],
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};
const fleetFile = join(root, 'fleet.json');
const api = keyed(KEY);

interface Sent {
  ref: string;
  cid: number;
}
interface Recovery {
  lostCommits: number;
  lostContacts?: { count: number; firstId: number; lastId: number };
  lostRows: { table: string; rows: number | null; detail: string }[];
  problems: string[];
  keptAs: string[];
  reportFile: string;
}

interface Hsm {
  id: number;
  status: string;
  reason: string | null;
  campaign_id: number;
  data: { ref?: string } | null;
}
interface Recovered {
  journal?: { failed: number; firstId?: number; lastId?: number; submissions: number; endedUnknown: number; webhooks: boolean };
}

interface Life {
  child: ChildProcess;
  exited: Promise<number | null>;
  url?: string;
}

/** Starts a server on `dir` logging to `log`; resolves once it listens or has exited. */
async function start(dir: string, log: string, options: { hold?: boolean; recover?: boolean } = {}): Promise<Life> {
  for (const f of ['address', 'error', 'recovery']) rmSync(`${log}.${f}`, { force: true });
  // On the built package with plain node (test/server/built-child.ts): tsx's hooks cost each start about a second of CPU.
  const child = fork(builtChild(join(import.meta.dirname, 'store-check-child.ts')), [], {
    execArgv: [],
    env: { ...process.env, SENDPOOL_STORE_CHECK: JSON.stringify({ fleetFile, dataDir: dir, log, key: KEY, hold: options.hold === true, recover: options.recover === true }) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  await waitFor(() => code !== undefined || (existsSync(`${log}.address`) && readFileSync(`${log}.address`, 'utf8').length > 0), 'the child listening or gone');
  if (code !== undefined && !existsSync(`${log}.error`)) throw new Error(`the child exited ${code}: ${stderr}`);
  return { child, exited, ...(code === undefined ? { url: readFileSync(`${log}.address`, 'utf8') } : {}) };
}

/** SIGTERM, and wait for the graceful exit. */
async function terminate(life: Life): Promise<void> {
  life.child.kill('SIGTERM');
  expect(await life.exited).toBe(0);
}

function digest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir).filter((n) => !n.endsWith('-shm')))
    out[f] = createHash('sha256')
      .update(readFileSync(join(dir, f)))
      .digest('hex');
  return out;
}

/** The data directories as the two stops left them, and the channel's log of each. */
const bases: Record<'kill' | 'term', { dir: string; log: string }> = {
  kill: { dir: join(root, 'kill', 'data'), log: join(root, 'kill', 'sends.log') },
  term: { dir: join(root, 'term', 'data'), log: join(root, 'term', 'sends.log') },
};

/** Each base's webhook receiver (its HSM and campaign webhooks, configured before the first request). */
const receivers = {} as Record<'kill' | 'term', Receiver>;
afterAll(async () => {
  for (const r of Object.values(receivers)) await r.close();
});

beforeAll(async () => {
  writeFileSync(fleetFile, JSON.stringify(fleet));
  for (const how of ['kill', 'term'] as const) {
    const { dir, log } = bases[how];
    mkdirSync(join(root, how));
    const life = await start(dir, log, { hold: true });
    let secret = '';
    const receiver = (receivers[how] = await startReceiver(() => secret));
    expect((await api(life.url!, '/messenger/config/', { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` })).status).toBe(200);
    secret = ((await (await api(life.url!, '/messenger/config/secret/')).json()) as { webhook_secret: string }).webhook_secret;
    for (let r = 0; r < REQUESTS; r++) {
      const contacts = Array.from({ length: PER_REQUEST }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 1000 + i)}`, template_variables: ['x'], data: { ref: `r${r}c${i}` } }));
      const res = await api(life.url!, '/messenger/messages/', { business_id: 1, template_type_id: 10, campaign_id: 1, contacts });
      expect(res.status).toBe(202);
    }
    if (how === 'kill') await kill(life.child);
    else await terminate(life);
  }
}, 120_000);

/** Contact ids are given in request order from 1: the id of ref `r<r>c<i>`. */
function idOf(ref: string): number {
  const [, r, i] = /^r(\d+)c(\d+)$/.exec(ref)!;
  return Number(r) * PER_REQUEST + Number(i) + 1;
}

type Fault = (dir: string) => void;
const wal = (dir: string) => join(dir, 'sendpool.db-wal');
const db = (dir: string) => join(dir, 'sendpool.db');
const faults: Record<string, Fault> = {
  'the WAL cut by 30 %': (dir) => truncateSync(wal(dir), Math.floor(statSync(wal(dir)).size * 0.7)),
  '16 bytes of the WAL flipped': (dir) => {
    const bytes = readFileSync(wal(dir));
    const at = Math.floor(bytes.length / 2);
    for (let i = 0; i < 16; i++) bytes[at + i] = bytes[at + i]! ^ 0xff;
    writeFileSync(wal(dir), bytes);
  },
  'the WAL deleted': (dir) => rmSync(wal(dir)),
  'the database file emptied': (dir) => truncateSync(db(dir), 0),
  /** Text of a checkpointed page overwritten with bytes that are not UTF-8 (libsql panicked on reading them). */
  'a checkpointed page damaged': (dir) => {
    const bytes = readFileSync(db(dir));
    const at = bytes.indexOf(Buffer.from('"r5c100"'));
    expect(at).toBeGreaterThan(0);
    bytes.fill(0xff, at, at + 16);
    writeFileSync(db(dir), bytes);
  },
};

/** A copy of a base directory, damaged by `fault`, and the channel's log so far. */
function damaged(base: 'kill' | 'term', name: string, fault?: Fault): { dir: string; log: string } {
  const at = join(root, `${base}-${name.replace(/\W+/g, '-')}`);
  const dir = join(at, 'data');
  cpSync(bases[base].dir, dir, { recursive: true });
  const log = join(at, 'sends.log');
  if (existsSync(bases[base].log)) copyFileSync(bases[base].log, log);
  else writeFileSync(log, '');
  fault?.(dir);
  return { dir, log };
}

/** The FAILED notifications of contacts lost in a damaged store the receiver took, by contact ref. */
function lostNotified(receiver: Receiver): Map<string, Hsm> {
  const out = new Map<string, Hsm>();
  for (const n of receiver.all('/hsm') as Hsm[]) if (n.status === 'FAILED' && n.reason === LOST_REASON) out.set(n.data?.ref ?? '?', n);
  return out;
}

/** The receiver's records cleared (before a server on a copy starts: ids are told apart from other copies'). */
function clear(receiver: Receiver): void {
  receiver.events.clear();
  receiver.ids.clear();
}

/**
 * Waits until every accepted contact is in the channel's log or was reported FAILED as lost (the
 * receiver), and checks that the two are disjoint and make up every contact answered 202, that a
 * FAILED came once each, under the contact's id, and that the report counts them. `lost`: the
 * seal's count and id range, checked too when nothing was sent before the damage (the kill bases).
 */
async function settles(log: string, receiver: Receiver, recovery: Recovered | undefined, lost?: { count: number; firstId: number; lastId: number }): Promise<Set<string>> {
  const read = logReader<Sent>(log);
  const sentRefs = () => new Set(read().map((s) => s.ref));
  await waitFor(() => sentRefs().size + lostNotified(receiver).size >= TOTAL, 'every contact sent or reported FAILED');
  const sent = sentRefs();
  const failed = lostNotified(receiver);
  expect(sent.size + failed.size).toBe(TOTAL);
  for (const ref of failed.keys()) expect(sent.has(ref)).toBe(false);
  for (const [ref, n] of failed) {
    expect(n.id).toBe(idOf(ref));
    expect(n.campaign_id).toBe(1);
  }
  expect((receiver.all('/hsm') as Hsm[]).filter((n) => n.status === 'FAILED' && n.reason === LOST_REASON).length).toBe(failed.size);
  expect(recovery?.journal?.failed ?? 0).toBe(failed.size);
  if (failed.size > 0) {
    const ids = [...failed.keys()].map(idOf);
    expect(recovery?.journal).toMatchObject({ firstId: Math.min(...ids), lastId: Math.max(...ids), webhooks: true });
  }
  for (const s of read()) expect(s.cid).toBe(idOf(s.ref));
  // Every contact not sent has an id in the seal's range, and the range holds nothing else.
  const unsent: number[] = [];
  for (let r = 0; r < REQUESTS; r++) for (let i = 0; i < PER_REQUEST; i++) if (!sent.has(`r${r}c${i}`)) unsent.push(idOf(`r${r}c${i}`));
  if (lost) {
    expect(unsent.length).toBe(lost.count);
    expect(Math.min(...unsent)).toBe(lost.firstId);
    expect(Math.max(...unsent)).toBe(lost.lastId);
    expect(lost.lastId - lost.firstId + 1).toBe(lost.count);
  }
  return new Set(failed.keys());
}

type CampaignEntry = { campaign_id: number; datetime: string } & Record<string, number | string>;
/** The latest statistics batch of campaign 1 the receiver took. */
function lastBatch(receiver: Receiver): CampaignEntry | undefined {
  return (receiver.all('/campaign') as { campaigns: CampaignEntry[] }[])
    .flatMap((b) => b.campaigns)
    .filter((c) => c.campaign_id === 1)
    .sort((a, b) => a.datetime.localeCompare(b.datetime))
    .at(-1);
}

describe('a damaged durable store', () => {
  it.each([['kill'], ['term']] as const)('intact after %s: starts normally, reports nothing, loses nothing', { timeout: 60_000 }, async (base) => {
    const { dir, log } = damaged(base, 'intact');
    clear(receivers[base]);
    const life = await start(dir, log);
    try {
      expect(life.url).toBeDefined();
      expect(existsSync(`${log}.recovery`)).toBe(false);
      await settles(log, receivers[base], undefined);
    } finally {
      await kill(life.child);
    }
  });

  it.each([
    [
      'kill',
      'the WAL cut by 30 %',
      /sendpool\.db holds \d+ commits?, but .*sendpool\.db\.seal says \d+ were written: the last \d+ are missing \(\d+ contacts? answered 202 and lost, ids \d+ to 5000\); its WAL .*sendpool\.db-wal \(\d+ bytes\) was cut or damaged/,
    ],
    [
      'kill',
      '16 bytes of the WAL flipped',
      /sendpool\.db holds \d+ commits?, but .*sendpool\.db\.seal says \d+ were written: the last \d+ are missing \(\d+ contacts? answered 202 and lost, ids \d+ to 5000\)/,
    ],
    [
      'kill',
      'the WAL deleted',
      /but .*sendpool\.db\.seal says \d+ were written: the last \d+ are missing \(\d+ contacts? answered 202 and lost, ids \d+ to 5000\); its WAL .*sendpool\.db-wal is missing or empty/,
    ],
    [
      'kill',
      'the database file emptied',
      /sendpool\.db is empty \(0 bytes\), but .*sendpool\.db\.seal says \d+ were written: the last \d+ are missing \(5000 contacts answered 202 and lost, ids 1 to 5000\); the database file was deleted or emptied/,
    ],
    [
      'term',
      'the database file emptied',
      /sendpool\.db is empty \(0 bytes\), but .*sendpool\.db\.seal says \d+ were written: the last \d+ are missing \(5000 contacts answered 202 and lost, ids 1 to 5000\)/,
    ],
  ] as const)('after %s, %s: refused, then with recover sends what is intact and reports the rest', { timeout: 120_000 }, async (base, name, problem) => {
    const { dir, log } = damaged(base, name, faults[name]);
    const before = digest(dir);
    const refused = await start(dir, log);
    expect(await refused.exited).toBe(3);
    const error = readFileSync(`${log}.error`, 'utf8');
    expect(error).toContain(`the durable store ${db(dir)} cannot be trusted`);
    expect(error).toMatch(problem);
    expect(error).toContain('Restore the data directory from a backup');
    expect(error).toContain('--recover');
    // Refused: not a byte changed (the evidence stays for a closer look or a restore).
    expect(digest(dir)).toEqual(before);

    const receiver = receivers[base];
    clear(receiver);
    const life = await start(dir, log, { recover: true });
    try {
      expect(life.url).toBeDefined();
      const recovery = JSON.parse(readFileSync(`${log}.recovery`, 'utf8')) as Recovery & Recovered;
      expect(recovery.lostCommits).toBeGreaterThan(0);
      expect(recovery.lostContacts).toBeDefined();
      expect(recovery.lostContacts!.lastId).toBe(TOTAL);
      expect(recovery.problems.join('\n')).toMatch(problem);
      expect(JSON.parse(readFileSync(recovery.reportFile, 'utf8'))).toEqual(recovery);
      for (const kept of recovery.keptAs) expect(existsSync(kept)).toBe(true);
      // Nothing was sent before a kill (the channel held every send): what the seal counts lost is what is reported FAILED.
      const failed = await settles(log, receiver, recovery, base === 'kill' ? recovery.lostContacts : undefined);
      if (base === 'kill') expect(failed.size).toBe(recovery.lostContacts!.count);
      // Counted in the campaign's statistics (the lost requests admitted again): every contact in the
      // total, the lost ones failed (the SENT of the others arrive behind their notifications).
      await waitFor(() => lastBatch(receiver)?.['count_failed'] === failed.size, 'the campaign statistics counting the FAILED');
      if (base === 'kill') expect(lastBatch(receiver)).toMatchObject({ count_total: TOTAL, count_failed: failed.size });
      const metrics = await (await fetch(`${life.url!}/metrics`)).text();
      expect(metrics).toContain(`sendpool_store_recovery_lost{kind="failed_notified"} ${failed.size}`);
      expect(metrics).toContain(`sendpool_store_recovery_lost{kind="contacts"} ${recovery.lostContacts!.count}`);
      expect(metrics).toContain(`sendpool_store_recovery_lost{kind="commits"} ${recovery.lostCommits}`);
      // Ids given out before the loss are not given again: the next request starts after them.
      const res = await api(life.url!, '/messenger/messages/', {
        business_id: 1,
        template_type_id: 10,
        campaign_id: 2,
        contacts: [{ phone_number: '5521999990000', template_variables: ['x'], data: { ref: 'after' } }],
      });
      expect(res.status).toBe(202);
      await waitFor(() => logReader<Sent>(log)().some((s) => s.ref === 'after'), 'the new contact sent');
      expect(logReader<Sent>(log)().find((s) => s.ref === 'after')!.cid).toBe(TOTAL + 1);
    } finally {
      await terminate(life);
    }
    // Recovered, the store starts normally again.
    const again = await start(dir, log);
    expect(again.url).toBeDefined();
    expect(existsSync(`${log}.recovery`)).toBe(false);
    await kill(again.child);
  });

  it('after term, a checkpointed page damaged: refused (no abort), then with recover the damaged row is left out and reported', { timeout: 120_000 }, async () => {
    const name = 'a checkpointed page damaged';
    const { dir, log } = damaged('term', name, faults[name]);
    const before = digest(dir);
    const refused = await start(dir, log);
    // Refused with a message (exit 3), not aborted by a panic in libsql (exit 134).
    expect(await refused.exited).toBe(3);
    const error = readFileSync(`${log}.error`, 'utf8');
    expect(error).toContain(`the durable store ${db(dir)} cannot be trusted`);
    expect(error).toMatch(/table submissions: 1 value not UTF-8 \(damaged bytes\)/);
    expect(digest(dir)).toEqual(before);

    const receiver = receivers.term;
    clear(receiver);
    const life = await start(dir, log, { recover: true });
    try {
      const recovery = JSON.parse(readFileSync(`${log}.recovery`, 'utf8')) as Recovery & Recovered;
      expect(recovery.lostRows).toEqual([{ table: 'submissions', rows: 1, detail: expect.stringMatching(/^1 row with damaged text .* left out, key \d+$/) }]);
      expect(recovery.keptAs.some((f) => /sendpool\.db\.damaged-/.test(f))).toBe(true);
      // Every contact is sent (before SIGTERM, or now: intact) or, of the damaged request's not
      // sent, reported FAILED from the intake journal; nothing else is.
      const failed = await settles(log, receiver, recovery);
      expect(failed.size).toBeGreaterThan(0);
      for (const ref of failed) expect(ref.startsWith('r5c')).toBe(true);
      expect(recovery.journal).toMatchObject({ submissions: 1 });
      const metrics = await (await fetch(`${life.url!}/metrics`)).text();
      expect(metrics).toContain('sendpool_store_recovery_lost{kind="rows"} 1');
      expect(metrics).toContain(`sendpool_store_recovery_lost{kind="failed_notified"} ${failed.size}`);
    } finally {
      await terminate(life);
    }
  });
});
