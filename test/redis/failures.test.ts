/**
 * Failures with four instances on simulated time (as in fleet.test.ts): an instance killed while
 * it holds leases, and Redis stopped and restarted mid-run. In both, no window is ever exceeded by
 * the sends of all instances together (the killed one's included), no contact goes twice, and
 * sending goes on.
 *
 * Each fault is injected once the instances have done what the test needs (sent so many, seen
 * Redis go away), and the run ends once they have done what the test checks: nothing depends on
 * how fast the machine runs the processes. The simulated clock is real time scaled, so the
 * assertions are invariants (windows, contacts, fail closed, resumption), not rates.
 *
 * The restart test owns a second redis-server on its own port, with an append-only file fsynced at
 * every write, so the limit state survives the restart as it must in production (docs/scaling.md).
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readSends, startInstances, testFleet, NUMBERS, WAIT_BOUND_MS, waitUntil, windowViolations, type RunningInstance } from './fleet-run.js';
import { cleanup, connect, REDIS_URL, SKIP_REASON, testPrefix } from './helpers.js';

const MINUTE = 60_000;
const SCALE = 300;
/** Where a worker stops by itself: a bound only a hang reaches (the tests stop them). */
const SIM_END = WAIT_BOUND_MS * SCALE;
/** Sends each instance makes before a fault is injected. */
const BEFORE_FAULT = 500;
const enabled = REDIS_URL !== undefined;
if (!enabled) describe('failures', () => it.skipIf(true)(SKIP_REASON, () => {}));

/** A free loopback port (the OS picks it; nothing else is listening there). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

const finishedOrSentAfter = (x: RunningInstance, at: number): boolean => x.exited || x.progress.lastAt > at;

describe.runIf(enabled)('failures', () => {
  const prefix = testPrefix('failures');
  afterAll(async () => {
    const client = connect();
    await cleanup(client, prefix);
    client.disconnect();
  });

  it('an instance killed while holding leases: no over-send, the others carry on', async () => {
    // Every instance has more contacts than it can send before the test ends (the numbers are
    // saturated), so instance 0 is leasing and sending when it is killed, and the others are
    // still sending after its leases ran out.
    const fleet = await startInstances({ url: REDIS_URL!, prefix: `${prefix}kill:`, instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: SIM_END }, 40_000);
    try {
      const [victim, ...survivors] = fleet.instances as [RunningInstance, ...RunningInstance[]];
      await waitUntil(() => fleet.instances.every((x) => x.progress.sent >= BEFORE_FAULT), `every instance to send ${BEFORE_FAULT}`);
      victim.child.kill('SIGKILL');
      const killed = await victim.done;
      const killedAt = fleet.now();
      // The victim's unspent leases live one more minute at most: the survivors send after that.
      await waitUntil(() => survivors.every((x) => finishedOrSentAfter(x, killedAt + MINUTE)), 'every survivor to send after the victim’s leases expired');
      const results = await fleet.finish();
      expect(killed.signal).toBe('SIGKILL');
      for (const r of results.slice(1)) expect(r.code).toBe(0);
      const sends = readSends(fleet.instances);
      expect(windowViolations(sends)).toEqual([]);
      expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
      // The victim's log holds at least what it reported (each line is written before it counts).
      expect(sends.filter((s) => s.instance === 0).length).toBeGreaterThanOrEqual(BEFORE_FAULT);
      for (const i of [1, 2, 3]) {
        const mine = sends.filter((s) => s.instance === i);
        expect(mine.length === 40_000 || mine.some((s) => s.at > killedAt + MINUTE), `instance ${i} sent after the victim's leases expired`).toBe(true);
      }
    } finally {
      fleet.kill();
    }
  }, 3 * WAIT_BOUND_MS);

  it('Redis stopped and restarted mid-run: no over-send, fail closed, sending resumes', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'sendpool-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    const ping = (): boolean => {
      try {
        return execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe', encoding: 'utf8' }).trim() === 'PONG';
      } catch {
        return false;
      }
    };
    const startRedis = async (): Promise<void> => {
      const server = spawn('redis-server', args, { stdio: 'ignore', detached: false });
      server.unref();
      await waitUntil(ping, `redis-server on port ${port} to answer`);
    };
    await startRedis();
    const url = `redis://127.0.0.1:${port}`;
    const fleet = await startInstances({ url, prefix: `${prefix}restart:`, instances: 4, fleet: testFleet(NUMBERS), scale: SCALE, simEnd: SIM_END }, 40_000);
    try {
      const all = fleet.instances;
      await waitUntil(() => all.every((x) => x.progress.sent >= BEFORE_FAULT), `every instance to send ${BEFORE_FAULT}`);
      // Counted from the shutdown on (a call that timed out on a loaded machine may have made an
      // instance report a short outage before).
      const count = (x: RunningInstance, type: string): number => x.progress.events[type] ?? 0;
      const downsBefore = all.map((x) => count(x, 'redis-down'));
      execFileSync('redis-cli', ['-p', String(port), 'shutdown'], { stdio: 'pipe' });
      const downAt = fleet.now();
      // Every instance notices (its next lease call fails), and the leases it held run out (they
      // live one simulated minute): from then on nothing may go until Redis is back.
      await waitUntil(() => all.every((x, i) => count(x, 'redis-down') > downsBefore[i]!), 'every instance to report redis-down');
      await waitUntil(() => fleet.now() > downAt + 2 * MINUTE, 'the held leases to expire');
      const upsBefore = all.map((x) => count(x, 'redis-up'));
      const upAt = fleet.now();
      await startRedis();
      await waitUntil(() => all.every((x, i) => count(x, 'redis-up') > upsBefore[i]! && x.progress.lastAt > upAt), 'every instance to report redis-up and send again');
      const results = await fleet.finish();
      for (const r of results) expect(r.code).toBe(0);
      const sends = readSends(all);
      expect(windowViolations(sends)).toEqual([]);
      expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
      results.forEach((r, i) => {
        const events = (r.summary?.['events'] ?? {}) as Record<string, number>;
        expect(events['redis-down'] ?? 0, `instance ${i}`).toBeGreaterThanOrEqual(1);
        expect(events['redis-up'] ?? 0, `instance ${i}`).toBeGreaterThanOrEqual(1);
        expect(sends.some((s) => s.instance === i && s.at > upAt), `instance ${i} sent after the restart`).toBe(true);
      });
      // Fail closed: while Redis was away, only tokens already held went out (leases live 60 s).
      const during = sends.filter((s) => s.at > downAt + MINUTE && s.at < upAt);
      if (process.env['SENDPOOL_DEBUG']) console.log('down', downAt, 'up', upAt, JSON.stringify(results.map((r) => r.summary)), during.slice(0, 5));
      expect(during).toEqual([]);
    } finally {
      fleet.kill();
      try {
        execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'pipe' });
      } catch {
        // already down
      }
    }
  }, 3 * WAIT_BOUND_MS);
});
