/**
 * One sendpool instance for the multi-instance tests, run as a child process
 * (`node --import tsx test/redis/instance-worker.ts`): an engine on a RedisStore, its share of the
 * contacts, and a host loop that "sends" each message by appending `phone,time,contact` to its log
 * file (written before the send counts, so a SIGKILL loses nothing that went out).
 *
 * Time is simulated: clock = (wall - start) × scale, the same for every instance, and the lease
 * script is given that clock's time (timeSource 'clock'), so an hour of windows runs in seconds.
 *
 * The parent drives it over IPC, so no test depends on how fast the processes start or run:
 * the worker says `ready` once connected, starts sending at `{ type: 'start', startWall }` (the
 * same start for every instance), reports `progress` (sends, the time of the last one, Redis
 * events) as it goes, and stops at `{ type: 'stop' }`, when all its contacts went, or at `simEnd`.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { createEngine } from '../../src/engine.js';
import { createCapacityWaker, RedisStore, type RedisCapacityEvent } from '../../src/redis/index.js';
import { connectSpec } from './targets.js';

export interface WorkerConfig {
  /** The Redis target (test/redis/targets.ts): `redis://…` or `redis-cluster://…`. */
  readonly url: string;
  readonly prefix: string;
  readonly instance: number;
  readonly instances: number;
  readonly fleet: unknown;
  readonly firstContact: number;
  readonly contacts: number;
  readonly scale: number;
  /** Simulated time at which the worker stops by itself (a bound; tests usually stop it first). */
  readonly simEnd: number;
  readonly logFile: string;
  /** RedisStore's `fairShares` (the fair-shares figure runs both). @default true */
  readonly fairShares?: boolean;
  /** RedisStore's `fairGraceMs`, simulated ms. @default 60_000 */
  readonly fairGraceMs?: number;
}

/** Messages from the worker. */
export type WorkerMessage = { readonly type: 'ready' } | { readonly type: 'progress'; readonly sent: number; readonly lastAt: number; readonly events: Readonly<Record<string, number>> };

/** Messages to the worker. */
export type ParentMessage = { readonly type: 'start'; readonly startWall: number } | { readonly type: 'stop' };

const config = JSON.parse(process.env['SENDPOOL_WORKER'] ?? '{}') as WorkerConfig;
const tell = (m: WorkerMessage): void => {
  if (process.connected) process.send!(m);
};

let startWall = Infinity;
let stopRequested = false;
let started!: () => void;
const startSignal = new Promise<void>((r) => (started = r));
const waker = createCapacityWaker();
process.on('message', (m: ParentMessage) => {
  if (m.type === 'start') {
    startWall = m.startWall;
    started();
  } else if (m.type === 'stop') {
    stopRequested = true;
    started();
    waker.onCapacity([]); // wake the loop's sleep
  }
});

const clock = { now: () => Math.max(0, Math.floor((Date.now() - startWall) * config.scale)) };
const client = connectSpec(config.url, { maxRetriesPerRequest: 1, retryStrategy: () => 20, enableOfflineQueue: false });
const counts: Record<string, number> = {};
let eventsChanged = false;
const store = new RedisStore({
  client,
  prefix: config.prefix,
  clock,
  timeSource: 'clock',
  clockRate: config.scale,
  instanceId: `w${config.instance}`,
  instances: () => config.instances,
  leaseTtlMs: 60_000,
  downRetryMs: 2_000,
  callTimeoutMs: 500,
  // Simulated ms: at 300x real time, 200 ms of a starting process or a late timer are 60 s.
  fairGraceMs: config.fairGraceMs ?? 60_000,
  fairShares: config.fairShares ?? true,
  epochCheckMs: 60_000,
  onCapacity: waker.onCapacity,
  onEvent: (e: RedisCapacityEvent) => {
    counts[e.type] = (counts[e.type] ?? 0) + 1;
    if (e.type === 'redis-down' || e.type === 'redis-up' || e.type === 'redis-reset') eventsChanged = true;
  },
});
await new Promise<void>((resolve) => (client.status === 'ready' ? resolve() : client.once('ready', () => resolve())));
tell({ type: 'ready' });
await startSignal;
if (Date.now() < startWall) await new Promise((r) => setTimeout(r, startWall - Date.now()));
const engine = createEngine(config.fleet, { clock, store });
waker.attach(engine);
const contacts = Array.from({ length: config.contacts }, (_, k) => ({ phone: `55219${String(config.firstContact + k).padStart(8, '0')}`, variables: ['x'] }));
engine.submit({ businessId: 1, typeId: 10, contacts });
const fd = openSync(config.logFile, 'a');
let sent = 0;
let lastAt = -1;
while (!stopRequested) {
  const now = clock.now();
  if (now >= config.simEnd || sent === config.contacts) break;
  const ready = engine.poll({ limit: 2000 });
  if (ready.length > 0) {
    let lines = '';
    for (const m of ready) lines += `${m.phone},${now},${m.contact.phone}\n`;
    writeSync(fd, lines);
    for (const m of ready) engine.report(m.messageId, { status: 'sent' });
    sent += ready.length;
    lastAt = now;
  }
  if (ready.length > 0 || eventsChanged) {
    eventsChanged = false;
    tell({ type: 'progress', sent, lastAt, events: counts });
  }
  const wake = engine.nextWakeAt();
  const waitSim = wake === null ? 1_000 : Math.max(0, wake - clock.now());
  await waker.sleep(Math.min(waitSim / config.scale, 10));
}
closeSync(fd);
const returned = await store.close();
process.stdout.write(`${JSON.stringify({ instance: config.instance, sent, returned, events: counts, metrics: store.metrics() })}\n`);
client.disconnect();
process.removeAllListeners('message');
process.disconnect?.();
