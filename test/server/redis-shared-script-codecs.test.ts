/**
 * The codecs of the Redis backend's scripts for the fleet's shared state (src/server/backends/redis/
 * scripts/: contact ids, idempotency keys, phones and the fence, the blocklist, the shared memory),
 * without Redis: each call is what its header says, and each reply is read into named results
 * (another shape is a RedisScriptError naming the script). Their effects on a real Redis are the
 * integration tests' (redis-fence, idempotency, contact-ids, backend-contract, smpp-receipt-redis).
 */
import { describe, expect, it } from 'vitest';
import { BLOCKLIST_WRITE } from '../../src/server/backends/redis/scripts/blocklist-write.js';
import { CONTACT_IDS_RESERVE } from '../../src/server/backends/redis/scripts/contact-ids-reserve.js';
import { isRedisScriptError } from '../../src/server/backends/redis/scripts/errors.js';
import { IDEMPOTENCY_BEGIN } from '../../src/server/backends/redis/scripts/idempotency-begin.js';
import { IDEMPOTENCY_END } from '../../src/server/backends/redis/scripts/idempotency-end.js';
import { MEMORY_READ } from '../../src/server/backends/redis/scripts/memory-read.js';
import { MEMORY_SCAN } from '../../src/server/backends/redis/scripts/memory-scan.js';
import { PHONES_RELEASE } from '../../src/server/backends/redis/scripts/phones-release.js';
import { PHONES_RESERVE } from '../../src/server/backends/redis/scripts/phones-reserve.js';
import { REQUESTS_VOID } from '../../src/server/backends/redis/scripts/requests-void.js';

/** What a script's Lua sees of one call: keys by index, every value a string. */
function seen(call: { keys: readonly string[]; argv: readonly (string | number)[] }) {
  return { keys: call.keys, argv: call.argv.map(String) };
}

function error(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return isRedisScriptError(e) ? e.message : 'other';
  }
  return 'none';
}

describe('script calls as their headers say', () => {
  it('contact ids: the counter, then the count and the floor', () => {
    expect(seen(CONTACT_IDS_RESERVE.encode({ counter: 'n', count: 100, floor: 7000 }))).toEqual({ keys: ['n'], argv: ['100', '7000'] });
  });

  it('idempotency keys: the record, then fingerprint, request, instance, prefix and the two TTLs; the end: the request', () => {
    const begin = IDEMPOTENCY_BEGIN.encode({ record: 'r', fingerprint: 'fp', requestId: 'q', instance: 'i', prefix: 'p:', ttlMs: 10, voidTtlMs: 20 });
    expect(seen(begin)).toEqual({ keys: ['r'], argv: ['fp', 'q', 'i', 'p:', '10', '20'] });
    expect(seen(IDEMPOTENCY_END.encode({ record: 'r', requestId: 'q' }))).toEqual({ keys: ['r'], argv: ['q'] });
  });

  it("phones: the campaign's hash then the buckets newest first; the request, the ages and TTLs, then the phones", () => {
    const call = PHONES_RESERVE.encode({
      campaignPhones: 'ph',
      sentBuckets: ['b2', 'b1'],
      requestId: 'q',
      orphanMs: 1,
      campaignTtlMs: 2,
      prefix: 'p:',
      instance: 'i',
      bucketTtlMs: 3,
      voidTtlMs: 4,
      phones: ['5511', '5512'],
    });
    expect(seen(call)).toEqual({ keys: ['ph', 'b2', 'b1'], argv: ['q', '1', '2', 'p:', 'i', '3', '4', '5511', '5512'] });
    expect(seen(PHONES_RELEASE.encode({ hashes: ['ph', 'b2'], requestId: 'q', phones: ['5511'] }))).toEqual({ keys: ['ph', 'b2'], argv: ['q', '5511'] });
  });

  it("the fence: each request's commit mark, then the mark's TTL and the requests in the same order", () => {
    expect(seen(REQUESTS_VOID.encode({ prefix: 'p:', requests: ['q1', 'q2'], voidTtlMs: 9 }))).toEqual({ keys: ['p:req:q1', 'p:req:q2'], argv: ['9', 'q1', 'q2'] });
  });

  it('the blocklist: the log and the companies, the hash prefix and the log length, then a triple per change', () => {
    const call = BLOCKLIST_WRITE.encode({
      log: 'log',
      companies: 'cs',
      hashPrefix: 'bl:c',
      logLength: 100,
      changes: [
        { companyId: 3, phone: '5511', entry: { phone: '5511', addedAt: 5, source: 'reply' } },
        { companyId: 3, phone: '5512', entry: null },
      ],
    });
    expect(seen(call)).toEqual({ keys: ['log', 'cs'], argv: ['bl:c', '100', '3', '5511', '{"phone":"5511","addedAt":5,"source":"reply"}', '3', '5512', ''] });
  });

  it('the shared memory: the counter and the generations; a read the generation size then the keys, a scan -1 for the newest', () => {
    const at = { counter: 'm:n', generations: 'm:', generationSize: 50 };
    expect(seen(MEMORY_READ.encode({ ...at, keys: ['m:1', 'c:x'] }))).toEqual({ keys: ['m:n', 'm:'], argv: ['50', 'm:1', 'c:x'] });
    expect(seen(MEMORY_SCAN.encode({ ...at, generation: 'newest', cursor: '0', match: 'c:*', count: 1000 }))).toEqual({ keys: ['m:n', 'm:'], argv: ['50', '-1', '0', 'c:*', '1000'] });
    expect(seen(MEMORY_SCAN.encode({ ...at, generation: 4, cursor: '17', match: 'c:*', count: 1000 })).argv[1]).toBe('4');
  });
});

describe('replies read into named results', () => {
  it('the last id reserved; the idempotency outcomes', () => {
    expect(CONTACT_IDS_RESERVE.decode(7100)).toBe(7100);
    expect(IDEMPOTENCY_BEGIN.decode(['new'])).toEqual({ outcome: 'new' });
    expect(IDEMPOTENCY_BEGIN.decode(['replay', '{"status":202}'])).toEqual({ outcome: 'replay', answer: '{"status":202}' });
    expect(IDEMPOTENCY_BEGIN.decode(['mismatch'])).toEqual({ outcome: 'mismatch' });
    expect(IDEMPOTENCY_BEGIN.decode(['progress', 'q', 'i'])).toEqual({ outcome: 'progress', request: 'q', instance: 'i' });
  });

  it('phones taken, sent, and the requests pending with their instances; the requests voided', () => {
    expect(PHONES_RESERVE.decode([['5511'], [], ['q1', 'i1', 'q2', 'i2']])).toEqual({
      taken: ['5511'],
      sent: [],
      pending: [
        { request: 'q1', instance: 'i1' },
        { request: 'q2', instance: 'i2' },
      ],
    });
    expect(REQUESTS_VOID.decode(['q1'])).toEqual(['q1']);
  });

  it("the memory's values ('' is absent), and a scan's generation, cursor and entries", () => {
    expect(MEMORY_READ.decode(['a', ''])).toEqual(['a', undefined]);
    expect(MEMORY_SCAN.decode([2, '0', ['c:x', '1', 'c:y', '']])).toEqual({
      generation: 2,
      cursor: '0',
      entries: [
        ['c:x', '1'],
        ['c:y', ''],
      ],
    });
  });

  it('another shape is a RedisScriptError naming the script and the part', () => {
    expect(error(() => CONTACT_IDS_RESERVE.decode('7100'))).toBe('Redis script contact-ids-reserve: last id: expected an integer, got the string "7100"');
    expect(error(() => IDEMPOTENCY_BEGIN.decode(['taken']))).toBe('Redis script idempotency-begin: outcome: expected a reply of the script, got the string "taken"');
    expect(error(() => PHONES_RESERVE.decode([[], [], ['q1']]))).toMatch(/^Redis script phones-reserve: pending: expected field and value pairs/);
    expect(error(() => MEMORY_SCAN.decode(['2', '0', []]))).toBe('Redis script memory-scan: generation: expected an integer, got the string "2"');
    expect(error(() => BLOCKLIST_WRITE.decode(null))).toBe('Redis script blocklist-write: reply: expected an integer, got nil');
  });
});
