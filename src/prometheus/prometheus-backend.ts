/**
 * Prometheus mode: every expression is rendered as PromQL and evaluated by the server (Prometheus, Thanos,
 * Mimir, Cortex); nothing but label sets and evaluated vectors comes back. This module only translates
 * between the engine's calls and the HTTP API; it holds no PromQL of its own.
 *
 * Contract (target labels): series with neither `job` nor `instance` (federated without `honor_labels`
 * targets, remote-written without target labels, a recording imported as is) form one target named after
 * the server: every label set coming back, from `seriesLabels` and from `evaluate` alike, that carries
 * neither label gets `instance="<targetName>"` (default `prometheusTargetName(url)`), so the engine's queue
 * identities, target keys and `targetName()` all see that one target and never `unknown`. Label sets with
 * `job` or `instance` are returned as the server sent them. Nothing is added to the PromQL for this: the
 * label only names what came back.
 *
 * Contract (fleet selector): the `selector` matchers (the configuration's `selector:`) are added to every raw
 * selector of every query and to every series lookup, as the generated rules add them (`renderPromQL`'s
 * `extraMatchers`): the diagnoses see only the selected series.
 *
 * Contract (engine): queries are written in PromQL for Prometheus and the servers that run its engine (Thanos,
 * Mimir, Cortex), in MetricsQL for VictoriaMetrics (`renderPromQL`'s `dialect`: the few expressions whose meaning
 * differs are written so that the verdicts agree). `auto` (the default) asks the server once, before the first
 * query: see `detectDialect`.
 *
 * Contract (series lookups): a histogram's buckets are looked up one bound at a time (the `le` values first), so
 * that no answer holds every bucket of every queue: at 10,000 queues of 12 buckets one answer would pass the 16 MiB
 * bound on answers. The label sets come back as one lookup would give them.
 *
 * Contract (late samples): given `maxSampleDelayMs`, the backend offers `changes()`: samples are taken to reach the
 * server at most that long after their time (scraped, recorded by a rule, or remote-written), so what was computed
 * at a time older than that before the previous evaluation still holds, and a service keeps its steps between
 * evaluations instead of asking for every step of every `for` again. Without it, nothing is kept.
 *
 * Contract (recorded series): given the signals the shipped recording rules record (`recorded`), signals are read
 * from their recorded series where the server holds them (recorded-series.ts); by default none are.
 *
 * Contract (local conditions): `evaluateBatch` over a few times (a service's later evaluations) computes the
 * expressions that read nothing but signals (the rules' conditions) in-process from their signals, each distinct
 * signal asked once (local-conditions.ts); over more times, and for everything else, every expression is asked as it
 * is. Every time is computed anew by the server (`stepCost: 'per-time'`), so the engine asks each condition over its
 * own steps.
 *
 * Contract (series refresh): given `seriesRefreshMs`, a metric's series lookup stands for the later lookups of that
 * metric whose window ends at most that long after its own (a service's evaluations, each at a later time): a
 * fleet's series change when controllers come and go, not every evaluation, and listing them is a fifth of what an
 * evaluation costs the server. A series that appears in between is listed at the next refresh (a new queue shows
 * up to that late), one that ends stays listed until then (its signals read absent). A lookup that found nothing,
 * or failed, is never kept, and a window that ends earlier than the kept one's, or starts before it, is listed
 * again. Without it (one-off diagnoses, replays), every lookup asks the server.
 */
import { labelValue, makeLabels } from '../exposition/labels.js';
import { LABEL, SUFFIX, WORKQUEUE } from '../metrics/names.js';
import type { ChangeReader, DiagnosisBackend } from '../promql/backend.js';
import { type Expr, type LabelMatcher, selector as selectorExpr } from '../promql/expr.js';
import { type QueryDialect, renderPromQL } from '../promql/render.js';
import type { InstantVector, Labels, VectorSample } from '../promql/vector.js';
import { computeLocally, planLocalConditions } from './local-conditions.js';
import { PrometheusApiError, type PrometheusClient } from './prometheus-api.js';
import { type RecordedSeries, RecordedSeriesReader } from './recorded-series.js';

export type PrometheusBackendOptions = {
  /** The `instance` given to label sets without `job` and `instance`; see the module contract. */
  readonly targetName: string;
  /** Matchers added to every selector; see the module contract. None by default. */
  readonly selector?: readonly LabelMatcher[];
  /** The server's engine; `auto` by default (see the module contract). */
  readonly engine?: PrometheusEngine;
  /** How late samples may reach the server (see the module contract); unset: nothing is kept between evaluations. */
  readonly maxSampleDelayMs?: number;
  /** The signals the recording rules record, and whether to read them (see the module contract). */
  readonly recorded?: RecordedSeries;
  /** How long a series lookup stands for later ones (see the module contract); unset: every lookup asks. */
  readonly seriesRefreshMs?: number;
};

export const PROMETHEUS_ENGINES = ['auto', 'prometheus', 'victoriametrics'] as const;
/** Which query engine the server runs: `auto` detects it (`detectDialect`). */
export type PrometheusEngine = (typeof PROMETHEUS_ENGINES)[number];

/**
 * The query language the server evaluates, from two instant queries: one only MetricsQL has a function for
 * (`tfirst_over_time`, which the MetricsQL rendering of `rate` reads) and one no language has. VictoriaMetrics
 * answers the first and refuses the second; Prometheus, Thanos, Mimir and Cortex refuse the first. A server
 * that answers both (a stub, a proxy answering anything) or refuses both is taken as PromQL. The build info does
 * not tell: VictoriaMetrics 1.79 answers it empty, later releases answer a Prometheus version. A request that
 * does not complete (timeout, connection) rejects, so the next evaluation asks again.
 */
export async function detectDialect(client: PrometheusClient, signal?: AbortSignal): Promise<QueryDialect> {
  const answers = async (query: string): Promise<boolean> => {
    try {
      await client.query(query, undefined, { signal });
      return true;
    } catch (error) {
      if (error instanceof PrometheusApiError && error.kind !== 'transport') return false;
      throw error;
    }
  };
  const probe = (fn: string): string => `${fn}(${WORKQUEUE.depth}[1m])`;
  const [metricsql, nonsense] = await Promise.all([
    answers(probe('tfirst_over_time')),
    answers(probe('workqueue_doctor_no_such_function')),
  ]);
  return metricsql && !nonsense ? 'metricsql' : 'promql';
}

function engineDialect(engine: Exclude<PrometheusEngine, 'auto'>): QueryDialect {
  return engine === 'victoriametrics' ? 'metricsql' : 'promql';
}

/**
 * The name of a Prometheus-compatible API as a target: its URL without credentials, query or fragment, and
 * without a trailing slash (`https://u:p@mimir.example/prometheus/?x=1` gives
 * `https://mimir.example/prometheus`). Unparseable input gives `prometheus`.
 */
export function prometheusTargetName(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    return 'prometheus';
  }
}

export function createPrometheusBackend(client: PrometheusClient, options: PrometheusBackendOptions): DiagnosisBackend {
  const fallback = options.targetName;
  const extraMatchers = options.selector ?? [];
  const engine = options.engine ?? 'auto';
  const recorded =
    options.recorded === undefined ? undefined : new RecordedSeriesReader(client, options.recorded, extraMatchers);
  let detected: QueryDialect | undefined;
  const dialect = async (signal?: AbortSignal): Promise<QueryDialect> => {
    if (engine !== 'auto') return engineDialect(engine);
    detected ??= await detectDialect(client, signal);
    return detected;
  };
  const named = (labels: Labels): Labels =>
    labelValue(labels, LABEL.job) === undefined && labelValue(labels, LABEL.instance) === undefined
      ? makeLabels([...Object.entries(labels), [LABEL.instance, fallback]])
      : labels;
  const evaluate = async (expr: Expr, timesMs: readonly number[], signal?: AbortSignal): Promise<InstantVector[]> => {
    const first = timesMs[0];
    const last = timesMs[timesMs.length - 1];
    if (first === undefined || last === undefined) return [];
    const [queryDialect, replace] = await Promise.all([
      dialect(signal),
      recorded?.replacementFor(expr, timesMs, signal),
    ]);
    const query = renderPromQL(expr, {
      extraMatchers,
      dialect: queryDialect,
      ...(replace === undefined ? {} : { replace }),
    });
    if (timesMs.length === 1) {
      const result = await client.query(query, first / 1000, { signal });
      if (result.resultType === 'vector')
        return [result.result.map((s) => ({ labels: named(s.metric), value: s.value }))];
      if (result.resultType === 'scalar') return [[{ labels: {}, value: result.result.value }]];
      throw new TypeError(`expected a vector from ${query}, got a ${result.resultType}`);
    }
    const stepMs = (timesMs[1] ?? first) - first;
    const matrix = await client.queryRange(query, first / 1000, last / 1000, stepMs / 1000, { signal });
    const vectors: VectorSample[][] = timesMs.map(() => []);
    for (const series of matrix.result) {
      const labels = named(series.metric);
      for (const point of series.samples) {
        const index = Math.round((point.timeSec * 1000 - first) / stepMs);
        vectors[index]?.push({ labels, value: point.value });
      }
    }
    return vectors;
  };
  return {
    evaluate,
    evaluateBatch: (exprs, timesMs, signal) => evaluateWithLocalConditions(evaluate, exprs, timesMs, signal),
    stepCost: 'per-time',
    ...(recorded === undefined
      ? {}
      : {
          gridPhase: (stepMs: number, atMs: number, signal?: AbortSignal) => recorded.gridPhase(stepMs, atMs, signal),
        }),
    ...(options.maxSampleDelayMs === undefined
      ? {}
      : { changes: () => lateSampleChanges(options.maxSampleDelayMs ?? 0) }),
    seriesLabels: keptLookups(options.seriesRefreshMs, async (metric, fromMs, toMs, signal) => {
      const lookup = async (matchers: readonly LabelMatcher[]) =>
        client.series([renderPromQL(selectorExpr(metric, matchers), { extraMatchers })], fromMs / 1000, toMs / 1000, {
          signal,
        });
      if (!metric.endsWith(SUFFIX.bucket)) return (await lookup([])).map(named);
      // A histogram's buckets: one lookup per bound (see the module contract).
      const match = renderPromQL(selectorExpr(metric), { extraMatchers });
      const bounds = await client.labelValues(LABEL.le, [match], fromMs / 1000, toMs / 1000, { signal });
      const perBound = await Promise.all(bounds.map((le) => lookup([{ label: LABEL.le, op: '=', value: le }])));
      return perBound.flat().map(named);
    }),
  };
}

/**
 * Batches of at most this many times compute their conditions here (local-conditions.ts): a service's later
 * evaluations, which ask for the newest steps only. Longer runs (a first evaluation's `for` ranges, a finding
 * traced back) ask the server for each condition, whose answer holds only the queues where it holds, instead of
 * every queue's signals at every step.
 */
const LOCAL_CONDITION_MAX_TIMES = 4;

/**
 * `exprs` at `timesMs` (see the module contract, local conditions): the conditions that read nothing but signals
 * computed here from their signals, each signal asked once; the rest asked as they are.
 */
async function evaluateWithLocalConditions(
  evaluate: DiagnosisBackend['evaluate'],
  exprs: readonly Expr[],
  timesMs: readonly number[],
  signal?: AbortSignal,
): Promise<InstantVector[][]> {
  const plan = timesMs.length <= LOCAL_CONDITION_MAX_TIMES ? planLocalConditions(exprs) : undefined;
  if (plan === undefined || !plan.local.includes(true)) {
    return Promise.all(exprs.map((expr) => evaluate(expr, timesMs, signal)));
  }
  // A leaf that is also asked for as it is (a reported signal) is asked once.
  const asked = new Map<Expr, Promise<InstantVector[]>>();
  const ask = (expr: Expr): Promise<InstantVector[]> => {
    let answer = asked.get(expr);
    if (answer === undefined) {
      answer = evaluate(expr, timesMs, signal);
      asked.set(expr, answer);
    }
    return answer;
  };
  // Every request sent before any answer is awaited.
  const asking = exprs.map((expr, i) => (plan.local[i] ? undefined : ask(expr)));
  const leafAsking = plan.leaves.map(ask);
  const [remote, leaves] = await Promise.all([Promise.all(asking), Promise.all(leafAsking)]);
  return exprs.map((expr, i) => {
    if (!plan.local[i]) return remote[i] ?? [];
    return timesMs.map((t, j) =>
      computeLocally(expr, new Map(plan.leaves.map((leaf, k) => [leaf, leaves[k]?.[j] ?? []])), t),
    );
  });
}

type SeriesLookup = DiagnosisBackend['seriesLabels'];

/**
 * `lookup` with each metric's answer kept for later windows ending within `refreshMs` of its own (the module
 * contract's series refresh); `lookup` itself where `refreshMs` is unset. Only an answer that came back with series
 * is kept: a lookup in flight is not shared (its failure is its caller's alone), and an empty one is asked again.
 */
function keptLookups(refreshMs: number | undefined, lookup: SeriesLookup): SeriesLookup {
  if (refreshMs === undefined) return lookup;
  const kept = new Map<string, { fromMs: number; toMs: number; labels: Labels[] }>();
  return async (metric, fromMs, toMs, signal) => {
    const last = kept.get(metric);
    if (last !== undefined && fromMs >= last.fromMs && toMs >= last.toMs && toMs - last.toMs < refreshMs) {
      return last.labels;
    }
    const labels = await lookup(metric, fromMs, toMs, signal);
    if (labels.length > 0) kept.set(metric, { fromMs, toMs, labels });
    else kept.delete(metric);
    return labels;
  };
}

/**
 * The changes of a server that does not tell, bounded by how late samples arrive: whatever was written since the
 * previous question has a time no earlier than that question's wall-clock time less `maxDelayMs`. The first
 * question answers that anything may have changed.
 */
function lateSampleChanges(maxDelayMs: number, now: () => number = Date.now): ChangeReader {
  let askedAt: number | undefined;
  return {
    takeEarliest() {
      const earliest = askedAt === undefined ? Number.NEGATIVE_INFINITY : askedAt - maxDelayMs;
      askedAt = now();
      return earliest;
    },
    close() {},
  };
}
