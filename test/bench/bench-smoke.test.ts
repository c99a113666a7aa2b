/**
 * Smoke test of the benchmark suite: every benchmark runs for a few iterations on tiny sizes and
 * produces a figure (or a printed skip note for the dispatch slots). No timing assertions.
 */
import { describe, expect, it } from 'vitest';
import { renderChart } from '../../bench/chart.js';
import { runSuite } from '../../bench/suite.js';

describe('bench suite (quick)', () => {
  it('runs every benchmark and checks every target', async () => {
    const report = await runSuite({ quick: true, memoryChild: false });
    const groups = new Set(report.results.map((r) => r.group));
    for (const g of ['assign', 'peers', 'failover', 'memory', 'dispatch'] as const) expect(groups.has(g)).toBe(true);
    for (const r of report.results.filter((x) => x.group === 'assign' || x.group === 'peers' || x.group === 'failover')) {
      expect(r.opsPerSecond, r.id).toBeGreaterThan(0);
    }
    for (const subject of ['ceiling', 'limiter', 'rate-limiter-flexible', 'p-queue']) {
      expect(
        report.results.some((r) => r.subject === subject && r.ratioToSendpool !== undefined),
        subject,
      ).toBe(true);
    }
    for (const r of report.results.filter((x) => x.group === 'dispatch')) expect(r.opsPerSecond, r.id).toBeGreaterThan(0);
    for (const api of ['objects', 'batch'])
      expect(
        report.results.some((r) => r.id.startsWith(`dispatch ${api} `)),
        api,
      ).toBe(true);
    for (const r of report.results.filter((x) => x.group === 'ratio')) expect(r.ratioToSendpool, r.id).toBeGreaterThan(0);
    for (const id of ['limits assign bound', 'limits dispatch bound', 'memory per number alone', 'memory per queued contact alone']) {
      expect(
        report.results.some((r) => r.id.startsWith(id)),
        id,
      ).toBe(true);
    }
    expect(report.targets.length).toBeGreaterThan(5);
    const svg = renderChart(report.results, 'smoke');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('<path');
  });
});
