/** The server's database: what is written comes back, whole, after a close or a SIGKILL mid-write. */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock, applyChanges, createEngine, emptyRows, snapshotFromRows, type Engine } from '../../src/index.js';
import type { ContactRow } from '../../src/events/campaign-stats.js';
import { isStateFileError } from '../../src/runtime/state-file-error.js';
import { openSqliteStorage } from '../../src/server/index.js';
import { specFleet } from '../core/arbitraries.js';

const root = mkdtempSync(join(tmpdir(), 'sendpool-storage-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `db${++dirs}`);

const contact = (i: number) => ({ phone: `55119${String(80000000 + i)}`, variables: [`Name${i}`, `R$ ${i}`], data: { ref: `c${i}` } });

describe('SQLite storage', () => {
  it('keeps the engine rows step by step; a restart from them equals the engine it left', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    expect(storage.load()).toBeUndefined();
    const clock = new ManualClock(0);
    const engine: Engine = createEngine(specFleet(), { clock, trackChanges: true });
    const rows = emptyRows();
    const step = () => {
      engine.takeOutcomes();
      const changes = engine.takeChanges();
      applyChanges(rows, changes);
      storage.write({ engine: changes });
    };
    step();
    engine.submit({ businessId: 1, typeId: 10, campaignId: 1, maxRetries: 2, retryInterval: 60_000, contacts: Array.from({ length: 50 }, (_, i) => contact(i)) });
    engine.submit({ businessId: 1, typeId: 10, campaignId: 2, deadline: 10 * 60_000, contacts: Array.from({ length: 30 }, (_, i) => contact(100 + i)) });
    step();
    const handed = engine.poll({ limit: 40 });
    step();
    handed.forEach((m, i) => engine.report(m.messageId, i % 4 === 0 ? { status: 'failed', code: 131000 } : { status: 'sent' }));
    engine.setNumberStatus('5511990000002', 'paused', { until: 3_600_000 });
    step();
    clock.advance(5 * 60_000);
    engine.poll({ limit: 10 });
    step();
    storage.close();

    const reopened = await openSqliteStorage(dir);
    const loaded = reopened.load()!;
    expect(loaded.rows).toEqual(rows);
    const restarted = createEngine(specFleet(), { clock, snapshot: JSON.parse(JSON.stringify(snapshotFromRows(loaded.rows, clock.now()))) });
    const { inFlight, queued, ...rest } = engine.stats();
    expect(restarted.stats()).toEqual({ ...rest, inFlight: 0, queued: queued + inFlight });
    expect(restarted.numbers().map((n) => [n.phone, n.status, n.available])).toEqual(engine.numbers().map((n) => [n.phone, n.status, n.available]));
    expect(restarted.submissionStatus('s1')).toMatchObject({ sent: engine.submissionStatus('s1').sent, waitingRetry: engine.submissionStatus('s1').waitingRetry });
    reopened.close();
  });

  it("keeps each portfolio's recipients: a restart from the rows counts them against the limit", async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    const clock = new ManualClock(0);
    const fleet = { ...specFleet(), portfolios: [{ id: '1029384756', messagingLimit24h: 3 }] };
    fleet.businesses = fleet.businesses.map((b) => ({ ...b, portfolioId: '1029384756' }));
    const engine = createEngine(fleet, { clock, trackChanges: true });
    storage.write({ engine: engine.takeChanges({ full: true }) });
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1), contact(2), contact(3), contact(4)] });
    for (const m of engine.poll()) engine.report(m.messageId, { status: 'sent' });
    engine.takeOutcomes();
    storage.write({ engine: engine.takeChanges() });
    storage.close();

    const reopened = await openSqliteStorage(dir);
    const loaded = reopened.load()!;
    expect([...loaded.rows.portfolios!.keys()]).toEqual(['1029384756']);
    clock.advance(60_000);
    const restarted = createEngine(fleet, { clock, snapshot: JSON.parse(JSON.stringify(snapshotFromRows(loaded.rows, clock.now()))) });
    expect(restarted.portfolios()).toEqual([{ id: '1029384756', messagingLimit24h: 3, uniqueRecipients: true, used: 3, available: 0 }]);
    // Contact 4 waited when the engine stopped: still no room for it, and contact 1 (reached already)
    // waits behind it, since the queue keeps its order.
    restarted.submit({ businessId: 1, typeId: 10, contacts: [contact(1)] });
    expect(restarted.poll().map((m) => m.contact.phone)).toEqual([]);
    expect(restarted.queueStatus(1, 10)).toMatchObject({ queued: 2, blocked: 'portfolio-limit', retryAt: 86_400_000 });
    reopened.close();
  });

  it('writes a row per recipient a step charged, and drops the rows a day older than a step', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    const clock = new ManualClock(0);
    const fleet = { ...specFleet(), portfolios: [{ id: 'p', messagingLimit24h: 10 }] };
    fleet.businesses = fleet.businesses.map((b) => ({ ...b, portfolioId: 'p' }));
    const engine = createEngine(fleet, { clock, trackChanges: true });
    const step = () => {
      for (const m of engine.poll()) engine.report(m.messageId, { status: 'sent' });
      engine.takeOutcomes();
      const changes = engine.takeChanges();
      storage.write({ engine: changes });
      return changes.portfolios ?? [];
    };
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(1), contact(2)] });
    expect(step().map((p) => p.recipients.map(([phone]) => phone))).toEqual([[contact(1).phone, contact(2).phone]]);
    clock.advance(60_000);
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(2)] });
    // Only the recipient this step charged is written again.
    expect(step().map((p) => p.recipients.map(([phone, at]) => [phone, at]))).toEqual([[[contact(2).phone, 60_000]]]);
    clock.advance(86_400_000);
    engine.submit({ businessId: 1, typeId: 10, contacts: [contact(3)] });
    step();
    storage.close();
    const reopened = await openSqliteStorage(dir);
    // Contact 1 (last message at 0) and contact 2 (at 60 s) are a day older than the last step.
    expect([...reopened.load()!.rows.portfolios!.get('p')!.recipients.keys()]).toEqual([contact(3).phone]);
    reopened.close();
  });

  it('keeps server values and outbox events, and forgets what is deleted', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({
      values: { nextContactId: 41, reportTokenKey: 'k1', gone: true },
      outbox: {
        put: [
          ['e1', { url: 'https://a' }],
          ['e2', { url: 'https://b' }],
        ],
      },
    });
    storage.write({ values: { nextContactId: 42, gone: undefined }, outbox: { delete: ['e1'] } });
    storage.close();
    const loaded = (await openSqliteStorage(dir)).load()!;
    expect(Object.fromEntries(loaded.values)).toEqual({ nextContactId: 42, reportTokenKey: 'k1' });
    expect(loaded.outbox).toEqual([['e2', { url: 'https://b' }]]);
  });

  it('keeps the activity of the period reports: rows put and updated in first-write order, dropped by key and by time', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({
      activity: {
        put: [
          ['m:1', 100, { v: 1 }],
          ['m:2', 200, { v: 2 }],
          ['a:1:7', 150, { v: 3 }],
          ['m:3', 300, { v: 4 }],
        ],
      },
    });
    // An update keeps the row's place; the count bound drops by key, the retention by time.
    storage.write({
      activity: {
        put: [
          ['m:2', 200, { v: 22 }],
          ['m:4', 400, { v: 5 }],
        ],
        delete: ['m:3'],
        before: 150,
      },
    });
    storage.close();
    const loaded = (await openSqliteStorage(dir)).load()!;
    expect(loaded.activity).toEqual([
      ['m:2', { v: 22 }],
      ['a:1:7', { v: 3 }],
      ['m:4', { v: 5 }],
    ]);
  });

  it('opens a schema 2 database (before the activity table) and upgrades it in place', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({ values: { nextContactId: 7 } });
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    db.exec("DROP TABLE activity; UPDATE meta SET value = '2' WHERE key = 'schema'");
    db.close();
    const again = await openSqliteStorage(dir);
    again.write({ activity: { put: [['m:1', 1, { v: 1 }]] } });
    expect(Object.fromEntries(again.load()!.values)).toEqual({ nextContactId: 7 });
    expect(again.load()!.activity).toEqual([['m:1', { v: 1 }]]);
    again.close();
  });

  it('refuses a database of a newer schema, naming the file, the schema found and the schemas it reads', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    db.exec("UPDATE meta SET value = '99' WHERE key = 'schema'");
    db.close();
    const refused = await openSqliteStorage(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStateFileError(refused)).toBe(true);
    expect(refused).toMatchObject({ name: 'StateFileError', file: join(dir, 'sendpool.db'), field: 'meta.schema', actual: '"99"' });
    expect((refused as Error).message).toMatch(/^durable store .*sendpool\.db: meta\.schema: expected a schema from 1 to \d+, got "99" \(written by another sendpool version: start that version\)$/);
  });

  it('keeps the channel memory as numbered chunks, forgets them by range, and upgrades a schema 3 database to hold them', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({ values: { nextContactId: 3 } });
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    db.exec("DROP TABLE channel_memory; UPDATE meta SET value = '3' WHERE key = 'schema'");
    db.close();
    const again = await openSqliteStorage(dir);
    again.write({ channelMemory: { firstSeq: 1, keys: ['wm:a', 'wp:1'], values: ['x', 'y'] } });
    again.write({ channelMemory: { firstSeq: 3, keys: ['', 'wm:a'], values: [null, null] } });
    again.write({ channelMemory: { firstSeq: 5, keys: ['wm:b'], values: ['z'], before: 3 } });
    again.close();
    const loaded = (await openSqliteStorage(dir)).load()!;
    expect(loaded.channelMemory).toEqual([
      { firstSeq: 3, keys: ['', 'wm:a'], values: [null, null] },
      { firstSeq: 5, keys: ['wm:b'], values: ['z'] },
    ]);
    expect(Object.fromEntries(loaded.values)).toEqual({ nextContactId: 3 });
  });

  it('keeps dead letters in the order written, drops them in the step that says so, and upgrades a schema 4 database to hold them', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({
      outbox: {
        put: [
          ['e1', { id: 'e1' }],
          ['e2', { id: 'e2' }],
        ],
      },
    });
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    db.exec("DROP TABLE dead_letters; UPDATE meta SET value = '4' WHERE key = 'schema'");
    db.close();
    const again = await openSqliteStorage(dir);
    expect(again.load()!.deadLetters).toEqual([]);
    // Dead-lettered: out of the outbox and into the dead letters in one step.
    again.write({
      outbox: { delete: ['e1', 'e2'] },
      deadLetters: [
        ['e1', 1, 10, { id: 'e1' }],
        ['e2', 2, 11, { id: 'e2' }],
      ],
    });
    // e1 replayed (back into the outbox) and dead-lettered again: it goes last.
    again.write({ outbox: { put: [['e1', { replay: { id: 'e1' } }]] }, deadLetters: [['e1', 1, 0, null]] });
    expect(again.load()!.outbox).toEqual([['e1', { replay: { id: 'e1' } }]]);
    again.write({ outbox: { delete: ['e1'] }, deadLetters: [['e1', 1, 12, { id: 'e1', again: true }]] });
    again.close();
    const loaded = (await openSqliteStorage(dir)).load()!;
    expect(loaded.outbox).toEqual([]);
    expect(loaded.deadLetters).toEqual([{ id: 'e2' }, { id: 'e1', again: true }]);
  });

  it("keeps a campaign contact's stage and failure window end, and reads a schema 4 database's contacts without them", async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    const campaign = { campaignId: 3, name: 'c', createdAt: 0, lastSent: null, dirty: false };
    const changes = (contacts: ContactRow[]) => ({ lastBatchAt: null, campaigns: [campaign], contacts, settled: [] });
    storage.write({
      statistics: [
        {
          companyId: 1,
          changes: changes([
            [3, 'a', 32, -1, 2, 0, 600_000],
            [3, 'b', 32, -1, 8, 1, 0],
          ]),
        },
      ],
    });
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    // Schema 4: the table without the two columns, a row written then.
    db.exec(
      "DROP TABLE campaign_contacts; CREATE TABLE campaign_contacts (company INTEGER NOT NULL, campaign INTEGER NOT NULL, contact TEXT NOT NULL, admissions INTEGER NOT NULL, attempt INTEGER NOT NULL, progress INTEGER NOT NULL, PRIMARY KEY (company, campaign, contact)) WITHOUT ROWID; INSERT INTO campaign_contacts VALUES (1, 3, 'old', 32, -1, 2); UPDATE meta SET value = '4' WHERE key = 'schema'",
    );
    db.close();
    const again = await openSqliteStorage(dir);
    again.write({ statistics: [{ companyId: 1, changes: changes([[3, 'a', 32, -1, 2, 0, 600_000]]) }] });
    const contacts = again.load()!.statistics.get(1)!.contacts;
    expect([...contacts].sort((x, y) => x[1].localeCompare(y[1]))).toEqual([
      [3, 'a', 32, -1, 2, 0, 600_000],
      [3, 'old', 32, -1, 2],
    ]);
    again.close();
  });

  it('keeps the phones businesses took per template type as rows in order, drops buckets by start, and upgrades a schema 4 database to hold them', async () => {
    const dir = freshDir();
    const storage = await openSqliteStorage(dir);
    storage.write({ values: { nextContactId: 4 } });
    storage.close();
    const Libsql = ((await import('libsql')) as unknown as { default: new (path: string) => { exec(sql: string): void; close(): void } }).default;
    const db = new Libsql(join(dir, 'sendpool.db'));
    db.exec("DROP TABLE sent_phones; UPDATE meta SET value = '4' WHERE key = 'schema'");
    db.close();
    const again = await openSqliteStorage(dir);
    expect(again.load()!.sentPhones).toEqual([]);
    again.write({ sentPhones: { rows: [{ businessId: 1, typeId: 10, bucket: 0, phones: [5511987650001, 5511987650002] }] } });
    again.write({
      sentPhones: {
        rows: [
          { businessId: 1, typeId: 10, bucket: 0, phones: [5511987650001], released: true },
          { businessId: 1, typeId: 10, bucket: 3_600_000, phones: [5511987650003] },
        ],
      },
    });
    again.write({ sentPhones: { rows: [{ businessId: 2, typeId: 20, bucket: 7_200_000, phones: [5511987650004] }], before: 3_600_000 } });
    again.close();
    const loaded = (await openSqliteStorage(dir)).load()!;
    expect(loaded.sentPhones).toEqual([
      { businessId: 1, typeId: 10, bucket: 3_600_000, phones: [5511987650003] },
      { businessId: 2, typeId: 20, bucket: 7_200_000, phones: [5511987650004] },
    ]);
    expect(Object.fromEntries(loaded.values)).toEqual({ nextContactId: 4 });
  });

  it('a step that fails writes nothing of itself', async () => {
    const storage = await openSqliteStorage(freshDir());
    const changes = {
      takenAt: 0,
      nextSeq: 2,
      counts: { submitted: 0, queued: 0, waitingRetry: 0, inFlight: 0, sent: 0, failed: 0, expired: 0, rejected: 0 },
      finished: [],
      numbers: [],
      templates: [],
      store: { kind: 'memory' },
    };
    // A change without contacts for a submission never written: refused, and the value with it.
    const orphan = { seq: 9, businessId: 1, typeId: 10, maxRetries: 0, retryInterval: 0, weight: 1, state: '0', retries: [0], handouts: [0], fresh: 0, back: [], timers: [] };
    expect(() => storage.write({ engine: { ...changes, submissions: [orphan] }, values: { x: 1 } })).toThrow(/submission s9 was never written/);
    expect(storage.load()).toBeUndefined();
    storage.close();
  });

  it('killed while writing (SIGKILL), it opens with every step it had reported written', async () => {
    for (let round = 0; round < 5; round++) {
      const dir = freshDir();
      const child = fork(join(import.meta.dirname, 'torn-writer.ts'), [], {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, SENDPOOL_TORN_DIR: dir },
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      });
      let out = '';
      const target = 20 + round * 7;
      const exited = new Promise((resolve) => child.on('exit', resolve));
      // Kill once it has reported `target` durable steps: a condition, not a time.
      await new Promise<void>((resolve) => {
        child.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.split('\n').length > target) resolve();
        });
      });
      child.kill('SIGKILL');
      await exited;
      const reported = out
        .split('\n')
        .filter((l) => /^\d+$/.test(l))
        .map(Number);
      const last = Math.max(...reported);
      const storage = await openSqliteStorage(dir);
      const loaded = storage.load()!;
      const seqs = [...loaded.rows.submissions.keys()];
      // Every reported step is there, whole; at most the one step in flight at the kill beyond it.
      expect(seqs.slice(0, last)).toEqual(reported.slice(0, last));
      expect(seqs.length === last || seqs.length === last + 1).toBe(true);
      for (const row of loaded.rows.submissions.values()) expect(row.contacts).toHaveLength(200);
      expect(loaded.values.get('lastStep')).toBe(seqs.length);
      storage.close();
    }
  });
});
