/**
 * Parse + map of a 10,000-contact POST /messenger/messages/ body (the default contacts limit), and
 * of a 10,000-item SMS batch. Target: under 20 ms per request on the reference machine.
 * Run: `npx tsx bench/contract.bench.ts`.
 */
import { Bench } from 'tinybench';
import { parseSendRequest, parseSmsBatch, toSmsSends, toSubmission } from '../src/contract/index.js';

const CONTACTS = 10_000;
const lookup = { templateType: () => ({ placeholders: 2 }) };
/** Phones and documents as the spec writes them: digits only (the common case). */
const body = {
  business_id: 1,
  template_type_id: 10,
  campaign_id: 7,
  queue_id: 3,
  max_retries: 2,
  retry_interval: 15,
  contacts: Array.from({ length: CONTACTS }, (_, i) => ({
    phone_number: `55119${10_000_000 + i}`,
    document: '52998224725',
    contract: `C-${i}`,
    template_variables: [`Customer ${i}`, `R$ ${i},00`],
    data: { order: String(i), channel: 'bench' },
  })),
};
const text = JSON.stringify(body);
/** The same with human formatting (`+55 11 91000-0000`, `529.982.247-25`) to strip. */
const formatted = {
  ...body,
  contacts: body.contacts.map((c) => ({
    ...c,
    phone_number: `+55 11 ${c.phone_number.slice(4, 9)}-${c.phone_number.slice(9)}`,
    document: '529.982.247-25',
  })),
};
const sms = Array.from({ length: CONTACTS }, (_, i) => ({
  message: i % 2 === 0 ? `Your code is ${i}` : `Seu código é ${i}`,
  phone: `55119${String(10_000_000 + i)}`,
  url_callback_dlr: 'https://hooks.example.com/dlr',
  reference: `r-${i}`,
}));

function sendOnce(value: unknown): number {
  const r = parseSendRequest(value, { templateTypes: lookup });
  if (!r.ok || r.value.accepted.length !== CONTACTS) throw new Error('bench body refused');
  return toSubmission(r.value).contacts.length;
}

const bench = new Bench({ time: 2000, warmup: true });
bench
  .add('send: parse + map, 10,000 contacts (decoded body)', () => {
    sendOnce(body);
  })
  .add('send: parse + map, 10,000 formatted contacts', () => {
    sendOnce(formatted);
  })
  .add('send: JSON.parse + parse + map, 10,000 contacts', () => {
    sendOnce(JSON.parse(text));
  })
  .add('sms: parse + map, 10,000 items', () => {
    const r = parseSmsBatch(sms);
    if (!r.ok) throw new Error('bench batch refused');
    toSmsSends(r.value);
  });

await bench.run();
const rows = bench.tasks.map((t) => {
  const r = t.result as { latency?: { mean: number; p99?: number; samplesCount?: number } } | undefined;
  return { task: t.name, 'mean (ms)': r?.latency?.mean.toFixed(2), 'p99 (ms)': r?.latency?.p99?.toFixed(2), samples: r?.latency?.samplesCount };
});
console.table(rows);
const target = rows[0];
console.log(`parse + map of a 10,000-contact request: ${target?.['mean (ms)']} ms mean (target: under 20 ms)`);
