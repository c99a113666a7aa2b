/**
 * Failures with four instances on simulated time (as in fleet.test.ts): an instance killed while
 * it holds leases, and Redis stopped and restarted mid-run. In both, no window is ever exceeded by
 * the sends of all instances together (the killed one's included), and sending goes on.
 *
 * The restart test owns a second redis-server on its own port, with an append-only file fsynced at
 * every write, so the limit state survives the restart as it must in production (docs/scaling.md).
 */
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkWindows, NUMBERS, readSends, startInstances, testFleet } from './fleet-run.js';
import { cleanup, connect, REDIS_URL, SKIP_REASON, testPrefix } from './helpers.js';

const MINUTE = 60_000;
const SCALE = 300;
const enabled = REDIS_URL !== undefined;
if (!enabled) describe('failures', () => it.skipIf(true)(SKIP_REASON, () => {}));

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.runIf(enabled)('failures', () => {
  const prefix = testPrefix('failures');
  afterAll(async () => {
    const client = connect();
    await cleanup(client, prefix);
    client.disconnect();
  });

  it('an instance killed while holding leases: no over-send, the others carry on', async () => {
    const startWall = Date.now() + 4000;
    const simEnd = 20 * MINUTE;
    // The instance to kill gets more contacts than the whole fleet can send by simEnd (36,000: the
    // full buckets plus 20 minutes of refill), so it is still running, holding leases, when killed.
    const instances = startInstances({ url: REDIS_URL!, prefix: `${prefix}kill:`, instances: 4, fleet: testFleet(NUMBERS), startWall, scale: SCALE, simEnd }, [40_000, 12_000, 12_000, 12_000]);
    await sleep(startWall - Date.now() + 1500);
    const killedAt = Math.floor((Date.now() - startWall) * SCALE);
    instances[0]!.child.kill('SIGKILL');
    const results = await Promise.all(instances.map((i) => i.done));
    expect(results[0]!.code).toBe(null);
    for (const r of results.slice(1)) expect(r.code).toBe(0);
    const sends = readSends(instances);
    checkWindows(sends);
    expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
    expect(sends.filter((s) => s.instance === 0).length).toBeGreaterThan(0);
    // Each survivor either sent all its contacts or kept sending well after the kill.
    for (const i of [1, 2, 3]) {
      const mine = sends.filter((s) => s.instance === i);
      const after = mine.filter((s) => s.at > killedAt + MINUTE);
      expect(mine.length === 12_000 || after.length > 0).toBe(true);
    }
    // The survivors still use the numbers: the last 5 simulated minutes carry at least 90 % of
    // what the windows refill in that time (the bursts were spent long before).
    const tail = sends.filter((s) => s.at >= simEnd - 5 * MINUTE).length;
    const refill = NUMBERS.reduce((sum, n) => sum + (5 * MINUTE * n.perHour) / 3_600_000, 0);
    expect(tail / refill).toBeGreaterThanOrEqual(0.9);
  }, 60_000);

  it('Redis stopped and restarted mid-run: no over-send, fail closed, sending resumes', async () => {
    const port = 6400 + Math.floor(Math.random() * 500);
    const dir = mkdtempSync(join(tmpdir(), 'sendpool-redis-'));
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'];
    const startRedis = async (): Promise<void> => {
      const server = spawn('redis-server', args, { stdio: 'ignore', detached: false });
      server.unref();
      for (let i = 0; i < 100; i++) {
        try {
          execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'pipe' });
          return;
        } catch {
          await sleep(20);
        }
      }
      throw new Error(`redis-server on port ${port} did not start`);
    };
    await startRedis();
    try {
      const startWall = Date.now() + 4000;
      const simEnd = 20 * MINUTE;
      const url = `redis://127.0.0.1:${port}`;
      const instances = startInstances({ url, prefix: `${prefix}restart:`, instances: 4, fleet: testFleet(NUMBERS), startWall, scale: SCALE, simEnd }, 12_000);
      await sleep(startWall - Date.now() + 1200);
      execFileSync('redis-cli', ['-p', String(port), 'shutdown'], { stdio: 'pipe' });
      const downAt = Math.floor((Date.now() - startWall) * SCALE);
      await sleep(400);
      const upAt = Math.floor((Date.now() - startWall) * SCALE);
      await startRedis();
      const results = await Promise.all(instances.map((i) => i.done));
      for (const r of results) expect(r.code).toBe(0);
      const sends = readSends(instances);
      checkWindows(sends);
      expect(new Set(sends.map((s) => s.contact)).size).toBe(sends.length);
      // Every instance still sending after the restart went through redis-down and redis-up (one
      // that had sent all its contacts before Redis went away had no call to fail).
      results.forEach((r, i) => {
        if (!sends.some((s) => s.instance === i && s.at > upAt)) return;
        const events = (r.summary?.['events'] ?? {}) as Record<string, number>;
        expect(events['redis-down'] ?? 0).toBeGreaterThanOrEqual(1);
        expect(events['redis-up'] ?? 0).toBeGreaterThanOrEqual(1);
      });
      // Fail closed: while Redis was away, only tokens already held went out (leases live 60 s).
      const during = sends.filter((s) => s.at > downAt + MINUTE && s.at < upAt).length;
      if (process.env['SENDPOOL_DEBUG']) console.log('down', downAt, 'up', upAt, JSON.stringify(results.map((r) => r.summary)), sends.filter((s) => s.at > downAt + MINUTE && s.at < upAt).slice(0, 5));
      expect(during).toBe(0);
      expect(sends.filter((s) => s.at > upAt + MINUTE).length).toBeGreaterThan(0);
    } finally {
      try {
        execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'pipe' });
      } catch {
        // already down
      }
    }
  }, 60_000);
});
