/**
 * Contact ids of the server on Redis never repeat, whatever Redis loses: a counter that is not
 * there starts above every id handed out before (src/server/backends/redis/contact-ids.ts). The reset is
 * real: the counter's key is deleted, as an empty Redis after a restart would have it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ContactIdBlocks } from '../../src/server/backends/redis/contact-ids.js';
import { cleanup, connect, describeTargets, testPrefix, type TestClient } from './helpers.js';

describeTargets('contact ids on Redis', (target) => {
  let client: TestClient;
  let prefix: string;
  beforeAll(() => {
    client = connect(target);
    prefix = testPrefix('ids');
  });
  afterAll(async () => {
    await cleanup(client, prefix);
    client.disconnect();
  });

  /** Takes `n` ids one at a time from a new instance's blocks. */
  async function take(blocks: ContactIdBlocks, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      await blocks.ensure(1);
      out.push(blocks.take(1));
    }
    return out;
  }

  it('start above every id handed out before the counter was lost, with every instance restarted', async () => {
    const key = `${prefix}{queue}:contact-id`;
    let now = 1_795_000_000_000;
    const clock = () => now;
    const first = await take(new ContactIdBlocks(client, key, 10, clock), 25);
    const second = await take(new ContactIdBlocks(client, key, 10, clock), 25);
    const before = [...first, ...second];
    expect(new Set(before).size).toBe(50);
    // A new counter starts at the time floor: the first id is above it.
    expect(Math.min(...before)).toBeGreaterThan(now * 1_000);
    // Redis loses its data; a second later every instance starts again.
    await client.del(key);
    now += 1_000;
    const after = await take(new ContactIdBlocks(client, key, 10, clock), 25);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
    expect(after.every(Number.isSafeInteger)).toBe(true);
  });

  it('start above the highest id an instance reserved, even with a clock behind', async () => {
    const key = `${prefix}{queue}:contact-id-2`;
    let now = 1_795_000_000_000;
    const blocks = new ContactIdBlocks(client, key, 10, () => now);
    const before = await take(blocks, 15);
    await client.del(key);
    now -= 60_000; // the clock went back a minute
    const after = await take(blocks, 15);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
  });
});
