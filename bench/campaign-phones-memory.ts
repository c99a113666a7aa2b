/**
 * Memory per phone a campaign remembers (a phone is sent once per campaign), against a Set of
 * strings in the same run: `node --expose-gc --import tsx bench/campaign-phones-memory.ts`.
 */
import { CampaignPhones } from '../src/server/campaign-phones.js';
const gc = (globalThis as { gc?: () => void }).gc!;
for (const n of [100_000, 1_000_000, 3_000_000]) {
  gc();
  const before = process.memoryUsage();
  const p = new CampaignPhones();
  const batch: string[] = [];
  for (let i = 0; i < n; i++) {
    batch.push(`5511${String(900000000 + i * 7)}`);
    if (batch.length === 1000) {
      p.remember(1, 1, batch);
      batch.length = 0;
    }
  }
  p.remember(1, 1, batch);
  gc();
  const after = process.memoryUsage();
  const heap = after.heapUsed + after.arrayBuffers - before.heapUsed - before.arrayBuffers;
  // Set<string> peer
  gc();
  const b2 = process.memoryUsage();
  const set = new Set<string>();
  for (let i = 0; i < n; i++) set.add(`5511${String(900000000 + i * 7)}`);
  gc();
  const a2 = process.memoryUsage();
  console.log(n, 'CampaignPhones B/phone', (heap / n).toFixed(1), 'table', p.bytes / n, '| Set<string> B/phone', ((a2.heapUsed - b2.heapUsed) / n).toFixed(1), set.size === n, p.size === n);
}
