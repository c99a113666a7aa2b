/**
 * Throughput of the WhatsApp Cloud API channel (not a test): `npx tsx bench/whatsapp.bench.ts`.
 *
 * The fake Graph API runs in a child process (bench/whatsapp-fake.ts) and answers every send with
 * an acceptance; this process is one instance of sendpool. Two measurements:
 *
 * 1. The channel alone: `channel.send` for MESSAGES template messages over 40 numbers, 2,000 at
 *    a time: messages/s.
 * 2. One whole instance: the reference server (engine, dispatch worker, channel, notifier,
 *    metrics) with the same fleet; the contacts are posted to POST /messenger/messages/, 1,000 per
 *    request, and the clock runs from the first request to the last message the platform accepted:
 *    messages/s (goal: at least 20,000 per instance).
 *
 * Both print this process's CPU time per message and the fake's CPU time, to show which side the
 * run is bound by. Options (environment): BENCH_MESSAGES (default 200000).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createEngine } from '../src/engine.js';
import type { OutgoingMessage } from '../src/core/dispatch/types.js';
import { buildServer } from '../src/server/index.js';
import { createWhatsAppChannel } from '../src/server/channels/whatsapp/index.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200_000);
const NUMBERS = 40;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 512);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 128);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 512);
const KEY = 'bench-key-0123456789abcdef';
const SECRETS = { accessToken: 'EAAbench-access-token-000000', appSecret: 'bench-app-secret-0000000', verifyToken: 'bench-verify' };

const fleet = {
  businesses: [
    {
      id: 1,
      name: 'Bench',
      companyId: 1,
      whatsapp: { wabaId: '100000000000001' },
      numbers: Array.from({ length: NUMBERS }, (_, i) => ({
        phone: `55119900${String(i + 1).padStart(5, '0')}`,
        throughputPerHour: 1_000_000_000,
        messagingLimit24h: 1_000_000_000_000,
        whatsapp: { phoneNumberId: `2000000000${String(i + 1).padStart(5, '0')}` },
      })),
      templateTypes: [{ id: 10, name: 'billing', templateIds: [100, 101] }],
    },
  ],
  templates: [
    { id: 100, name: 'billing_a', text: 'Hi {{1}}, your bill is due.', businessIds: [1], whatsapp: { language: 'pt_BR' } },
    { id: 101, name: 'billing_b', text: '{{1}}, your bill is due tomorrow.', businessIds: [1], whatsapp: { language: 'pt_BR' } },
  ],
};

interface Fake {
  readonly url: string;
  cpu(): Promise<{ cpuMs: number; answered: number }>;
  stop(): void;
}

async function startFake(): Promise<Fake> {
  const child = fork(fileURLToPath(new URL('./whatsapp-fake.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return {
    url,
    cpu: () =>
      new Promise((resolve) => {
        child.once('message', (m: { cpuMs: number; answered: number }) => resolve(m));
        child.send({ cpu: true });
      }),
    stop: () => child.kill('SIGKILL'),
  };
}

function message(i: number): OutgoingMessage {
  const number = fleet.businesses[0]!.numbers[i % NUMBERS]!;
  return {
    messageId: `s1.${i}.0`,
    contactId: `s1.${i}`,
    submissionId: 's1',
    index: i,
    businessId: 1,
    typeId: 10,
    campaignId: 1,
    queueId: undefined,
    botId: undefined,
    contact: { phone: `55119${String(80_000_000 + i).padStart(8, '0')}`, variables: [`Client ${i}`] },
    phone: number.phone,
    templateId: i % 2 === 0 ? 100 : 101,
    text: `Hi Client ${i}, your bill is due.`,
    handedOutAt: 0,
    isRetry: false,
    retryIndex: null,
  };
}

const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};

async function channelAlone(fake: Fake): Promise<Record<string, number>> {
  const channel = createWhatsAppChannel({ fleet, ...SECRETS, graphUrl: fake.url, attendanceIdleMs: false, connections: CONNECTIONS });
  // Warm-up: connections and the JIT.
  await Promise.all(Array.from({ length: 5_000 }, (_, i) => channel.send(message(i))));
  const before = await fake.cpu();
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < MESSAGES) {
        const outcome = await channel.send(message(next++));
        if (outcome.status === 'sent') sent++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const ours = cpuMs(cpu);
  const after = await fake.cpu();
  await channel.close?.();
  return { messages: sent, messagesPerSecond: Math.round(sent / seconds), cpuMicrosPerMessage: Math.round((ours * 1000) / sent), ourCpuShare: ours / (seconds * 1000), fakeCpuShare: (after.cpuMs - before.cpuMs) / (seconds * 1000) };
}

async function wholeInstance(fake: Fake): Promise<Record<string, number>> {
  const channel = createWhatsAppChannel({ fleet, ...SECRETS, graphUrl: fake.url, attendanceIdleMs: false, connections: CONNECTIONS });
  const server = buildServer({
    engine: createEngine(fleet),
    channel,
    apiKeys: [{ key: KEY, companyId: 1 }],
    logger: false,
    processMetrics: false,
    // BENCH_METRICS=0: without /metrics (its counters are updated on every send).
    metrics: process.env.BENCH_METRICS !== '0',
    maxQueuedContacts: 50_000_000,
    dispatch: { maxInFlight: IN_FLIGHT, pollLimit: IN_FLIGHT },
  });
  await server.ready();
  const body = (offset: number) =>
    JSON.stringify({
      business_id: 1,
      template_type_id: 10,
      campaign_id: 1,
      contacts: Array.from({ length: 1000 }, (_, i) => ({ phone_number: `55119${String(80_000_000 + offset + i).padStart(8, '0')}`, template_variables: [`Client ${offset + i}`] })),
    });
  const before = await fake.cpu();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let offset = 0; offset < MESSAGES; offset += 1000) {
    const answer = await server.inject({ method: 'POST', url: '/messenger/messages/', headers: { 'x-api-key-id': KEY, 'content-type': 'application/json' }, payload: body(offset) });
    if (answer.statusCode !== 202) throw new Error(`POST /messenger/messages/ answered ${answer.statusCode}: ${answer.body}`);
  }
  while (server.sendpool.engine.stats().sent < MESSAGES) await new Promise((r) => setTimeout(r, 5));
  const seconds = (performance.now() - started) / 1000;
  const ours = cpuMs(cpu);
  const after = await fake.cpu();
  const stats = server.sendpool.engine.stats();
  await server.close();
  return { messages: stats.sent, failed: stats.failed, messagesPerSecond: Math.round(stats.sent / seconds), cpuMicrosPerMessage: Math.round((ours * 1000) / stats.sent), ourCpuShare: ours / (seconds * 1000), fakeCpuShare: (after.cpuMs - before.cpuMs) / (seconds * 1000) };
}

const fake = await startFake();
try {
  // BENCH_ONLY=channel or BENCH_ONLY=instance runs one of the two (for a profile).
  const only = process.env.BENCH_ONLY;
  const alone: Record<string, number> = only === 'instance' ? {} : await channelAlone(fake);
  const instance: Record<string, number> = only === 'channel' ? {} : await wholeInstance(fake);
  const result = { machine: `${process.platform} ${process.arch}, Node ${process.version}`, messages: MESSAGES, numbers: NUMBERS, channelAlone: alone, wholeInstance: instance };
  console.log(JSON.stringify(result, null, 2));
  const pct = (x: number | undefined) => `${Math.round((x ?? 0) * 100)}%`;
  if (alone.messagesPerSecond !== undefined) console.log(`channel alone: ${alone.messagesPerSecond.toLocaleString('en')} messages/s (this process ${pct(alone.ourCpuShare)} of a core, the fake ${pct(alone.fakeCpuShare)})`);
  if (instance.messagesPerSecond !== undefined) console.log(`whole instance: ${instance.messagesPerSecond.toLocaleString('en')} messages/s (goal >= 20,000; this process ${pct(instance.ourCpuShare)} of a core, the fake ${pct(instance.fakeCpuShare)})`);
} finally {
  fake.stop();
}
