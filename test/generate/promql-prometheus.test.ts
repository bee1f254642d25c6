/**
 * Every PromQL expression the generators emit runs in a real Prometheus: dashboard queries (variables
 * replaced as Grafana does with All selected), alert expressions, and the evidence queries inside alert
 * annotations. Over simulator recordings of both label schemas (the `mixed` scenario's five controller-runtime
 * queues, and a component-base queue without a `controller` label), the overview table's queries return one
 * series per queue. Over a hand-written recording of the three depth schemas (priority queue, classic queue,
 * component-base), the queue-kind column and the depth-by-priority panel tell them apart.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { diagnose } from '../../src/diagnosis/engine.js';
import type { Report } from '../../src/diagnosis/report.js';
import { signal } from '../../src/diagnosis/signals.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { parseGenerateConfig } from '../../src/generate/generate-config.js';
import type { QueryScope } from '../../src/generate/query-scope.js';
import { DOCTOR, LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { parseSelector } from '../../src/promql/selector.js';
import { DEFAULT_START_MS, runVirtual } from '../../src/simulate/index.js';
import type { GroundTruth } from '../../src/simulate/model.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import { tempDir } from '../simulate/helpers.js';
import {
  importRecordings,
  type PrometheusHandle,
  type PromSample,
  removeTempDirs,
  startPrometheusWithRecordings,
} from '../support/prometheus.js';
import {
  alertRulesOf,
  annotationQueries,
  dashboardExpressions,
  dashboardsOf,
  expandRecordings,
  filesByPath,
  panelsOf,
  QUEUES_CONFIG,
  recordingRulesOf,
  ruleFileOf,
  substituteVariables,
} from './helpers.js';

const MINUTES = 30;
const START = DEFAULT_START_MS / 1000;
const AT = START + MINUTES * 60;
const files = filesByPath();
const dashboards = dashboardsOf(files);
const work = tempDir('wqd-generate-prom-');
const truths: GroundTruth[] = [];
let prom: PrometheusHandle;
let report: Report;

/** `workqueue_doctor_finding` series of a report, as the service exposes them, scraped every 15 s for 10 minutes. */
function findingsRecording(r: Report): string {
  const lines = [`# TYPE ${DOCTOR.finding} gauge`];
  for (const queue of r.queues) {
    for (const finding of queue.findings) {
      const labels = [
        `${LABEL.rule}="${finding.rule}"`,
        `${LABEL.severity}="${finding.severity}"`,
        `${LABEL.target}="${queue.queue.target}"`,
        `${LABEL.name}="${queue.queue.name ?? ''}"`,
        `${LABEL.controller}="${queue.queue.controller ?? ''}"`,
        `${LABEL.job}="workqueue-doctor"`,
        `${LABEL.instance}="doctor:9808"`,
      ].join(',');
      for (let t = AT - 600; t <= AT; t += 15) lines.push(`${DOCTOR.finding}{${labels}} 1 ${t}`);
    }
  }
  return `${lines.join('\n')}\n# EOF\n`;
}

/**
 * A Prometheus over `recordings` and the series the generated signal recording rules record from them, as a
 * Prometheus that loads the rules file holds them (the dashboards read them). The rules that read other
 * rules' series (the alerts' parts) are left out: promtool evaluates each rule over the stored data alone.
 */
async function prometheusWithSignals(
  recordings: readonly string[],
  generated: ReadonlyMap<string, string>,
  endSec = AT + 60,
): Promise<PrometheusHandle> {
  const file = ruleFileOf(generated);
  const rules = recordingRulesOf(file);
  const signals = rules.filter((r) => expandRecordings(r.expr, rules) === r.expr);
  const rulesYaml = stringify({ groups: [{ name: 'signals', interval: file.groups[0]?.interval, rules: signals }] });
  return startPrometheusWithRecordings(await importRecordings(recordings), rulesYaml, START, endSec);
}

beforeAll(async () => {
  const runs = [
    { scenario: 'mixed', flavor: 'controller-runtime' as const, instance: 'mixed:8080' },
    { scenario: 'backlog', flavor: 'component-base' as const, instance: 'kcm:10257' },
  ];
  const recordings: string[] = [];
  for (const run of runs) {
    const result = await runVirtual(
      run.scenario,
      { durationMs: MINUTES * 60_000, flavor: run.flavor },
      { instance: run.instance },
    );
    truths.push(result.truth);
    const file = join(work.path, `${run.instance.replace(':', '_')}.om`);
    writeFileSync(file, result.recording.text());
    recordings.push(file);
    if (run.scenario === 'mixed') {
      // The service's verdicts on this recording, as its /metrics would have exposed them, for the diagnoses dashboard.
      const source = recordingSourceFromText(result.recording.text(), file);
      report = await diagnose(source.backend, { atMs: AT * 1000, runbookBaseUrl: 'x', targets: source.targets() });
      const findingsFile = join(work.path, 'findings.om');
      writeFileSync(findingsFile, findingsRecording(report));
      recordings.push(findingsFile);
    }
  }
  prom = await prometheusWithSignals(recordings, files);
}, 180_000);

afterAll(async () => {
  await prom?.stop();
  removeTempDirs();
  work.remove();
});

describe('generated PromQL in a real Prometheus', () => {
  it('parses and runs every dashboard query', async () => {
    let count = 0;
    for (const dashboard of Object.values(dashboards)) {
      for (const expr of dashboardExpressions(dashboard)) {
        const query = substituteVariables(expr);
        expect(query).not.toMatch(/\$/);
        await expect(prom.queryRaw(query, AT), query).resolves.toBeDefined();
        count += 1;
      }
    }
    expect(count).toBeGreaterThan(50);
  });

  it('reads each recorded signal as the rules record it: the same series and values as computing it', async () => {
    const computing = dashboardsOf(
      new Map(generateArtifacts({ dashboardsReadRecordings: false }).map((f) => [f.path, f.content])),
    );
    // A recorded series keeps its name; Grafana's legends name the series by their labels.
    const sorted = (samples: readonly PromSample[]) =>
      samples
        .map(
          (s) =>
            [
              JSON.stringify(
                Object.entries(s.labels)
                  .filter(([l]) => l !== '__name__')
                  .sort(),
              ),
              s.value,
            ] as const,
        )
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    // promtool, as Prometheus, evaluates a group at an offset of its interval: compare at the last evaluation.
    const [evaluated] = await prom.query(`max(timestamp(${recordingRulesOf(ruleFileOf(files))[0]?.record}))`, AT);
    const at = evaluated?.value ?? Number.NaN;
    expect(at).toBeGreaterThan(AT - 30);
    let recorded = 0;
    for (const key of Object.keys(dashboards) as Array<keyof typeof dashboards>) {
      const reading = dashboardExpressions(dashboards[key]);
      const computed = dashboardExpressions(computing[key]);
      expect(reading.length, key).toBe(computed.length);
      for (const [index, expr] of reading.entries()) {
        const other = computed[index] ?? '';
        if (expr === other) continue;
        expect(expr, `${key}: a query that differs reads a recorded series`).toMatch(
          /\b[a-z]+:[a-z0-9_]+:[a-z0-9_]+\{/,
        );
        const fromRecording = sorted(await prom.query(substituteVariables(expr), at));
        const fromRaw = sorted(await prom.query(substituteVariables(other), at));
        expect(
          fromRecording.map(([labels]) => labels),
          expr,
        ).toEqual(fromRaw.map(([labels]) => labels));
        fromRecording.forEach(([labels, value], i) => {
          const want = fromRaw[i]?.[1] ?? Number.NaN;
          if (Number.isNaN(want)) expect(value, `${expr} ${labels}`).toBeNaN();
          else expect(value, `${expr} ${labels}`).toBeCloseTo(want, 9);
        });
        if (fromRaw.length > 0) recorded += 1;
      }
    }
    expect(recorded, 'recorded reads with data').toBeGreaterThan(20);
  });

  it('parses and runs every recording rule, every alert expression and every evidence query in the annotations', async () => {
    const recordings = recordingRulesOf(ruleFileOf(files));
    expect(recordings.length).toBeGreaterThan(30);
    for (const recording of recordings) {
      await expect(prom.queryRaw(recording.expr, AT), recording.record).resolves.toBeDefined();
    }
    const rules = alertRulesOf(ruleFileOf(files));
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      await expect(prom.queryRaw(rule.expr, AT), rule.alert).resolves.toBeDefined();
      // Written out (this Prometheus evaluates no rules), the alert runs over the recording itself.
      const written = expandRecordings(rule.expr, recordings);
      await expect(prom.queryRaw(written, AT), `${rule.alert}: ${written}`).resolves.toBeDefined();
      const queries = annotationQueries(rule.annotations.description ?? '');
      expect(queries.length, rule.alert).toBeGreaterThan(0);
      for (const query of queries) await expect(prom.queryRaw(query, AT), query).resolves.toBeDefined();
    }
  });

  it('returns one overview row per queue, for both label schemas', async () => {
    const table = panelsOf(dashboards.overview).find((p) => p.type === 'table');
    const targets = table?.targets ?? [];
    expect(targets).toHaveLength(10);
    const key = (labels: Record<string, string>): string =>
      JSON.stringify([labels.job, labels.instance, labels.controller ?? null, labels.name]);
    const expected = truths.flatMap((truth) =>
      truth.queues
        .filter((q) => q.name !== null)
        .map((q) =>
          key({
            job: truth.job,
            instance: truth.instance,
            ...(q.controller === null ? {} : { controller: q.controller }),
            name: q.name ?? '',
          }),
        ),
    );
    expect(expected).toHaveLength(6);
    const controllerRuntimeQueues = expected.filter((k) => JSON.parse(k)[2] !== null);
    for (const target of targets) {
      const samples = await prom.query(substituteVariables(target.expr ?? ''), AT);
      const keys = samples.map((s) => key(s.labels));
      expect(new Set(keys).size, `${target.refId}: one series per queue`).toBe(keys.length);
      // Max workers exists only where controller-runtime exposes it.
      const want = target.refId === 'I' ? controllerRuntimeQueues : expected;
      expect(keys.sort(), `${target.refId}: ${target.expr}`).toEqual([...want].sort());
      for (const s of samples) {
        expect(Object.keys(s.labels).sort(), target.refId).toEqual(
          ['controller', 'instance', 'job', 'name'].filter((l) => s.labels[l] !== undefined),
        );
      }
      // The simulator's controller-runtime queues run the priority queue (its default), component-base's the
      // classic queue (no priority label).
      if (target.refId === 'J') {
        expect(samples.map((s) => [key(s.labels), s.value]).sort()).toEqual(
          samples.map((s) => [key(s.labels), controllerRuntimeQueues.includes(key(s.labels)) ? 1 : 0]).sort(),
        );
      }
    }
  });

  it("answers every variable's label_values query with the recorded values", async () => {
    const recorded = {
      job: truths.map((t) => t.job),
      instance: truths.map((t) => t.instance),
      controller: truths.flatMap((t) => t.queues.map((q) => q.controller).filter((c) => c !== null)),
      name: truths.flatMap((t) => t.queues.map((q) => q.name).filter((n) => n !== null)),
      target: report.queues.filter((q) => q.findings.length > 0).map((q) => q.queue.target),
    } as Record<string, string[]>;
    const withFindings = report.queues.filter((q) => q.findings.length > 0);
    const findingValues = {
      target: withFindings.map((q) => q.queue.target),
      controller: withFindings.map((q) => q.queue.controller ?? '').filter((c) => c !== ''),
      name: withFindings.map((q) => q.queue.name ?? '').filter((n) => n !== ''),
    } as Record<string, string[]>;
    expect(findingValues.name?.length).toBeGreaterThanOrEqual(4);
    let checked = 0;
    for (const [key, dashboard] of Object.entries(dashboards)) {
      for (const variable of (
        dashboard as { templating?: { list?: Array<{ name: string; type: string; definition?: string }> } }
      ).templating?.list ?? []) {
        if (variable.type !== 'query') continue;
        const match = /^label_values\((.+), ([A-Za-z_]+)\)$/.exec(variable.definition ?? '');
        expect(match, `${key}/${variable.name}: ${variable.definition}`).not.toBeNull();
        const [, selector, label] = match as RegExpExecArray;
        const samples = await prom.query(`count by (${label}) (${substituteVariables(selector ?? '')})`, AT);
        const values = samples.map((s) => s.labels[label ?? ''] ?? '').filter((v) => v !== '');
        const want = (key === 'diagnoses' ? findingValues : recorded)[label ?? ''] ?? [];
        expect([...new Set(values)].sort(), `${key}/${variable.name}`).toEqual([...new Set(want)].sort());
        checked += 1;
      }
    }
    expect(checked).toBe(11);
  });

  it('selects one queue of either schema in the detail dashboard', async () => {
    const addRate = panelsOf(dashboards.detail).find((p) => p.title === 'Add rate')?.targets?.[0]?.expr ?? '';
    const componentBase = addRate
      .replace(/\$job|\$instance/g, '.*')
      .replace('$controller', '')
      .replace('$name', 'pod');
    const samples = await prom.query(componentBase.replace('$__rate_interval', '5m'), AT);
    expect(samples.map((s) => s.labels.instance)).toEqual(['kcm:10257']);
  });
});

describe('queues: per-queue threshold lines in a real Prometheus', () => {
  const configured = dashboardsOf(
    new Map(generateArtifacts(parseGenerateConfig(QUEUES_CONFIG, 'config.yaml')).map((f) => [f.path, f.content])),
  );

  it('parses and runs every dashboard query generated with a queues: override and a silence', async () => {
    for (const dashboard of Object.values(configured)) {
      for (const expr of dashboardExpressions(dashboard)) {
        await expect(prom.queryRaw(substituteVariables(expr), AT), expr).resolves.toBeDefined();
      }
    }
  });

  it("gives each queue its own minDepth line: pod's 200, the default elsewhere, none for the silenced queue", async () => {
    const floor = panelsOf(configured.detail).find((p) => p.title === signal('depthFloor').title);
    const line = floor?.targets?.find((t) => t.legendFormat?.startsWith('minDepth (WorkqueueBacklog)'));
    const samples = await prom.query(substituteVariables(line?.expr ?? ''), AT);
    const byQueue = (instance: string | undefined, name: string | undefined) => `${instance}/${name}`;
    const expected = truths.flatMap((truth) =>
      truth.queues
        .filter((q) => q.name !== null && q.controller !== 'dbuser')
        .map((q) => [byQueue(truth.instance, q.name ?? ''), q.name === 'pod' ? 200 : 20] as const),
    );
    expect(expected.filter(([, value]) => value === 200)).toHaveLength(2);
    expect(truths.some((t) => t.queues.some((q) => q.controller === 'dbuser'))).toBe(true);
    expect(samples.map((s) => [byQueue(s.labels.instance, s.labels.name), s.value]).sort()).toEqual(
      [...expected].sort(),
    );
  });
});

describe('queue kind and depth by priority in a real Prometheus', () => {
  const JOB = 'queue-kinds';
  const START = DEFAULT_START_MS / 1000;
  const END = START + 600;
  /** The depth series of each queue: its identity labels, then the depth by `priority` value (absent: none). */
  const QUEUES: ReadonlyArray<{ readonly labels: Record<string, string>; readonly depth: Record<string, number> }> = [
    // controller-runtime's priority queue: real changes at 0, the initial list at -100.
    { labels: { [LABEL.controller]: 'pq', [LABEL.name]: 'pq' }, depth: { '0': 3, '-100': 40 } },
    // A priority queue at startup: its depth series appear on first use, so only the initial list's so far.
    { labels: { [LABEL.controller]: 'starting', [LABEL.name]: 'starting' }, depth: { '-100': 12 } },
    // A priority queue past the cardinality limit.
    { labels: { [LABEL.controller]: 'capped', [LABEL.name]: 'capped' }, depth: { exceeded_cardinality_limit: 2 } },
    // controller-runtime's classic queue.
    { labels: { [LABEL.controller]: 'classic', [LABEL.name]: 'classic' }, depth: { '': 5 } },
    // component-base: no controller and no priority label.
    { labels: { [LABEL.name]: 'cb' }, depth: { absent: 7 } },
  ];
  let kinds: PrometheusHandle;

  function recording(): string {
    const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
    for (const queue of QUEUES) {
      for (const [priority, value] of Object.entries(queue.depth)) {
        const labels: Record<string, string> = {
          [LABEL.job]: JOB,
          [LABEL.instance]: `${queue.labels[LABEL.name]}:8080`,
          ...queue.labels,
        };
        if (priority !== 'absent') labels[LABEL.priority] = priority;
        const text = Object.entries(labels)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',');
        for (let t = START; t <= END; t += 15) lines.push(`${WORKQUEUE.depth}{${text}} ${value} ${t}`);
      }
    }
    return `${lines.join('\n')}\n# EOF\n`;
  }

  /** A dashboard query (All selected) over this recording: values by queue name. */
  async function byQueue(expr: string): Promise<Record<string, number>> {
    const query = substituteVariables(expr);
    const samples = await kinds.query(query, END);
    const out: Record<string, number> = {};
    for (const s of samples) {
      const name = s.labels[LABEL.name] ?? '';
      expect(out[name], `one series for ${name}: ${query}`).toBeUndefined();
      expect(s.labels[LABEL.priority], query).toBeUndefined();
      out[name] = s.value;
    }
    return out;
  }

  beforeAll(async () => {
    const file = join(work.path, 'queue-kinds.om');
    writeFileSync(file, recording());
    kinds = await prometheusWithSignals([file], files, END + 60);
  }, 60_000);

  afterAll(async () => {
    await kinds?.stop();
  });

  it('overview: the queue-kind column is 1 for a priority queue, 0 for a classic and a component-base queue', async () => {
    const table = panelsOf(dashboards.overview).find((p) => p.type === 'table');
    const target = table?.targets?.find((t) => t.refId === 'J');
    expect(target?.expr).toContain(`${LABEL.priority}!=""`);
    expect(await byQueue(target?.expr ?? '')).toEqual({ pq: 1, starting: 1, capped: 1, classic: 0, cb: 0 });
    // Its rows carry the labels of the depth column's, so the table's merge joins them.
    const depth = table?.targets?.find((t) => t.refId === 'B')?.expr ?? '';
    const labelsOf = async (expr: string) =>
      (await kinds.query(substituteVariables(expr), END)).map((s) => JSON.stringify(s.labels)).sort();
    expect(await labelsOf(target?.expr ?? '')).toEqual(await labelsOf(depth));
  });

  it('detail: depth by priority splits a priority queue, shows every queue without priorities as normal, and a queue past the cap as of unknown priority', async () => {
    const panel = panelsOf(dashboards.detail).find((p) => p.title === 'Depth by priority');
    const [normal, low, unknown] = panel?.targets ?? [];
    expect(normal?.legendFormat).toMatch(/^normal /);
    expect(low?.legendFormat).toMatch(/^low priority /);
    expect(unknown?.legendFormat).toMatch(/^priority unknown /);
    expect(await byQueue(normal?.expr ?? '')).toEqual({ pq: 3, classic: 5, cb: 7 });
    expect(await byQueue(low?.expr ?? '')).toEqual({ pq: 40, starting: 12 });
    expect(await byQueue(unknown?.expr ?? '')).toEqual({ capped: 2 });
  });
});

describe('a fleet: selector, cluster and namespace labels in a real Prometheus', () => {
  const SCOPE: QueryScope = {
    selector: parseSelector('job=~"my-operator.*"'),
    clusterLabel: 'cluster',
    namespaceLabel: 'namespace',
  };
  const scoped = new Map(generateArtifacts({ scope: SCOPE }).map((f) => [f.path, f.content]));
  const scopedDashboards = dashboardsOf(scoped);
  /** Queues by job, instance, controller and name: the selected ones only. */
  const selected: string[] = [];
  let fleet: PrometheusHandle;
  const key = (labels: Record<string, string>): string =>
    JSON.stringify([labels.cluster ?? null, labels.namespace ?? null, labels.instance, labels.name]);

  beforeAll(async () => {
    const runs = [
      // Selected, with cluster and namespace target labels.
      {
        scenario: 'mixed',
        flavor: 'controller-runtime' as const,
        job: 'my-operator',
        instance: 'mixed:8080',
        placed: true,
      },
      // Selected, without them: its queues must still show.
      {
        scenario: 'backlog',
        flavor: 'component-base' as const,
        job: 'my-operator-kcm',
        instance: 'kcm:10257',
        placed: false,
      },
      // Not selected.
      {
        scenario: 'hot-loop-status-write',
        flavor: 'controller-runtime' as const,
        job: 'other',
        instance: 'other:8080',
        placed: true,
      },
    ];
    const files: string[] = [];
    for (const run of runs) {
      const result = await runVirtual(
        run.scenario,
        { durationMs: MINUTES * 60_000, flavor: run.flavor },
        { job: run.job, instance: run.instance },
      );
      const text = run.placed
        ? result.recording.text().replace(/^([a-zA-Z_:][a-zA-Z0-9_:]*)\{/gm, '$1{cluster="east",namespace="ops",')
        : result.recording.text();
      if (run.job.startsWith('my-operator')) {
        for (const q of result.truth.queues) {
          if (q.name === null) continue;
          const placement = run.placed ? { cluster: 'east', namespace: 'ops' } : {};
          selected.push(key({ ...placement, instance: run.instance, name: q.name }));
        }
      }
      const file = join(work.path, `fleet-${run.instance.replace(':', '_')}.om`);
      writeFileSync(file, text);
      files.push(file);
    }
    fleet = await prometheusWithSignals(files, scoped);
  }, 120_000);

  afterAll(async () => {
    await fleet?.stop();
  });

  it('runs every dashboard query, recording rule, alert expression (written out) and evidence query', async () => {
    let count = 0;
    for (const dashboard of Object.values(scopedDashboards)) {
      for (const expr of dashboardExpressions(dashboard)) {
        await expect(fleet.queryRaw(substituteVariables(expr), AT), expr).resolves.toBeDefined();
        count += 1;
      }
    }
    const file = ruleFileOf(scoped);
    const recordings = recordingRulesOf(file);
    for (const r of recordings) await expect(fleet.queryRaw(r.expr, AT), r.record).resolves.toBeDefined();
    for (const alert of alertRulesOf(file)) {
      await expect(fleet.queryRaw(expandRecordings(alert.expr, recordings), AT), alert.alert).resolves.toBeDefined();
      for (const query of annotationQueries(alert.annotations.description ?? '')) {
        await expect(fleet.queryRaw(query, AT), query).resolves.toBeDefined();
      }
      count += 1;
    }
    expect(count).toBeGreaterThan(50);
  });

  it('returns one overview row per selected queue, with its cluster and namespace when it has them', async () => {
    expect(selected).toHaveLength(6);
    const table = panelsOf(scopedDashboards.overview).find((p) => p.type === 'table');
    for (const target of table?.targets ?? []) {
      const samples = await fleet.query(substituteVariables(target.expr ?? ''), AT);
      const keys = samples.map((s) => key(s.labels));
      expect(new Set(keys).size, `${target.refId}: one series per queue`).toBe(keys.length);
      for (const k of keys) expect(selected, `${target.refId}: ${target.expr}`).toContain(k);
      // Max workers exists only where controller-runtime exposes it.
      if (target.refId !== 'I') expect(keys.sort(), `${target.refId}: ${target.expr}`).toEqual([...selected].sort());
    }
  });

  it('offers the cluster and namespace of the selected targets as variables', async () => {
    const values = async (label: string): Promise<string[]> => {
      const variable = (scopedDashboards.overview.templating.list ?? []).find((v) => v.name === label);
      const match = /^label_values\((.+), ([A-Za-z_]+)\)$/.exec(variable?.definition ?? '');
      const samples = await fleet.query(`count by (${label}) (${substituteVariables(match?.[1] ?? '')})`, AT);
      return samples.map((s) => s.labels[label] ?? '').filter((v) => v !== '');
    };
    expect(await values('cluster')).toEqual(['east']);
    expect(await values('namespace')).toEqual(['ops']);
    expect((await values('job')).sort()).toEqual(['my-operator', 'my-operator-kcm']);
  });
});
