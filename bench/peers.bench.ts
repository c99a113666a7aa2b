/**
 * Peers doing the same job in the same run: a token bucket per number, round-robin over the pool,
 * templates round-robin, ample capacity. Each is printed as assignments per second and as a ratio
 * to sendpool's batch path measured alongside it (same pool size, same run).
 *
 * - ceiling: a minimal hand-written loop over typed arrays (bench/peers/ceiling.ts);
 * - limiter: TokenBucket per number, `tryRemoveTokens(1)` (synchronous);
 * - rate-limiter-flexible: RateLimiterMemory, one key per number, `await consume(key)`;
 * - p-queue: one queue per number with an hourly interval cap, one task per assignment.
 */
import { BATCH, SINGLE_CALLS, batchTask, buildEngine, fmt, singleTask, type SuiteOptions } from './assign.bench.js';
import { AMPLE_PER_HOUR } from './fleets.js';
import { fromMeasured, measure, type Measured, type Result } from './harness.js';
import { makeCeiling, type Peer } from './peers/ceiling.js';
import { makeLimiterPeer } from './peers/limiter.js';
import { makePQueuePeer } from './peers/p-queue.js';
import { makeRateLimiterFlexiblePeer } from './peers/rate-limiter-flexible.js';

/** Assignments per iteration for the promise-based peers. */
export const ASYNC_BATCH = 1_000;

function syncPeerTask(peer: Peer, batch = BATCH): () => void {
  const numbers = new Int32Array(batch);
  const templates = new Float64Array(batch);
  let now = 0;
  return () => {
    now += 1;
    const got = peer.fill(now, batch, numbers, templates);
    if (got !== batch) throw new Error(`peer filled ${got} of ${batch}`);
  };
}

export interface PeerOptions extends SuiteOptions {
  /** Pool sizes for the promise-based peers. */
  readonly asyncSizes: readonly number[];
}

export async function peerBenchmarks(options: PeerOptions): Promise<Result[]> {
  const results: Result[] = [];
  const wanted = (id: string): boolean => options.filter === undefined || id.includes(options.filter);
  const log = options.log ?? (() => {});
  const t = 1;
  for (const n of options.sizes) {
    const id = (subject: string): string => `peers n=${n} t=${t} ${subject}`;
    if (!wanted(id(''))) continue;
    const push = (subject: string, path: string, m: Measured, base: number | undefined, note?: string): void => {
      results.push(
        fromMeasured(
          {
            id: id(subject),
            group: 'peers',
            subject,
            path,
            numbers: n,
            templates: t,
            scenario: 'ample',
            ...(base === undefined ? {} : { ratioToSendpool: Number((m.opsPerSecond / base).toFixed(3)) }),
            ...(note === undefined ? {} : { note }),
          },
          m,
        ),
      );
      log(`${id(subject)}: ${fmt(m.opsPerSecond)}/s${base === undefined ? '' : ` (x${(m.opsPerSecond / base).toFixed(2)} of sendpool)`}`);
    };
    const b = buildEngine({ numbers: n, templates: t });
    const sendpool = await measure(id('sendpool'), BATCH, batchTask(b), options.timing);
    push('sendpool', 'batch', sendpool, undefined);
    push('ceiling', 'batch', await measure(id('ceiling'), BATCH, syncPeerTask(makeCeiling(n, t, AMPLE_PER_HOUR)), options.timing), sendpool.opsPerSecond);
    push('limiter', 'batch', await measure(id('limiter'), BATCH, syncPeerTask(makeLimiterPeer(n, t, AMPLE_PER_HOUR)), options.timing), sendpool.opsPerSecond);
    if (options.asyncSizes.includes(n)) {
      const single = await measure(id('sendpool-single'), SINGLE_CALLS, singleTask(b), options.timing);
      push('sendpool-single', 'single', single, sendpool.opsPerSecond);
      const numbers = new Int32Array(ASYNC_BATCH);
      const templates = new Float64Array(ASYNC_BATCH);
      const rlf = makeRateLimiterFlexiblePeer(n, t, AMPLE_PER_HOUR);
      const rlfTask = async (): Promise<void> => {
        const got = await rlf.run(ASYNC_BATCH, numbers, templates);
        if (got !== ASYNC_BATCH) throw new Error(`rate-limiter-flexible made ${got} of ${ASYNC_BATCH}`);
      };
      push('rate-limiter-flexible', 'await consume', await measure(id('rate-limiter-flexible'), ASYNC_BATCH, rlfTask, options.timing, {}, true), sendpool.opsPerSecond, 'one await per assignment');
      const pq = makePQueuePeer(n, t, AMPLE_PER_HOUR);
      const pqTask = async (): Promise<void> => {
        const got = await pq.run(ASYNC_BATCH, numbers, templates);
        if (got !== ASYNC_BATCH) throw new Error(`p-queue made ${got} of ${ASYNC_BATCH}`);
      };
      try {
        push('p-queue', 'add + Promise.all', await measure(id('p-queue'), ASYNC_BATCH, pqTask, options.timing, {}, true), sendpool.opsPerSecond, 'one task per assignment');
      } finally {
        pq.close();
      }
    }
  }
  return results;
}
