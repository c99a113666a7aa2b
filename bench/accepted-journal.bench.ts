/**
 * What the accepted journal (src/server/backends/redis/accepted-journal.ts) costs intake on Redis with a
 * state directory (not a test):
 *
 *     npx tsx bench/accepted-journal.bench.ts
 *
 * A step of the server on Redis writes its chunks (100 contacts each, as chunks.ts cuts them) to
 * Redis as their JSON; with a state directory the same step appends them to the journal before its
 * 202s are answered, and marks them done later. This measures this process's CPU time per 1,000
 * contacts: the JSON of the chunks the step already makes (what intake pays without the journal),
 * the journal's append of them as intake makes it (the step's JSON reused: a write to the page
 * cache, no fsync), the same append making the JSON itself, and the done records with the
 * compactions they cause. Steps of BENCH_CHUNKS (10) chunks; BENCH_CONTACTS
 * (200,000) contacts per run; BENCH_RUNS (5) runs, medians with [min..max].
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AcceptedJournal, type JournalEntry } from '../src/server/backends/redis/accepted-journal.js';
import type { ChunkBody } from '../src/server/backends/redis/queue.js';

/** This process's CPU time (user + system, ms): on a shared machine, less moved by the neighbours than the wall clock. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

const CHUNKS = Number(process.env['BENCH_CHUNKS'] ?? 10);
const CONTACTS = Number(process.env['BENCH_CONTACTS'] ?? 200_000);
const RUNS = Number(process.env['BENCH_RUNS'] ?? 5);

/** A chunk as intake makes it: 100 contacts with two template variables and a `data` reference. */
function chunk(first: number): ChunkBody {
  return {
    requestId: `0b3e6a52-7f0e-4c1e-9d2a-${String(first).padStart(12, '0')}`,
    companyId: 1,
    businessId: 1,
    typeId: 10,
    campaignId: 1,
    maxRetries: 2,
    retryInterval: 600_000,
    contacts: Array.from({ length: 100 }, (_, i) => ({
      id: first + i,
      costCenterId: 0,
      phone: `55219${String(10_000_000 + first + i)}`,
      variables: ['Maria', 'R$ 120,00'],
      data: { ref: `order-${first + i}` },
    })),
  };
}

function median(xs: number[]): string {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[Math.floor(s.length / 2)]!.toFixed(1)} [${s[0]!.toFixed(1)}..${s[s.length - 1]!.toFixed(1)}]`;
}

const dir = mkdtempSync(join(tmpdir(), 'sendpool-journal-bench-'));
const floor: number[] = [];
const append: number[] = [];
const appendJson: number[] = [];
const done: number[] = [];
try {
  for (let run = 0; run < RUNS; run++) {
    const { journal } = AcceptedJournal.open(join(dir, `run-${run}.accepted.jsonl`));
    const steps: JournalEntry[][] = [];
    for (let c = 0; c < CONTACTS; c += CHUNKS * 100)
      steps.push(Array.from({ length: CHUNKS }, (_, k) => ({ stream: 'sendpool:{queue}:c:1:1', entryId: `${1_700_000_000_000 + c + k}-0`, epoch: 'e', body: chunk(c + k * 100) })));
    let t = cpuMs();
    const json = steps.map((step) => step.map((e) => JSON.stringify(e.body)));
    floor.push(((cpuMs() - t) / CONTACTS) * 1000);
    const bytes = json.flat().reduce((a, j) => a + j.length, 0);
    t = cpuMs();
    steps.forEach((step, i) => journal.add(step.map((e, k) => ({ ...e, json: json[i]![k]! }))));
    append.push(((cpuMs() - t) / CONTACTS) * 1000);
    const other = AcceptedJournal.open(join(dir, `run-${run}-b.accepted.jsonl`)).journal;
    t = cpuMs();
    for (const step of steps) other.add(step);
    appendJson.push(((cpuMs() - t) / CONTACTS) * 1000);
    // Done in the order they were added, a step at a time, a few steps behind (what a drain does).
    t = cpuMs();
    for (const step of steps) journal.done(step);
    done.push(((cpuMs() - t) / CONTACTS) * 1000);
    if (run === 0) console.log(`${CONTACTS} contacts in steps of ${CHUNKS} chunks of 100; chunk JSON ${Math.round(bytes / (CONTACTS / 100))} bytes`);
  }
  console.log(
    `CPU ms per 1,000 contacts (median [min..max] of ${RUNS} runs), load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}:`,
  );
  console.log(`  the chunks' JSON a step already makes: ${median(floor)}`);
  console.log(`  journal append, the step's JSON reused:  ${median(append)}`);
  console.log(`  journal append making its JSON:         ${median(appendJson)}`);
  console.log(`  journal done records (+ compactions):   ${median(done)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
