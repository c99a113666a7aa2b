/**
 * The slice runner gives the event loop a turn between slices and shares the turns between pieces
 * of work. Asserted by conditions only: each unit below can finish only once something else has
 * run, so a runner that did not yield would never finish (the test's bound would end it).
 */
import { describe, expect, it } from 'vitest';
import { runInSlices } from '../../src/server/slices.js';

describe('runInSlices', () => {
  it('lets a callback queued after a piece of work started run before the work finishes', async () => {
    let other = false;
    let units = 0;
    const work = runInSlices(() => {
      units++;
      return other;
    });
    setImmediate(() => {
      other = true;
    });
    await work;
    expect(other).toBe(true);
    expect(units).toBeGreaterThan(1);
  });

  it('shares the turns between pieces of work: each moves while the other is unfinished', async () => {
    const log: string[] = [];
    let aDone = false;
    const a = runInSlices(() => {
      log.push('a');
      // a finishes only once b has had a slice.
      aDone = log.includes('b');
      return aDone;
    });
    const b = runInSlices(() => {
      log.push('b');
      return aDone;
    });
    await Promise.all([a, b]);
    expect(log[0]).toBe('a');
    expect(log.indexOf('b')).toBeLessThan(log.lastIndexOf('a'));
  });

  it('ends a piece of work that throws with its error, and the others go on', async () => {
    let n = 0;
    const failing = runInSlices(() => {
      throw new Error('broken unit');
    });
    const other = runInSlices(() => ++n === 3);
    await expect(failing).rejects.toThrow('broken unit');
    await other;
    expect(n).toBe(3);
  });
});
