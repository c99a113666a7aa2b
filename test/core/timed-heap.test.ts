import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimedHeap } from '../../src/core/timed-heap.js';

describe('TimedHeap', () => {
  it('pops in (time, id) order whatever the pushes and pops, like a sorted list', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.tuple(fc.constant('push' as const), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 20 }), fc.nat(9)), fc.constant(['pop' as const] as const)), {
          maxLength: 200,
        }),
        (ops) => {
          const heap = new TimedHeap();
          const reference: [number, number, number][] = [];
          for (const op of ops) {
            if (op[0] === 'push') {
              heap.push(op[1], op[2], op[3]);
              reference.push([op[1], op[2], op[3]]);
              reference.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
            } else {
              const top = reference[0];
              if (top) {
                expect([heap.topAt(), heap.topId()]).toEqual([top[0], top[1]]);
                // Equal (time, id) entries may come in either order: the heap's generation must be
                // one of theirs, and that one leaves the reference.
                const at = reference.findIndex((r) => r[0] === top[0] && r[1] === top[1] && r[2] === heap.topGen());
                expect(at).toBeGreaterThanOrEqual(0);
                reference.splice(at, 1);
              }
              heap.pop();
            }
            expect(heap.size).toBe(reference.length);
            expect(heap.topAt()).toBe(reference[0]?.[0] ?? Infinity);
          }
          expect(
            heap
              .entries()
              .map((e) => e[0])
              .sort((a, b) => a - b),
          ).toEqual(reference.map((r) => r[0]));
        },
      ),
    );
  });
});
