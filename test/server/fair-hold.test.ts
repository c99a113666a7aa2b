/**
 * `fairHold`: an instance's bound on the contacts it holds is an even part of the fleet's backlog,
 * in whole chunks, at least one chunk: the live instances' bounds together cover the backlog (no
 * contact is left for nobody), and none exceeds its part by a chunk or more.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { CHUNK_CONTACTS } from '../../src/server/backends/redis/chunks.js';
import { fairHold } from '../../src/server/backends/redis/shared-dispatch.js';

it('covers the backlog between the live instances, each within a chunk of its even part', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 64 }), (backlog, instances) => {
      const hold = fairHold(backlog, instances);
      expect(hold % CHUNK_CONTACTS).toBe(0);
      expect(hold).toBeGreaterThanOrEqual(CHUNK_CONTACTS);
      expect(hold * instances).toBeGreaterThanOrEqual(backlog);
      expect(hold).toBeLessThan(Math.max(backlog / instances, 1) + CHUNK_CONTACTS);
    }),
    { seed: 33, numRuns: 500 },
  );
});

it('reads a backlog or instance count out of range as none and one', () => {
  expect(fairHold(-5, 0)).toBe(CHUNK_CONTACTS);
  expect(fairHold(3000, 3)).toBe(1000);
});
