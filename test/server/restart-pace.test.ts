/**
 * Sends reach the provider at the engine's pace across kill -9: the durable server (a child process
 * on a data directory) sends through the WhatsApp channel to the fake Graph API in this process,
 * which records when each request arrives; the child is SIGKILLed three times mid-campaign and
 * restarted on the same directory, each restart with thousands of contacts and webhook events to
 * load and catch up on. From the fake's record alone: a number of 25 messages a second never had
 * more requests arrive in any interval than its per-second window allows (a burst of one second's
 * worth, then one every 40 ms: at most 49 in any second), before, across and after each restart.
 * Waits are for conditions (what the fake recorded), never for times.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { windowViolation } from '../core/window-check.js';
import { KEY_1, api, testFleet, waitFor } from './helpers.js';
import { graphAccount, startFakeGraph, whatsappFleet } from './whatsapp-fake-graph.js';
import { killChild, startChild, type Child } from './whatsapp-smpp-restart.js';

const dir = mkdtempSync(join(tmpdir(), 'sendpool-restart-pace-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RATE = 25;
const base = testFleet();
// The first number sends 25 a second; the others the WhatsApp channel's default (80).
base.businesses[0]!.numbers[0] = { ...base.businesses[0]!.numbers[0]!, messagesPerSecond: RATE };
const fleet = whatsappFleet(base);
const account = graphAccount(fleet);
const slow = account.numbers[0]!;

/** Most arrivals in any interval of `spanMs` (the record sorted by time). */
function mostWithin(times: readonly number[], spanMs: number): number {
  let most = 0;
  for (let a = 0, b = 0; b < times.length; b++) {
    while (times[b]! - times[a]! >= spanMs) a++;
    most = Math.max(most, b - a + 1);
  }
  return most;
}

/** A webhook receiver that takes everything (the restarts have notifications to catch up on). */
async function sink(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('durable server: sends keep their pace at the provider across kill -9', () => {
  it('a 25/s number never exceeds its per-second window at the provider, restarts included', { timeout: 600_000 }, async () => {
    const graph = await startFakeGraph(account);
    const receiver = await sink();
    const fleetFile = join(dir, 'fleet.json');
    writeFileSync(fleetFile, JSON.stringify(fleet));
    const cfg = { fleetFile, dataDir: join(dir, 'data'), key: KEY_1, whatsapp: { graphUrl: graph.url, attendanceIdleMs: 60_000 } };
    let child: Child | undefined = await startChild(cfg);
    const arrivals = () => graph.requests.filter((r) => r.phoneNumberId === slow.phoneNumberId).map((r) => r.at);
    const restarts: { killedAt: number; back: number }[] = [];
    try {
      expect((await api(child.url, '/messenger/config/', { body: { url_hsm_callback: `${receiver.url}/hsm`, url_campaign_webhook: `${receiver.url}/campaign` } })).status).toBe(200);
      for (let r = 0; r < 4; r++) {
        const contacts = Array.from({ length: 2500 }, (_, i) => ({ phone_number: `55219${String(80000000 + r * 10_000 + i)}`, template_variables: [`c${i}`] }));
        expect((await api(child.url, '/messenger/messages/', { body: { business_id: 1, template_type_id: 10, campaign_id: 1, contacts } })).status).toBe(202);
      }
      const postedAt = Date.now();
      for (let k = 0; k < 3; k++) {
        const before = arrivals().length;
        // Mid-campaign: the number has been sending at its pace for a few seconds.
        await waitFor(() => arrivals().length >= before + 3 * RATE, `sends before kill ${k}`);
        await killChild(child);
        const killedAt = Date.now();
        child = await startChild(cfg);
        restarts.push({ killedAt, back: Date.now() });
      }
      const before = arrivals().length;
      await waitFor(() => arrivals().length >= before + 3 * RATE, 'sends after the last restart');
      await killChild(child);
      child = undefined;

      const times = arrivals().sort((a, b) => a - b);
      // Each restart resumed this number (the record holds sends after each one).
      for (const { back } of restarts) expect(times.some((t) => t >= back)).toBe(true);
      // From the first send on (intake of four requests of 2,500 contacts, which holds the event loop,
      // the three restarts and what came between): the window, on arrival times, in any interval
      // [a, b]: at most 25 + floor((b - a) × 25 / 1 s).
      const late = times.filter((t) => t >= postedAt);
      expect(
        windowViolation(
          times.map((at) => ({ at, count: 1 })),
          { perHour: 1_000_000, per24h: 10_000_000, perSecond: RATE },
        ),
      ).toBeUndefined();
      const most = mostWithin(times, 1000);
      expect(most).toBeLessThanOrEqual(2 * RATE - 1);
      // The first second after each restart, at the provider.
      const firstSeconds = restarts.map(({ back }) => times.filter((t) => t >= back && t < (times.find((x) => x >= back) ?? back) + 1000).length);
      const intake = times.filter((t) => t < postedAt);
      console.log(
        `restart pace: ${late.length} sends of a ${RATE}/s number at the provider across 3 kill -9 (${times.length} with intake); most in any 1 s: ${most} (during intake: ${mostWithin(intake, 1000)}, after: ${mostWithin(late, 1000)}); in the first second after each restart: ${firstSeconds.join(', ')}`,
      );
    } finally {
      if (child) await killChild(child);
      await receiver.close();
      await graph.close();
    }
  });
});
