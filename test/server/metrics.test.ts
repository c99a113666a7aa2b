/** GET /metrics: every name in the sendpool_ namespace, none stuttering (sendpool_process_process_…). */
import { describe, expect, it } from 'vitest';
import { api, startServer } from './helpers.js';

/** Metric names of a Prometheus text exposition (from its TYPE lines). */
function metricNames(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
}

describe('metric names', () => {
  it('are all sendpool_…, with no word segment doubled, process and Node.js metrics included', async () => {
    const s = await startServer({ processMetrics: true });
    try {
      const res = await api(s.url, '/metrics', { key: null });
      expect(res.status).toBe(200);
      const names = metricNames(res.text);
      expect(names).toEqual(
        expect.arrayContaining([
          'sendpool_process_cpu_seconds_total',
          'sendpool_process_resident_memory_bytes',
          'sendpool_nodejs_eventloop_lag_seconds',
          'sendpool_queue_depth',
          'sendpool_http_request_duration_seconds',
        ]),
      );
      for (const name of names) {
        expect(name.startsWith('sendpool_'), name).toBe(true);
        const segments = name.split('_');
        const doubled = segments.filter((segment, i) => i > 0 && segment === segments[i - 1]);
        expect(doubled, name).toEqual([]);
      }
    } finally {
      await s.server.close();
    }
  });
});
