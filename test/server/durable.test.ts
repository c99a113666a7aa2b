/**
 * The durable server under kill -9: a child server process on a SQLite store is killed with SIGKILL
 * again and again while it sends a campaign, and restarted on the same directory each time. From
 * the channel's own log (written by the child before each "sent"): every contact that got a 202 is
 * sent, none more than once beyond the hand-outs in flight at the kills, and no number exceeds a
 * window. Waits are for conditions (what the log shows), never for times.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { windowViolation } from '../core/window-check.js';
import { waitFor } from './helpers.js';

const KEY = 'durable-test-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'sendpool-durable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NUMBERS = [
  { phone: '5511990000001', throughputPerHour: 3000, messagingLimit24h: 2500, messagesPerSecond: 100 },
  { phone: '5511990000002', throughputPerHour: 3000, messagingLimit24h: 2500, messagesPerSecond: 100 },
];
const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Acme',
      companyId: 1,
      numbers: NUMBERS.map((n) => ({ ...n, status: 'active' })),
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};

interface Logged {
  at: number;
  phone: string;
  ref: string;
  id: string;
}
const readLog = (file: string): Logged[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.endsWith('}'))
        .map((l) => JSON.parse(l) as Logged)
    : [];

function start(cfg: object, logFile: string): Promise<{ child: ChildProcess; url: string }> {
  rmSync(`${logFile}.address`, { force: true });
  const child = fork(join(import.meta.dirname, 'durable-child.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SENDPOOL_DURABLE: JSON.stringify(cfg) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return waitFor(() => existsSync(`${logFile}.address`) && readFileSync(`${logFile}.address`, 'utf8').length > 0, 60_000, 'child listening').then(() => ({
    child,
    url: readFileSync(`${logFile}.address`, 'utf8'),
  }));
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('durable server under kill -9', () => {
  it('loses no accepted contact, over-sends no number, and re-sends at most what was in flight', async () => {
    const fleetFile = join(dir, 'fleet.json');
    const logFile = join(dir, 'sends.log');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const cfg = { fleetFile, dataDir: join(dir, 'data'), log: logFile, key: KEY };
    let { child, url } = await start(cfg, logFile);
    const accepted = new Set<string>();
    for (let r = 0; r < 5; r++) {
      const contacts = Array.from({ length: 400 }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 1000 + i)}`, template_variables: ['x'], data: { ref: `r${r}c${i}` } }));
      const res = await fetch(`${url}/messenger/messages/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key-id': KEY },
        body: JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts }),
      });
      expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(202);
      for (const c of contacts) accepted.add(c.data.ref);
    }
    const kills = 6;
    for (let k = 0; k < kills; k++) {
      const before = readLog(logFile).length;
      // Kill once the child has sent some more since it started: a condition, not a time.
      await waitFor(() => readLog(logFile).length >= before + 60 || new Set(readLog(logFile).map((l) => l.ref)).size >= accepted.size, 60_000, `sends before kill ${k}`);
      await kill(child);
      ({ child, url } = await start(cfg, logFile));
    }
    await waitFor(() => new Set(readLog(logFile).map((l) => l.ref)).size >= accepted.size, 120_000, 'every accepted contact sent');
    await kill(child);

    const log = readLog(logFile);
    const sentRefs = new Set(log.map((l) => l.ref));
    for (const ref of accepted) expect(sentRefs.has(ref), ref).toBe(true);
    const duplicates = log.length - sentRefs.size;
    // At most what was in flight at each kill: the dispatch worker holds at most 1,000 at once.
    expect(duplicates).toBeLessThanOrEqual(kills * 1000);
    console.log(`kill -9 x${kills}: ${accepted.size} contacts, ${log.length} sends, ${duplicates} re-sent after kills`);
    for (const n of NUMBERS) {
      const sends = log.filter((l) => l.phone === n.phone).map((l) => ({ at: l.at, count: 1 }));
      // Hour and 24 h from the log's times; not the second: a send is logged after its write, some
      // milliseconds after it was charged, which can bunch two seconds' sends in the log.
      expect(windowViolation(sends, { perHour: n.throughputPerHour, per24h: n.messagingLimit24h }), n.phone).toBeUndefined();
    }
  });
});
