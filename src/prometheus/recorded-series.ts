/**
 * Prometheus mode over recorded series: where the server holds the series the shipped recording rules write
 * (`queue:workqueue_depth:sum`, `queue:workqueue_adds:rate5m` and the rest; src/generate/recording-rules.ts), a
 * signal is read from its series instead of being computed again from the raw ones. A fleet's Prometheus that
 * evaluates the rules anyway then answers each signal from one series per queue, already aggregated, instead of
 * the dozens of raw series (histogram buckets, per-priority depths, per-code requests) behind it.
 *
 * Contract:
 * - `RecordedSignal`: a signal the rules record, by id: the series it is recorded to and the expression that
 *   series holds (the signal's definition, before any fleet selector). A signal node of a queried expression is
 *   read from its series only when its expression is that one (the same signal definition, or an expression
 *   written alike), so a node built with other windows or matchers is never confused with the recording; a
 *   definition's expression itself (a reported signal, asked for as it is) is read from its series too.
 * - Modes: `off` never reads recorded series. `on` reads every recorded signal from its series (the rules are known
 *   to be loaded, and to have been for as long as the evaluations look back). `auto` (the default) asks the
 *   server, for each range of times it evaluates, whether the rule group was evaluated at its first and at its
 *   last time (the first recorded signal's series there: every recorded signal is in the one group `generate`
 *   writes; one small instant query per time, remembered for the most recent times), and every five minutes of
 *   evaluation time which recorded series it holds at all: a signal is read from its series when the group was
 *   evaluated at both ends and its series is held, and computed from the raw series otherwise (before the rules
 *   were loaded, for a rule disabled where they were generated).
 * - A recorded series read stands for the expression it records: the fleet selector is added to its selector (the
 *   recorded series keep every target label, so the selector narrows them as it narrows the raw series), and it
 *   is multiplied by one, which drops the series name as the aggregation it stands for does and changes no value.
 * - Times: Prometheus evaluates a rule group every interval at a phase of the group's own (an offset from the
 *   interval's multiples, from a hash of the group's name and file), and a recorded series read at a time holds
 *   the group's last evaluation before it: exactly the raw expressions' value at the group's evaluation times, up
 *   to one interval old between them. `gridPhase` gives that phase (the newest recorded sample's time modulo the
 *   step; every recorded signal is in the one group `generate` writes), so the engine evaluates its `for` steps
 *   at the group's times, where the recorded series are exact and where the generated alerts are evaluated too.
 */
import { childrenOf, type Expr, type LabelMatcher } from '../promql/expr.js';
import { renderMatchers } from '../promql/render.js';
import { METRIC_NAME_LABEL } from '../promql/vector.js';
import type { PrometheusClient } from './prometheus-api.js';

export const RECORDED_SERIES_MODES = ['auto', 'on', 'off'] as const;
/** Whether signals are read from the recording rules' series; see the module contract. */
export type RecordedSeriesMode = (typeof RECORDED_SERIES_MODES)[number];

/** A signal the recording rules record: the series and the expression it holds. */
export type RecordedSignal = { readonly series: string; readonly expr: Expr };

export type RecordedSeries = {
  readonly mode: RecordedSeriesMode;
  /** By signal id. */
  readonly signals: ReadonlyMap<string, RecordedSignal>;
};

/** How many times' answers `auto` remembers: an evaluation asks about a handful (the ends of its `for` ranges). */
const REMEMBERED_TIMES = 64;

/** How long `auto` trusts its list of the recorded series the server holds before asking again. */
const NAMES_CHECKED_EVERY_MS = 5 * 60_000;

/** Prints a node as the series it is recorded to, or leaves it to the renderer; `renderPromQL`'s `replace`. */
export type Replacement = (expr: Expr) => string | undefined;

export class RecordedSeriesReader {
  readonly #client: PrometheusClient;
  readonly #recorded: RecordedSeries;
  readonly #extraMatchers: readonly LabelMatcher[];
  /** The series that tells the rule group was evaluated: the first recorded signal's (every one is in the group). */
  readonly #groupSeries: string | undefined;
  /** Whether the group's series is there at a time (ms), by time, oldest asked first. */
  readonly #groupPresent = new Map<number, Promise<boolean>>();
  /** The recorded series names the server held when last asked, and the evaluation time it was asked at. */
  #names: { readonly atMs: number; readonly present: Promise<ReadonlySet<string>> } | undefined;
  /** The recording a node stands for (null: none), by node. */
  readonly #recordingOf = new WeakMap<Expr, RecordedSignal | null>();
  /** The recordings by their definitions' expressions, and by those expressions' JSON. */
  readonly #byDefinition: ReadonlyMap<Expr, RecordedSignal>;
  readonly #byDefinitionText: ReadonlyMap<string, RecordedSignal>;

  constructor(client: PrometheusClient, recorded: RecordedSeries, extraMatchers: readonly LabelMatcher[]) {
    this.#client = client;
    this.#recorded = recorded;
    this.#extraMatchers = extraMatchers;
    const recordings = [...recorded.signals.values()];
    this.#groupSeries = recordings[0]?.series;
    this.#byDefinition = new Map(recordings.map((r) => [r.expr, r]));
    this.#byDefinitionText = new Map(recordings.map((r) => [JSON.stringify(r.expr), r]));
  }

  /**
   * The offset of the recording rule group's evaluations from the multiples of `stepMs`, as of `atMs`: its newest
   * recorded sample's time modulo the step; 0 when signals are not read from recorded series or none is there.
   */
  async gridPhase(stepMs: number, atMs: number, signal?: AbortSignal): Promise<number> {
    if (this.#recorded.mode === 'off' || this.#groupSeries === undefined) return 0;
    const result = await this.#client.query(`max(timestamp(${this.#selected(this.#groupSeries)}))`, atMs / 1000, {
      signal,
    });
    const newest = result.resultType === 'vector' ? result.result[0]?.value : undefined;
    if (newest === undefined || !Number.isFinite(newest)) return 0;
    const ms = Math.round(newest * 1000);
    return ((ms % stepMs) + stepMs) % stepMs;
  }

  /**
   * The replacement for evaluating `expr` at `timesMs`: each node that stands for a recording read from its
   * recorded series where the mode allows; undefined when no node is.
   */
  async replacementFor(expr: Expr, timesMs: readonly number[], signal?: AbortSignal): Promise<Replacement | undefined> {
    if (this.#recorded.mode === 'off') return undefined;
    const wanted = this.#recordedNodes(expr);
    if (wanted.size === 0) return undefined;
    let readable: ReadonlySet<string> | undefined;
    if (this.#recorded.mode === 'auto') {
      const first = timesMs[0];
      const last = timesMs[timesMs.length - 1];
      if (first === undefined || last === undefined) return undefined;
      const [fromFirst, toLast, names] = await Promise.all([
        this.#groupPresentAt(first, signal),
        this.#groupPresentAt(last, signal),
        this.#namesPresent(last, signal),
      ]);
      if (!fromFirst || !toLast) return undefined;
      readable = names;
    }
    const texts = new Map<Expr, string>();
    for (const [node, recording] of wanted) {
      if (readable === undefined || readable.has(recording.series)) {
        texts.set(node, `(${this.#selected(recording.series)} * 1)`);
      }
    }
    return texts.size === 0 ? undefined : (node) => texts.get(node);
  }

  /** A recorded series' selector with the fleet selector. */
  #selected(series: string): string {
    return `${series}${renderMatchers(this.#extraMatchers)}`;
  }

  /** The outermost nodes of `expr` that stand for a recording, with it. */
  #recordedNodes(expr: Expr): Map<Expr, RecordedSignal> {
    const found = new Map<Expr, RecordedSignal>();
    const visit = (e: Expr): void => {
      const recording = this.#standsFor(e);
      if (recording !== undefined) found.set(e, recording);
      else for (const child of childrenOf(e)) visit(child);
    };
    visit(expr);
    return found;
  }

  /** The recording `node` computes: a definition's expression (the same object, or one written alike), or a signal node of one. */
  #standsFor(node: Expr): RecordedSignal | undefined {
    const known = this.#byDefinition.get(node) ?? this.#recordingOf.get(node);
    if (known !== undefined) return known ?? undefined;
    const computed = node.kind === 'signal' ? node.expr : node;
    const recording = this.#byDefinition.get(computed) ?? this.#byDefinitionText.get(JSON.stringify(computed));
    this.#recordingOf.set(node, recording ?? null);
    return recording;
  }

  /** Whether the rule group's series is there at `timeMs` (within the server's lookback), asked once per time. */
  #groupPresentAt(timeMs: number, signal?: AbortSignal): Promise<boolean> {
    let present = this.#groupPresent.get(timeMs);
    if (present === undefined) {
      present = this.#askGroupPresent(timeMs, signal);
      this.#groupPresent.set(timeMs, present);
      // A failed question is asked again next time.
      present.catch(() => this.#groupPresent.delete(timeMs));
      if (this.#groupPresent.size > REMEMBERED_TIMES) {
        const oldest = this.#groupPresent.keys().next().value;
        if (oldest !== undefined) this.#groupPresent.delete(oldest);
      }
    }
    return present;
  }

  async #askGroupPresent(timeMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#groupSeries === undefined) return false;
    const result = await this.#client.query(`count(${this.#selected(this.#groupSeries)})`, timeMs / 1000, { signal });
    return result.resultType === 'vector' && result.result.length > 0;
  }

  /**
   * The recorded series names with a series at `atMs`, asked again once the list is older than
   * `NAMES_CHECKED_EVERY_MS` (of evaluation time, either way): a rule disabled where the rules were generated, or
   * a metric no target exposes, has none.
   */
  #namesPresent(atMs: number, signal?: AbortSignal): Promise<ReadonlySet<string>> {
    const names = this.#names;
    if (names !== undefined && Math.abs(atMs - names.atMs) < NAMES_CHECKED_EVERY_MS) return names.present;
    const present = this.#askNamesPresent(atMs, signal);
    this.#names = { atMs, present };
    present.catch(() => {
      if (this.#names?.present === present) this.#names = undefined;
    });
    return present;
  }

  async #askNamesPresent(timeMs: number, signal?: AbortSignal): Promise<ReadonlySet<string>> {
    // Recorded series names are `level:metric:operations` in letters, digits and underscores: no regex syntax.
    const names = [...new Set([...this.#recorded.signals.values()].map((r) => r.series))];
    const matchers: LabelMatcher[] = [
      { label: METRIC_NAME_LABEL, op: '=~', value: names.join('|') },
      ...this.#extraMatchers,
    ];
    const result = await this.#client.query(
      `count by (${METRIC_NAME_LABEL}) (${renderMatchers(matchers)})`,
      timeMs / 1000,
      {
        signal,
      },
    );
    if (result.resultType !== 'vector') return new Set();
    return new Set(result.result.map((s) => s.metric[METRIC_NAME_LABEL]).filter((n): n is string => n !== undefined));
  }
}
