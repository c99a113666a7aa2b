/**
 * Redis down when the server on Redis starts: the process waits (it does not exit), says so in its
 * log while it waits, answers on its port meanwhile (/metrics with `sendpool_redis_ready 0`, the API
 * 503 with Retry-After), and serves once Redis is there, with the status sync's state in /metrics. A
 * separate metrics listener answers while it waits (sendpool_redis_ready 0), and is the server's
 * once Redis is there.
 */
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REDIS_URL, SKIP_REASON } from '../redis/helpers.js';
import { builtChild } from './built-child.js';
import { waitFor } from './helpers.js';
import { freePort, kill } from './send-log.js';

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Acme',
      companyId: 1,
      numbers: [{ phone: '5511990000001', status: 'active', throughputPerHour: 1000, messagingLimit24h: 1000 }],
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100] }],
    },
  ],
  templates: [{ id: 100, name: 'bill', text: 'Hi {{1}}', businessIds: [1], status: 'active' }],
};

function redisUp(port: number): boolean {
  try {
    return execFileSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'PONG';
  } catch {
    return false;
  }
}

describe.skipIf(REDIS_URL === undefined)('the server on Redis, Redis down at start', () => {
  it('waits, logging the sync state, and serves once Redis is up', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendpool-start-'));
    const port = await freePort();
    const apiPort = await freePort();
    writeFileSync(join(dir, 'fleet.json'), JSON.stringify(fleet));
    let stderr = '';
    let redis: ChildProcess | undefined;
    const child = fork(builtChild(join(import.meta.dirname, 'redis-start-child.ts')), [], {
      execArgv: [],
      env: { ...process.env, SENDPOOL_START_CHILD: JSON.stringify({ fleetFile: join(dir, 'fleet.json'), redisUrl: `redis://127.0.0.1:${port}`, dir, port: apiPort }) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const api = `http://127.0.0.1:${apiPort}`;
    try {
      // It says what it waits for, and does not exit meanwhile.
      await waitFor(() => stderr.includes('"state":"connecting"') && stderr.includes('ECONNREFUSED'), 'the wait in the log');
      expect(child.exitCode).toBeNull();
      expect(existsSync(join(dir, 'address'))).toBe(false);
      // The API's port answers while it waits: /metrics says Redis is not ready, the API 503 with Retry-After.
      const waiting = await (await fetch(`${api}/metrics`)).text();
      expect(waiting).toContain('sendpool_redis_ready 0');
      expect(waiting).toContain('sendpool_redis_sync_state{state="connecting"} 1');
      const refused = await fetch(`${api}/messenger/messages/`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key-id': 'redis-start-key-0123456789abcdef' }, body: '{}' });
      expect(refused.status).toBe(503);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({ error: { code: 'unavailable' } });
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(() => redisUp(port), 'redis-server up');
      await waitFor(() => existsSync(join(dir, 'address')) && readFileSync(join(dir, 'address'), 'utf8').length > 0, 'the server listening');
      const address = readFileSync(join(dir, 'address'), 'utf8');
      // The server took the port the starting listener held.
      expect(address).toBe(api);
      await waitFor(async () => (await (await fetch(`${address}/metrics`)).text()).includes('sendpool_redis_sync_state{state="ready"} 1'), 'the sync ready in /metrics');
    } finally {
      await kill(child);
      if (redis) await kill(redis);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.skipIf(REDIS_URL === undefined)('the server on Redis with a metrics listener, Redis down at start', () => {
  it('answers /metrics while it waits (sendpool_redis_ready 0), then the server answers on the same port', { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sendpool-start-'));
    const port = await freePort();
    const metricsPort = await freePort();
    writeFileSync(join(dir, 'fleet.json'), JSON.stringify(fleet));
    let stderr = '';
    let redis: ChildProcess | undefined;
    const child = fork(builtChild(join(import.meta.dirname, 'redis-start-child.ts')), [], {
      execArgv: [],
      env: { ...process.env, SENDPOOL_START_CHILD: JSON.stringify({ fleetFile: join(dir, 'fleet.json'), redisUrl: `redis://127.0.0.1:${port}`, dir, metricsPort }) },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const scrape = async (): Promise<string | undefined> => {
      try {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        return res.status === 200 ? await res.text() : undefined;
      } catch {
        return undefined; // not listening yet
      }
    };
    try {
      await waitFor(() => stderr.includes('"state":"connecting"') && stderr.includes('ECONNREFUSED'), 'the wait in the log');
      // While it waits: no API, but the metrics listener says Redis is not ready.
      let waiting = '';
      await waitFor(async () => (waiting = (await scrape()) ?? '').includes('sendpool_redis_ready 0'), 'sendpool_redis_ready 0 while waiting');
      expect(waiting).toContain('sendpool_redis_sync_state{state="connecting"} 1');
      expect(waiting).not.toContain('sendpool_queue_depth');
      expect(existsSync(join(dir, 'address'))).toBe(false);
      expect(redisUp(port)).toBe(false);
      // Redis starts only now.
      redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
      await waitFor(() => redisUp(port), 'redis-server up');
      await waitFor(() => existsSync(join(dir, 'address')) && readFileSync(join(dir, 'address'), 'utf8').length > 0, 'the server listening');
      // The same listener now answers with the server's metrics.
      let ready = '';
      await waitFor(async () => {
        ready = (await scrape()) ?? '';
        // The server's registry (the sync state's gauge among its metrics) replaces the starting one once built.
        return ready.includes('sendpool_redis_ready 1') && ready.includes('sendpool_redis_sync_state{state="ready"} 1');
      }, 'sendpool_redis_ready 1 and the sync ready once Redis is there');
      expect(ready).toContain('sendpool_redis_sync_state{state="ready"} 1');
      expect(ready).toContain('sendpool_queue_depth');
      // /metrics has its own listener: the API's port does not serve it.
      const address = readFileSync(join(dir, 'address'), 'utf8');
      expect((await fetch(`${address}/metrics`)).status).toBe(404);
    } finally {
      await kill(child);
      if (redis) await kill(redis);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

if (REDIS_URL === undefined) describe('the server on Redis, Redis down at start', () => it.skip(SKIP_REASON, () => {}));
