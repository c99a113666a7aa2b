/**
 * Load bench of the reference server (not a test): `npx tsx bench/server.bench.ts`.
 *
 * The server runs in a child process (so autocannon does not share its event loop) with
 * examples/fleet.json, in-memory state, the simulated channel, no webhook targets, and an intake
 * bound large enough for the run. Two measurements:
 *
 * 1. POST /messenger/messages/ with 1,000 contacts per request, as fast as it goes: contacts
 *    accepted per second (target: at least 100,000).
 * 2. GET /messenger/businesses/ at a fixed 2,000 requests per second: latency p99 (target: under 10 ms).
 *
 * Options (environment): BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const KEY = 'bench-key-0123456789abcdef';
const here = fileURLToPath(import.meta.url);

async function child(): Promise<void> {
  const { runServer } = await import('../src/server/index.js');
  const { address } = await runServer({
    fleetFile: fileURLToPath(new URL('../examples/fleet.json', import.meta.url)),
    port: 0,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    maxQueuedContacts: 50_000_000,
    handleSignals: false,
  });
  process.send?.({ address });
}

function body(): string {
  const contacts = Array.from({ length: 1000 }, (_, i) => ({
    phone_number: `55119${String(80_000_000 + i).padStart(8, '0')}`,
    template_variables: [`Client ${i}`, `R$ ${i},00`],
  }));
  return JSON.stringify({ business_id: 1, template_type_id: 10, campaign_id: 1, contacts });
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
  const server = fork(here, [], { env: { ...process.env, SENDPOOL_BENCH_CHILD: '1' }, stdio: 'inherit' });
  const address = await new Promise<string>((resolve) => server.once('message', (m: { address: string }) => resolve(m.address)));
  try {
    const headers = { 'x-api-key-id': KEY, 'content-type': 'application/json' };
    // Warm-up (JIT, connection pools).
    await autocannon({ url: `${address}/messenger/businesses/`, headers, duration: 2, connections: 4 });

    const get = await autocannon({ url: `${address}/messenger/businesses/`, headers, duration: seconds, connections, overallRate: 2000 });
    const post = await autocannon({ url: `${address}/messenger/messages/`, method: 'POST', headers, body: body(), duration: seconds, connections });
    const accepted = post['2xx'] * 1000;
    const result = {
      machine: `${process.platform} ${process.arch}, Node ${process.version}`,
      post: {
        requests: post.requests.total,
        non2xx: post.non2xx,
        contactsPerSecond: Math.round(accepted / post.duration),
        latencyP50Ms: post.latency.p50,
        latencyP99Ms: post.latency.p99,
      },
      get: {
        requestsPerSecond: Math.round(get.requests.average),
        non2xx: get.non2xx,
        latencyP50Ms: get.latency.p50,
        latencyP99Ms: get.latency.p99,
      },
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(`POST /messenger/messages/ (1,000 contacts/request): ${result.post.contactsPerSecond.toLocaleString('en')} contacts/s accepted (target >= 100,000)`);
    console.log(`GET /messenger/businesses/ at ${result.get.requestsPerSecond} req/s: p99 ${result.get.latencyP99Ms} ms (target < 10 ms)`);
  } finally {
    server.kill('SIGKILL');
  }
}

if (process.env.SENDPOOL_BENCH_CHILD === '1') await child();
else await main();
