/**
 * Load bench of the reference server (not a test): `npx tsx bench/server.bench.ts`.
 *
 * The server runs in a child process (so autocannon does not share its event loop) with
 * examples/fleet.json, in-memory state, the simulated channel sending, and an intake bound large
 * enough for the run. Measurements:
 *
 * 1. GET /messenger/businesses/ at a fixed 2,000 requests per second: latency p99 (target: under 10 ms).
 * 2. POST /messenger/messages/ with 1,000 contacts per request, as fast as it goes, no webhook
 *    configured: contacts accepted per second, read from each 202's `accepted` (a request is a new
 *    campaign, so no phone is refused as sent before in it).
 * 3. The same with an HSM webhook configured (`url_hsm_callback`, a receiver in a third process
 *    answering 204): every accepted contact makes its ENQUEUED notification, delivered while the
 *    intake goes on (target of both: at least 200,000 contacts/s).
 * 4. GET /messenger/businesses/ at 2,000 requests per second while another client posts 5,000
 *    contacts/s (5 requests of 1,000 a second), without a webhook (`get-while-posting`) and with an
 *    HSM webhook (`get-while-posting-hsm`): the GET's p99 (target: under 10 ms).
 *
 * Options (environment): BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10), BENCH_PROFILE
 * (a directory: the server runs under `--cpu-prof` and writes its profile there), BENCH_SERVER_ARGS
 * (more node flags for the server, space-separated),
 * BENCH_MODES (default `get,post,post-hsm,get-while-posting,get-while-posting-hsm`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const KEY = 'bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);

async function serverChild(): Promise<void> {
  const { runServer } = await import('../src/server/index.js');
  const { address } = await runServer({
    fleetFile: fileURLToPath(new URL('../examples/fleet.json', import.meta.url)),
    port: 0,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    maxQueuedContacts: 50_000_000,
    // The run's notifications wait in the outbox while the receiver takes them: not a bound here.
    maxPendingWebhooks: 50_000_000,
    allowPrivateWebhookTargets: true,
    handleSignals: false,
    metrics: false,
  });
  process.on('SIGTERM', () => process.exit(0));
  // The server's event loop delay, asked for by the parent after a mode (is a slow answer the loop's?).
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  process.on('message', (m: unknown) => {
    if (m === 'loop-delay') {
      process.send?.({ loopDelayMs: { p50: delay.percentile(50) / 1e6, p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 } });
      delay.reset();
    }
  });
  process.send?.({ address });
}

/** The webhook receiver: 204 to everything, counting what it took. */
async function receiverChild(): Promise<void> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  process.on('message', () => process.send?.({ received }));
  process.send?.({ address: `http://127.0.0.1:${port}` });
}

function start(role: string): Promise<{ child: ChildProcess; address: string }> {
  // BENCH_PROFILE=DIR: the server runs under --cpu-prof, its profile written to DIR when it exits.
  // BENCH_SERVER_ARGS: more node flags for the server (`--trace-gc`, `--max-semi-space-size=64`).
  const profile =
    role === 'server' ? [...(process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : []), ...(process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean)] : [];
  const child = fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_CHILD: role }, stdio: 'inherit', execArgv: [...process.execArgv, ...profile] });
  return new Promise((resolve) => child.once('message', (m: { address: string }) => resolve({ child, address: m.address })));
}

/** Campaigns posted so far by this process: each request is a new campaign, so no phone is refused as a duplicate. */
let campaign = 0;

/** A request body per campaign: the template built once, the campaign id written in per request. */
function bodies(): (campaign: number) => string {
  const contacts = Array.from({ length: 1000 }, (_, i) => ({
    phone_number: `55119${String(80_000_000 + i).padStart(8, '0')}`,
    template_variables: [`Client ${i}`, `R$ ${i},00`],
  }));
  const [head, tail] = JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 999_999_999, contacts }).split('999999999') as [string, string];
  return (campaign) => `${head}${campaign}${tail}`;
}

async function post(
  address: string,
  seconds: number,
  connections: number,
  requestsPerSecond?: number,
): Promise<{ contactsPerSecond: number; requests: number; non2xx: number; p50: number; p99: number }> {
  const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };
  const body = bodies();
  let accepted = 0;
  const result = await autocannon({
    url: `${address}/messenger/messages/`,
    headers,
    duration: seconds,
    connections,
    ...(requestsPerSecond === undefined ? {} : { overallRate: requestsPerSecond }),
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({ ...req, body: body(++campaign) }),
        onResponse: (status, text) => {
          const m = status === 202 ? /"accepted":(\d+)/.exec(text) : null;
          if (m) accepted += Number(m[1]);
        },
      },
    ],
  });
  return { contactsPerSecond: Math.round(accepted / result.duration), requests: result.requests.total, non2xx: result.non2xx, p50: result.latency.p50, p99: result.latency.p99 };
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const modes = (process.env.BENCH_MODES ?? 'get,post,post-hsm,get-while-posting,get-while-posting-hsm').split(',');
  const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };
  const out: Record<string, unknown> = { machine: `${process.platform} ${process.arch}, Node ${process.version}` };
  for (const mode of modes) {
    // A fresh server per mode: what one mode queued does not weigh on the next.
    const server = await start('server');
    const receiver = mode.endsWith('-hsm') ? await start('receiver') : undefined;
    try {
      await autocannon({ url: `${server.address}/messenger/businesses/`, headers, duration: 2, connections: 4 });
      const load = loadavg()[0]!.toFixed(2);
      if (mode === 'get') {
        const get = await autocannon({ url: `${server.address}/messenger/businesses/`, headers, duration: seconds, connections, overallRate: 2000 });
        out[mode] = { load, requestsPerSecond: Math.round(get.requests.average), non2xx: get.non2xx, latencyP50Ms: get.latency.p50, latencyP99Ms: get.latency.p99 };
        console.log(`GET /messenger/businesses/ at ${Math.round(get.requests.average)} req/s: p99 ${get.latency.p99} ms (target < 10 ms), load ${load}`);
        continue;
      }
      if (receiver) {
        const res = await fetch(`${server.address}/messenger/config/`, { method: 'POST', headers, body: JSON.stringify({ url_hsm_callback: `${receiver.address}/hsm` }) });
        if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
      }
      if (mode.startsWith('get-while-posting')) {
        // Steady state: the posting path warmed up too (its first requests compile and load what it
        // needs, a stall no later request sees), then the loop delay measured from here.
        await Promise.all([postFromChild(server.address, 2, 2, 5, 1_000_000), autocannon({ url: `${server.address}/messenger/businesses/`, headers, duration: 2, connections, overallRate: 2000 })]);
        await loopDelay(server.child);
        // One client posting 5,000 contacts/s (two connections, so a slow answer does not lower the rate).
        const posting = postFromChild(server.address, seconds, 2, 5, 2_000_000);
        const get = await autocannon({ url: `${server.address}/messenger/businesses/`, headers, duration: seconds, connections, overallRate: 2000 });
        const p = await posting;
        const loop = await loopDelay(server.child);
        console.log(`  the server's event loop delay meanwhile: p50 ${loop.p50.toFixed(1)} ms, p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms`);
        out[mode] = {
          serverLoopDelayMs: loop,
          load,
          requestsPerSecond: Math.round(get.requests.average),
          non2xx: get.non2xx,
          latencyP50Ms: get.latency.p50,
          latencyP99Ms: get.latency.p99,
          posted: p,
        };
        console.log(
          `GET /messenger/businesses/ at ${Math.round(get.requests.average)} req/s while another client posts ${p.contactsPerSecond.toLocaleString('en')} contacts/s${receiver ? ' with an HSM webhook' : ''}: p99 ${get.latency.p99} ms (target < 10 ms), p50 ${get.latency.p50} ms; the posts' p99 ${p.p99} ms, load ${load}`,
        );
        continue;
      }
      const r = await post(server.address, seconds, connections);
      let delivered: number | undefined;
      let drain: number | undefined;
      if (receiver) {
        delivered = await received(receiver.child);
        // Once the posting stops, the backlog drains: notifications a second over the next seconds.
        await new Promise((resolve) => setTimeout(resolve, DRAIN_SECONDS * 1000));
        drain = Math.round(((await received(receiver.child)) - delivered) / DRAIN_SECONDS);
      }
      out[mode] = { load, ...r, ...(delivered !== undefined ? { notificationsDelivered: delivered, drainPerSecond: drain } : {}) };
      console.log(
        `POST /messenger/messages/ (1,000 contacts/request)${receiver ? ' with an HSM webhook' : ''}: ${r.contactsPerSecond.toLocaleString('en')} contacts/s accepted (target >= 200,000), p50 ${r.p50} ms, p99 ${r.p99} ms, ${r.non2xx} not 2xx${delivered !== undefined ? `, ${delivered.toLocaleString('en')} notifications delivered meanwhile, then ${drain!.toLocaleString('en')}/s over ${DRAIN_SECONDS} s once the posting stopped` : ''}, load ${load}`,
      );
    } finally {
      // SIGTERM when profiling, so the profile is written on the way out.
      server.child.kill(process.env.BENCH_PROFILE ? 'SIGTERM' : 'SIGKILL');
      receiver?.child.kill('SIGKILL');
    }
  }
  console.log(JSON.stringify(out, null, 2));
}

/** Seconds the receiver is watched after the posting of `post-hsm` stops (the backlog's drain). */
const DRAIN_SECONDS = 5;

/** Notifications the receiver took so far. */
function received(receiver: ChildProcess): Promise<number> {
  const answer = new Promise<number>((resolve) => receiver.once('message', (m: { received: number }) => resolve(m.received)));
  receiver.send('count');
  return answer;
}

/** The posting client of the get-while-posting modes, in a process of its own so it does not delay the GET client's reading. */
function posterChild(): void {
  process.once('message', (m: { address: string; seconds: number; connections: number; rate: number; firstCampaign: number }) => {
    campaign = m.firstCampaign;
    void post(m.address, m.seconds, m.connections, m.rate).then((r) => process.send?.(r));
  });
  process.send?.({ address: '' });
}

interface LoopDelay {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** The server's event loop delay since the last call (in ms), and a fresh count from now. */
function loopDelay(server: ChildProcess): Promise<LoopDelay> {
  const answer = new Promise<LoopDelay>((resolve) => server.once('message', (m: { loopDelayMs: LoopDelay }) => resolve(m.loopDelayMs)));
  server.send('loop-delay');
  return answer;
}

/** Posts from a poster child: `rate` requests of 1,000 contacts a second. */
async function postFromChild(address: string, seconds: number, connections: number, rate: number, firstCampaign: number): Promise<Awaited<ReturnType<typeof post>>> {
  const poster = await start('poster');
  try {
    const done = new Promise<Awaited<ReturnType<typeof post>>>((resolve) => poster.child.once('message', resolve));
    poster.child.send({ address, seconds, connections, rate, firstCampaign });
    return await done;
  } finally {
    poster.child.kill('SIGKILL');
  }
}

const role = process.env.SENDPOOL_BENCH_CHILD;
if (role === 'server') await serverChild();
else if (role === 'poster') posterChild();
else if (role === 'receiver') await receiverChild();
else await main();
