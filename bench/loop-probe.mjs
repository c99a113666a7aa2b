// Loaded into a bench's server process (`node --import ./bench/loop-probe.mjs`, set by
// bench/intake-flood.bench.ts through NODE_OPTIONS): measures the process's event loop from inside
// and writes the figures to SENDPOOL_LOOP_PROBE (JSON, every 250 ms). SIGUSR2 starts them again.
//
// A 1 ms timer's gaps are the loop's blocks; the CPU time the process used during a gap tells work
// from waiting for a CPU on a busy machine (process.cpuUsage counts every thread of the process, so
// V8's helper threads add to it: an upper bound of the main thread's work). Garbage-collection
// pauses come from perf_hooks' `gc` entries.
//
// SENDPOOL_LOOP_GAPS=FILE appends each gap over 30 ms as a line `startUs durationUs cpuUs` (start on
// the monotonic clock in µs, as a `--cpu-prof` profile's timestamps), so a profile's samples can be
// cut at the gaps to see what held the loop.
import { appendFileSync, writeFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const file = process.env.SENDPOOL_LOOP_PROBE;
const gapLog = process.env.SENDPOOL_LOOP_GAPS;
if (file) {
  const fresh = () => ({ maxGapMs: 0, maxCpuMs: 0, gapsOver20Ms: 0, cpuOver20Ms: 0, cpuOver50Ms: 0, gcMaxMs: 0, gcOver20Ms: 0, gcTotalMs: 0, since: Date.now() });
  let s = fresh();
  let lastTick = performance.now();
  let lastCpu = process.cpuUsage();
  setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    const gap = now - lastTick;
    const used = Math.min(gap, (cpu.user - lastCpu.user + cpu.system - lastCpu.system) / 1000);
    if (gap > s.maxGapMs) s.maxGapMs = gap;
    if (gap > 20) s.gapsOver20Ms++;
    if (gapLog && gap > 30) appendFileSync(gapLog, `${Number(process.hrtime.bigint() / 1000n) - Math.round(gap * 1000)} ${Math.round(gap * 1000)} ${Math.round(used * 1000)}\n`);
    if (gap > 2 && used > s.maxCpuMs) s.maxCpuMs = used;
    if (used > 20) s.cpuOver20Ms++;
    if (used > 50) s.cpuOver50Ms++;
    lastTick = now;
    lastCpu = cpu;
  }, 1).unref();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      s.gcTotalMs += e.duration;
      if (e.duration > 20) s.gcOver20Ms++;
      if (e.duration > s.gcMaxMs) s.gcMaxMs = e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => writeFileSync(file, JSON.stringify(s)), 250).unref();
  process.on('SIGUSR2', () => {
    s = fresh();
  });
}
