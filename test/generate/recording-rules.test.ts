/**
 * The recording rules behind the alerts and the fleet scope of `generate --config`: recorded series named in
 * Prometheus' `level:metric:operations` convention, unique and stable; alert expressions shorter than 300
 * characters, with and without a selector and placement labels; the selector in every raw selector of the
 * rule file; the cluster and namespace labels kept by the alerts, grouped by in Alertmanager and offered as
 * dashboard variables; and the config file's checks.
 */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ConfigError } from '../../src/config/config-error.js';
import { SIGNALS } from '../../src/diagnosis/signals.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { parseGenerateConfig } from '../../src/generate/generate-config.js';
import type { QueryScope } from '../../src/generate/query-scope.js';
import { EXPRESSION_LIMIT, RECORDING_NAME_PATTERN, recordedName } from '../../src/generate/recording-rules.js';
import { metricsOf } from '../../src/promql/expr.js';
import { parseSelector } from '../../src/promql/selector.js';
import { tempDir } from '../simulate/helpers.js';
import { requireTool } from '../support/prometheus.js';
import {
  alertRulesOf,
  dashboardExpressions,
  dashboardsOf,
  expandRecordings,
  recordingRulesOf,
  ruleFileOf,
  runTool,
  tokensOf,
} from './helpers.js';

const FLEET: QueryScope = {
  selector: parseSelector('job=~"my-operator.*"'),
  clusterLabel: 'cluster',
  namespaceLabel: 'namespace',
};
const filesOf = (scope: QueryScope = {}) => new Map(generateArtifacts({ scope }).map((f) => [f.path, f.content]));
const plain = filesOf();
const fleet = filesOf(FLEET);

describe('recorded series names', () => {
  it('follow level:metric:operations, with the level of the signal, and are unique', () => {
    const names = SIGNALS.map((s) => [s, recordedName(s)] as const).filter(([, name]) => name !== undefined);
    expect(names.length).toBeGreaterThan(35);
    for (const [s, name] of names) {
      expect(name, s.id).toMatch(RECORDING_NAME_PATTERN);
      expect(name?.split(':')[0], s.id).toBe(s.scope);
    }
    expect(new Set(names.map(([, name]) => name)).size).toBe(names.length);
    // Signals that are one metric as exposed are read directly.
    expect(SIGNALS.filter((s) => recordedName(s) === undefined).map((s) => s.id)).toEqual([
      'maxWorkers',
      'activeWorkers',
    ]);
  });

  it('name what the signal computes', () => {
    const name = (id: string) => recordedName(SIGNALS.find((s) => s.id === id)!);
    expect(name('addRate')).toBe('queue:workqueue_adds:rate5m');
    expect(name('depthFloor')).toBe('queue:workqueue_depth:min_over_time1m');
    expect(name('depthMin')).toBe('queue:workqueue_depth:min_over_time5m');
    expect(name('depth')).toBe('queue:workqueue_depth:sum');
    expect(name('lowPriorityDepthSlope')).toBe('queue:workqueue_depth_low_priority:deriv10m');
    expect(name('queueLatencyP99')).toBe('queue:workqueue_queue_duration_seconds:p99_rate5m');
    expect(name('workDurationMean')).toBe('queue:workqueue_work_duration_seconds:mean5m');
    expect(name('sustainedErrorRate')).toBe('controller:controller_runtime_reconcile_errors:rate15m');
    expect(name('reconcileRequeueAfterRate')).toBe('controller:controller_runtime_reconcile_requeue_after:rate5m');
    expect(name('writeRate')).toBe('process:rest_client_requests_writes:rate5m');
    expect(name('failedWriteRate')).toBe('process:rest_client_requests_writes_rejected:rate5m');
  });

  it('are recorded once each, every recording named by the convention', () => {
    for (const files of [plain, fleet]) {
      const records = recordingRulesOf(ruleFileOf(files)).map((r) => r.record);
      expect(new Set(records).size).toBe(records.length);
      for (const record of records) expect(record).toMatch(RECORDING_NAME_PATTERN);
    }
  });
});

describe('alert expressions over the recorded series', () => {
  it(`are shorter than ${EXPRESSION_LIMIT} characters, with and without a selector and placement labels`, () => {
    for (const files of [plain, fleet]) {
      const file = ruleFileOf(files);
      const longest = Math.max(...alertRulesOf(file).map((r) => r.expr.length));
      expect(longest).toBeLessThan(EXPRESSION_LIMIT);
      // So are the recorded parts of conditions.
      for (const r of recordingRulesOf(file).filter((r) => /:part\d+$/.test(r.record))) {
        expect(r.expr.length, r.record).toBeLessThan(EXPRESSION_LIMIT);
      }
    }
  });

  it('read, written out, the same condition with the selector in every raw selector', () => {
    const file = ruleFileOf(fleet);
    const recordings = recordingRulesOf(file);
    const metrics = new Set(SIGNALS.flatMap((s) => metricsOf(s.expr)));
    for (const metric of ['controller_runtime_reconcile_total', 'workqueue_adds_total', 'workqueue_depth']) {
      metrics.add(metric);
    }
    metrics.add('leader_election_master_status');
    let raw = 0;
    for (const text of [...recordings.map((r) => r.expr), ...alertRulesOf(file).map((r) => r.expr)]) {
      for (const match of text.matchAll(/([a-z_][a-z0-9_:]*)(\{[^}]*\})?/g)) {
        if (!metrics.has(match[1] ?? '')) continue;
        raw += 1;
        expect(match[2] ?? '', `${match[0]} in ${text}`).toContain('job=~"my-operator.*"');
      }
    }
    expect(raw).toBeGreaterThan(40);
    // The same operators and operands as without a selector, once the selector and placement labels are removed.
    const plainFile = ruleFileOf(plain);
    for (const alert of alertRulesOf(file)) {
      const other = alertRulesOf(plainFile).find((a) => a.alert === alert.alert)!;
      const written = expandRecordings(alert.expr, recordings)
        .replace(/, job=~"my-operator\.\*"/g, '')
        .replace(/\{job=~"my-operator\.\*"\}/g, '')
        .replace(/\{job=~"my-operator\.\*", /g, '{')
        .replace(/cluster, namespace, /g, '');
      expect(tokensOf(written), alert.alert).toBe(tokensOf(expandRecordings(other.expr, recordingRulesOf(plainFile))));
    }
  });

  it('pass `promtool check rules` with a selector and placement labels', async () => {
    const promtool = requireTool('promtool');
    const work = tempDir('wqd-fleet-rules-');
    try {
      for (const [name, files] of [
        ['plain', plain],
        ['fleet', fleet],
      ] as const) {
        const path = join(work.path, `${name}.rules.yaml`);
        writeFileSync(path, files.get(OUTPUT.alertRules) ?? '');
        const result = await runTool(promtool, ['check', 'rules', path]);
        expect(result.code, result.output).toBe(0);
        expect(result.output).toContain('SUCCESS');
      }
    } finally {
      work.remove();
    }
  });
});

describe('cluster and namespace labels', () => {
  it('are kept by the target-level alert, whose grouping names only job and instance', () => {
    const notObservable = alertRulesOf(ruleFileOf(fleet)).find((a) => a.alert === 'WorkqueueNotObservable')!;
    const written = expandRecordings(notObservable.expr, recordingRulesOf(ruleFileOf(fleet)));
    expect(written).toContain('count by (cluster, namespace, job, instance)');
    expect(written).toContain('on (cluster, namespace, job, instance)');
    expect(written).not.toMatch(/by \(job, instance\)/);
  });

  it('narrow the annotation queries and group and inhibit in the Alertmanager example', () => {
    const backlog = alertRulesOf(ruleFileOf(fleet)).find((a) => a.alert === 'WorkqueueBacklog')!;
    expect(backlog.annotations.description).toContain(
      'printf `queue:workqueue_depth:sum{cluster=%q, namespace=%q, job=%q, instance=%q, controller=%q, name=%q}` $labels.cluster $labels.namespace',
    );
    // A metric read as exposed is read on the selected targets only.
    expect(backlog.annotations.description).toContain(
      'printf `controller_runtime_max_concurrent_reconciles{job=~"my-operator.*", cluster=%q, namespace=%q, job=%q, instance=%q, controller=%q}`',
    );
    expect(backlog.annotations.summary).toContain('{{ with $labels.cluster }}{{ . }}/{{ end }}');
    const am = parse(fleet.get(OUTPUT.alertmanagerExample) ?? '') as {
      route: { group_by: string[] };
      inhibit_rules: Array<{ equal: string[] }>;
    };
    const queue = ['cluster', 'namespace', 'job', 'instance', 'controller', 'name'];
    expect(am.route.group_by).toEqual(['alertname', ...queue]);
    for (const rule of am.inhibit_rules) expect(rule.equal).toEqual(queue);
  });

  it('are offered as dashboard variables before job, and every queue query reads them and the selector', () => {
    const dashboards = dashboardsOf(fleet);
    for (const key of ['overview', 'detail'] as const) {
      const names = (dashboards[key].templating.list ?? []).map((v) => v.name);
      expect(names).toEqual(['datasource', 'cluster', 'namespace', 'job', 'instance', 'controller', 'name']);
      for (const expr of dashboardExpressions(dashboards[key])) {
        if (expr.startsWith('workqueue_adds_total{job=~"my-operator.*"}')) continue; // the first variable
        // A recorded series' rule applies the selector (every raw selector of the rule file carries it).
        const rawSelectors = expr.replace(/\b[a-z]+:[a-z0-9_]+:[a-z0-9_]+\{[^}]*\}/g, '');
        if (/[a-z_]+\{/.test(rawSelectors)) expect(expr, `${key}: ${expr}`).toContain('job=~"my-operator.*"');
      }
    }
    const addRate = (files: ReadonlyMap<string, string>) =>
      ((dashboardsOf(files).detail.panels ?? []) as Array<{ title?: string; targets?: Array<{ expr?: string }> }>).find(
        (p) => p.title === 'Add rate',
      )?.targets?.[0]?.expr;
    const placement = 'cluster=~"$cluster", namespace=~"$namespace"';
    const variables = `${placement}, job=~"$job", instance=~"$instance", controller=~"$controller", name=~"$name"`;
    expect(addRate(fleet)).toBe(`queue:workqueue_adds:rate5m{${variables}}`);
    const computing = new Map(
      generateArtifacts({ scope: FLEET, dashboardsReadRecordings: false }).map((f) => [f.path, f.content]),
    );
    expect(addRate(computing)).toBe(
      `sum without (priority) (rate(workqueue_adds_total{job=~"my-operator.*", ${variables}}[5m]))`,
    );
    // The service's own findings are not the controllers' targets: no selector there.
    expect(dashboards.diagnoses).toEqual(dashboardsOf(plain).diagnoses);
  });

  it('change nothing but the recording rules when not configured', () => {
    const recordings = recordingRulesOf(ruleFileOf(plain));
    expect(recordings.length).toBeGreaterThan(30);
    expect(plain.get(OUTPUT.dashboard('overview'))).not.toContain('cluster');
  });
});

describe('the selector', () => {
  it('parses PromQL label matchers, with or without braces', () => {
    expect(parseSelector('job=~"my-operator.*"')).toEqual([{ label: 'job', op: '=~', value: 'my-operator.*' }]);
    expect(parseSelector(`{namespace="system", job!='kcm', code!~"5..",}`)).toEqual([
      { label: 'namespace', op: '=', value: 'system' },
      { label: 'job', op: '!=', value: 'kcm' },
      { label: 'code', op: '!~', value: '5..' },
    ]);
    expect(parseSelector('a="x\\"y\\\\"')).toEqual([{ label: 'a', op: '=', value: 'x"y\\' }]);
    expect(parseSelector('  ')).toEqual([]);
  });

  it.each([
    ['job', 'expected =, !=, =~ or !~ after `job`'],
    ['job=my-operator', 'expected a quoted value for `job`'],
    ['job="a" namespace="b"', 'expected `,` between matchers'],
    ['job="a', 'unterminated value for `job`'],
    ['job=~"(unclosed"', 'the regular expression for `job` does not compile'],
    ['{job="a"', 'unclosed `{`'],
    ['1job="a"', 'expected a label name'],
    ['__name__="up"', '`__name__` cannot be matched'],
    ['job="\\q"', 'unknown escape'],
  ])('rejects %s', (text, message) => {
    expect(() => parseSelector(text)).toThrow(message);
  });
});

describe('the generate --config file', () => {
  it('reads the selector, the placement labels and the rule overrides', () => {
    const config = parseGenerateConfig(
      [
        `selector: 'job=~"my-operator.*"'`,
        'clusterLabel: cluster',
        'namespaceLabel: namespace',
        'rules:',
        '  WorkqueueBacklog:',
        '    thresholds: { minDepth: 50 }',
      ].join('\n'),
      'fleet.yaml',
    );
    expect(config.scope).toEqual(FLEET);
    expect(config.overrides.rules?.WorkqueueBacklog?.thresholds).toEqual({ minDepth: 50 });
    expect(parseGenerateConfig('', 'empty.yaml')).toEqual({ overrides: {}, scope: {} });
    expect(parseGenerateConfig('dashboardsReadRecordings: false', 'standalone.yaml')).toEqual({
      overrides: {},
      scope: {},
      dashboardsReadRecordings: false,
    });
  });

  it.each([
    ['selector: 42', 'fleet.yaml: selector: expected label matchers as a string'],
    [`selector: 'job=my-operator'`, 'fleet.yaml: selector: expected a quoted value for `job`'],
    ['clusterLabel: my-cluster', 'fleet.yaml: clusterLabel: expected a label name'],
    ['namespaceLabel: job', 'fleet.yaml: namespaceLabel: job already identifies a queue'],
    ['clusterLabel: c\nnamespaceLabel: c', 'fleet.yaml: namespaceLabel: the same label as clusterLabel'],
    ['selectors: x', 'fleet.yaml: selectors: unknown key'],
    ['dashboardsReadRecordings: no', 'fleet.yaml: dashboardsReadRecordings: expected true or false'],
  ])('rejects %j', (text, message) => {
    expect(() => parseGenerateConfig(text, 'fleet.yaml')).toThrow(ConfigError);
    expect(() => parseGenerateConfig(text, 'fleet.yaml')).toThrow(message);
  });
});
