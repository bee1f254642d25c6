/**
 * Every PromQL expression the generators emit runs in a real Prometheus: dashboard queries (variables
 * replaced as Grafana does with All selected), alert expressions, and the evidence queries inside alert
 * annotations. Over simulator recordings of both label schemas (the `mixed` scenario's five controller-runtime
 * queues, and a component-base queue without a `controller` label), the overview table's queries return one
 * series per queue.
 */
import { readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_START_MS, runVirtual } from '../../src/simulate/index.js';
import type { GroundTruth } from '../../src/simulate/model.js';
import { tempDir } from '../simulate/helpers.js';
import { importRecording, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';
import {
  annotationQueries,
  dashboardExpressions,
  dashboardsOf,
  filesByPath,
  panelsOf,
  ruleFileOf,
  substituteVariables,
} from './helpers.js';

const MINUTES = 30;
const AT = DEFAULT_START_MS / 1000 + MINUTES * 60;
const files = filesByPath();
const dashboards = dashboardsOf(files);
const work = tempDir('wqd-generate-prom-');
const truths: GroundTruth[] = [];
let prom: PrometheusHandle;

beforeAll(async () => {
  const runs = [
    { scenario: 'mixed', flavor: 'controller-runtime' as const, instance: 'mixed:8080' },
    { scenario: 'backlog', flavor: 'component-base' as const, instance: 'kcm:10257' },
  ];
  let storage: string | undefined;
  for (const run of runs) {
    const result = await runVirtual(
      run.scenario,
      { durationMs: MINUTES * 60_000, flavor: run.flavor },
      { instance: run.instance },
    );
    truths.push(result.truth);
    const file = join(work.path, `${run.instance.replace(':', '_')}.om`);
    writeFileSync(file, result.recording.text());
    const dir = await importRecording(file);
    if (storage === undefined) storage = dir;
    else for (const block of readdirSync(dir)) renameSync(join(dir, block), join(storage, block));
  }
  prom = await startPrometheus({ storagePath: storage! });
}, 120_000);

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

  it('parses and runs every alert expression and every evidence query in the annotations', async () => {
    const rules = ruleFileOf(files).groups.flatMap((g) => g.rules);
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      await expect(prom.queryRaw(rule.expr, AT), rule.alert).resolves.toBeDefined();
      const queries = annotationQueries(rule.annotations.description ?? '');
      expect(queries.length, rule.alert).toBeGreaterThan(0);
      for (const query of queries) await expect(prom.queryRaw(query, AT), query).resolves.toBeDefined();
    }
  });

  it('returns one overview row per queue, for both label schemas', async () => {
    const table = panelsOf(dashboards.overview).find((p) => p.type === 'table');
    const targets = table?.targets ?? [];
    expect(targets).toHaveLength(9);
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
    }
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
