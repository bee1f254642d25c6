/** The service's process metrics carry the standard names that stock dashboards query. */
import { describe, expect, it } from 'vitest';
import { DOCTOR } from '../../src/metrics/names.js';
import { createServiceMetrics } from '../../src/service/service-metrics.js';

describe('service metrics: process metrics', () => {
  it('are served under the standard process_* and nodejs_* names, beside the workqueue_doctor_* metrics', async () => {
    const metrics = createServiceMetrics();
    metrics.scrape({ target: 'a/b', durationMs: 12, ok: true });
    const text = await metrics.registry.metrics();
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'process_start_time_seconds',
      'process_open_fds',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(text, name).toMatch(new RegExp(`^${name}(\\{[^}]*\\})? `, 'm'));
    }
    expect(text).not.toMatch(/^workqueue_doctor_(process|nodejs)_/m);
    expect(text).toContain(`# TYPE ${DOCTOR.scrapeDuration} histogram`);
  });

  it('are left out on request', async () => {
    const text = await createServiceMetrics({ processMetrics: false }).registry.metrics();
    expect(text).not.toMatch(/^(process|nodejs)_/m);
  });
});
