import { describe, expect, it } from 'vitest';
import { rule } from '../../src/diagnosis/catalog.js';
import { conditionWith, defaultThresholds } from '../../src/diagnosis/rule.js';
import { signal } from '../../src/diagnosis/signals.js';
import { eq } from '../../src/promql/expr.js';
import { formatDuration, renderPromQL } from '../../src/promql/render.js';

describe('renderPromQL', () => {
  it('renders signals with priority summed away and gauges never rated', () => {
    expect(renderPromQL(signal('depth').expr)).toBe('sum without (priority) (workqueue_depth)');
    // The slope of the whole depth (priorities summed, 0 before a queue's first depth series), not a sum of slopes.
    expect(renderPromQL(signal('depthSlope').expr)).toBe(
      'deriv(((sum without (priority) (workqueue_depth)) or (0 * (sum without (priority) (workqueue_adds_total))))[9m59s999ms:5s])',
    );
    expect(renderPromQL(signal('lowPriorityDepthSlope').expr)).toBe(
      '(sum without (priority) (deriv(workqueue_depth{priority=~"-[0-9]+"}[10m]))) unless (count without (priority) (workqueue_depth{priority!="", priority!~"-?[0-9]+"}))',
    );
    expect(renderPromQL(signal('addRate').expr)).toBe('sum without (priority) (rate(workqueue_adds_total[5m]))');
    expect(renderPromQL(signal('depthMedian').expr)).toBe(
      'sum without (priority) (quantile_over_time(0.5, workqueue_depth[5m]))',
    );
    expect(renderPromQL(signal('workDurationP99').expr)).toBe(
      'histogram_quantile(0.99, sum without (priority) (rate(workqueue_work_duration_seconds_bucket[5m])))',
    );
    expect(renderPromQL(signal('queueLatencyMean').expr)).toBe(
      '(sum without (priority) (rate(workqueue_queue_duration_seconds_sum[5m]))) / (sum without (priority) (rate(workqueue_queue_duration_seconds_count[5m])))',
    );
    // A process that shows REST requests but no writes has a write rate of 0, not "no data".
    expect(renderPromQL(signal('writeRate').expr)).toBe(
      '(sum without (code, method, host) (rate(rest_client_requests_total{method=~"PUT|PATCH|POST"}[5m]))) or ((sum without (code, method, host) (rate(rest_client_requests_total[5m]))) * 0)',
    );
  });

  it('renders joins of controller-level signals onto queues with group_left', () => {
    const saturated = rule('WorkqueueSaturated');
    const text = renderPromQL(conditionWith(saturated, defaultThresholds(saturated)));
    expect(text).toContain(
      '(sum without (priority) (rate(workqueue_work_duration_seconds_sum[15m]))) >= ignoring (name) group_left () (controller_runtime_max_concurrent_reconciles * 0.88)',
    );
  });

  it('adds extra matchers to every selector and can replace the window', () => {
    const text = renderPromQL(signal('queueLatencyMean').expr, {
      extraMatchers: [eq('job', 'ctrl')],
      windowOverride: '$__rate_interval',
    });
    expect(text).toBe(
      '(sum without (priority) (rate(workqueue_queue_duration_seconds_sum{job="ctrl"}[$__rate_interval]))) / (sum without (priority) (rate(workqueue_queue_duration_seconds_count{job="ctrl"}[$__rate_interval])))',
    );
  });

  it('writes rate for MetricsQL scaled by the share of the window the series has existed, deriv over two samples or more, delta and increase from the window alone, and nothing else anew', () => {
    const metricsql = (id: Parameters<typeof signal>[0]) =>
      renderPromQL(signal(id).expr, { dialect: 'metricsql', extraMatchers: [eq('job', 'ctrl')] });
    expect(metricsql('sustainedBusyWorkers')).toBe(
      'sum without (priority) ((rate(workqueue_work_duration_seconds_sum{job="ctrl"}[15m]) * clamp_max((time() - tfirst_over_time(workqueue_work_duration_seconds_sum{job="ctrl"}[30m])) / 900, 1)))',
    );
    // A slope only where the window holds two samples, as Prometheus has it (MetricsQL answers 0 over one).
    expect(metricsql('lowPriorityDepthSlope')).toContain(
      'sum without (priority) ((deriv(workqueue_depth{priority=~"-[0-9]+", job="ctrl"}[10m]) and count_over_time(workqueue_depth{priority=~"-[0-9]+", job="ctrl"}[10m]) > 1))',
    );
    // The same over a subquery's points; its window is the definition's (open at its start: written a millisecond
    // shorter), never a dashboard's.
    const wholeDepth =
      '((sum without (priority) (workqueue_depth{job="ctrl"})) or (0 * (sum without (priority) (workqueue_adds_total{job="ctrl"}))))[9m59s999ms:5s]';
    expect(metricsql('depthSlope')).toBe(`(deriv(${wholeDepth}) and count_over_time(${wholeDepth}) > 1)`);
    expect(renderPromQL(signal('depthSlope').expr, { windowOverride: '$__rate_interval' })).toContain(
      '[9m59s999ms:5s]',
    );
    // A quantile over a subquery's points: its φ first, its window the definition's, its inner rate MetricsQL's.
    expect(renderPromQL(signal('addRateMedian').expr)).toBe(
      'quantile_over_time(0.5, (sum without (priority) (rate(workqueue_adds_total[2m])))[4m59s999ms:1m])',
    );
    expect(metricsql('addRateMedian')).toMatch(
      /^quantile_over_time\(0\.5, \(sum without \(priority\) \(\(rate\(workqueue_adds_total\{job="ctrl"\}\[2m\]\) \* clamp_max/,
    );
    // A change over the window from its own first sample, as Prometheus reads it, not from the sample before it.
    expect(metricsql('depthChangePerSync')).toBe(
      '(sum without (priority) (delta_prometheus(workqueue_depth{job="ctrl"}[30m]))) / (sum without (priority) (increase_prometheus(workqueue_work_duration_seconds_count{job="ctrl"}[30m])))',
    );
    // Gauges and quantiles over time read the same in both languages.
    for (const id of ['depth', 'depthMedian', 'depthMin', 'longestRunningMax'] as const)
      expect(metricsql(id)).toBe(renderPromQL(signal(id).expr, { extraMatchers: [eq('job', 'ctrl')] }));
    // A window replaced by a dashboard variable has no length to scale by: the rate stays as written.
    expect(renderPromQL(signal('addRate').expr, { dialect: 'metricsql', windowOverride: '$__rate_interval' })).toBe(
      'sum without (priority) (rate(workqueue_adds_total[$__rate_interval]))',
    );
  });

  it('formats durations as Prometheus does', () => {
    expect(formatDuration(300_000)).toBe('5m');
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(1_500)).toBe('1s500ms');
    expect(formatDuration(0)).toBe('0s');
  });
});
