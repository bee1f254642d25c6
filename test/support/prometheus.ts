/**
 * A real Prometheus and promtool for tests (Debian package `prometheus`, 2.42).
 *
 * - `requireTool(name)`: the binary's path, or a clear error saying what to install (tests that
 *   need it fail; they never skip).
 * - `importRecording(file)`: a TSDB directory made by `promtool tsdb create-blocks-from openmetrics`.
 * - `startPrometheus(options)`: a Prometheus on a free 127.0.0.1 port, ready when it returns, with
 *   `query`/`queryRange` helpers over the HTTP API. `stop()` kills it and removes its temporary
 *   directories (including a storage directory made by `importRecording`).
 *   Start one per test file (beforeAll/afterAll), not one per test.
 * - `startPrometheusWithRecordings(storage, rulesYaml, …)`: a Prometheus over `storage` and the series its
 *   recording rules record, evaluated over the past by `promtool tsdb create-blocks-from rules`;
 *   `backfillRecordingRules(storage, rulesYamls, …)` adds them to `storage`, one rules file after the other.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, cpSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { type Daemon, freePort, startDaemon } from './daemon.js';

const DEBIAN_PACKAGE: Readonly<Record<string, string>> = {
  prometheus: 'prometheus',
  promtool: 'prometheus',
  'prometheus-alertmanager': 'prometheus-alertmanager',
  amtool: 'prometheus-alertmanager',
  'victoria-metrics': 'victoria-metrics',
};

/** Absolute path of `name` on PATH; throws "`name` not found: install Debian package … (apt-get install …)". */
export function requireTool(name: string): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  const pkg = DEBIAN_PACKAGE[name] ?? name;
  throw new Error(`\`${name}\` not found: install Debian package ${pkg} (apt-get install ${pkg})`);
}

/** Temporary directories made here, removed by `stop()` / `removeTempDirs()`. */
const tempDirs = new Set<string>();

function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/** Removes every temporary directory this module made and no running Prometheus uses. */
export function removeTempDirs(): void {
  for (const dir of [...tempDirs]) removeTempDir(dir);
}

interface RunResult {
  stdout: string;
  stderr: string;
}

/**
 * The environment the Go tools run to completion in (promtool): Go's collector at a quarter of its default pace
 * (`GOGC=400`, unless the caller's environment sets one). promtool's rule tests allocate heavily; this takes about a
 * fifth off their CPU time for a few tens of MB more memory, and changes nothing they compute.
 */
const GO_TOOL_ENV: NodeJS.ProcessEnv = { ...process.env, GOGC: process.env['GOGC'] ?? '400' };

/** Runs a tool to completion in `GO_TOOL_ENV`, with `input` on its stdin: its exit code, stdout and stderr. */
export function runToCompletion(
  file: string,
  args: readonly string[],
  input?: string,
): Promise<RunResult & { code: number }> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { maxBuffer: 64 * 1024 * 1024, env: GO_TOOL_ENV }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      if (err !== null && typeof err.code !== 'number') {
        reject(err);
        return;
      }
      resolve({ stdout, stderr, code });
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** `promtool check metrics` on `text` via stdin: its exit code and output (lint problems on stderr). */
export async function promtoolCheckMetrics(text: string): Promise<{ code: number; output: string }> {
  const promtool = requireTool('promtool');
  const r = await runToCompletion(promtool, ['check', 'metrics'], text);
  return { code: r.code, output: `${r.stdout}${r.stderr}` };
}

/**
 * Imports an OpenMetrics recording into a new TSDB directory (under the OS temp dir) with
 * `promtool tsdb create-blocks-from openmetrics FILE DIR`; returns the directory.
 */
export async function importRecording(file: string): Promise<string> {
  const promtool = requireTool('promtool');
  const dir = makeTempDir('wqd-tsdb-');
  const r = await runToCompletion(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', file, dir]);
  if (r.code !== 0) {
    removeTempDir(dir);
    throw new Error(`promtool tsdb create-blocks-from openmetrics ${file} failed (${r.code}): ${r.stderr}${r.stdout}`);
  }
  return dir;
}

export { freePort };

export interface PrometheusOptions {
  /** TSDB directory to serve (e.g. from `importRecording`); default a new empty temp dir. */
  readonly storagePath?: string;
  /** prometheus.yml contents; default a config without scrape jobs. */
  readonly configYaml?: string;
  readonly extraArgs?: readonly string[];
  /** How long to wait for `/-/ready`; default 30 s. */
  readonly readyTimeoutMs?: number;
}

/** One element of an instant vector from the HTTP API. */
export interface PromSample {
  readonly labels: Record<string, string>;
  readonly value: number;
  readonly timeSec: number;
}

export interface PromSeries {
  readonly labels: Record<string, string>;
  readonly values: readonly (readonly [timeSec: number, value: number])[];
}

export type PromQueryData =
  | {
      readonly resultType: 'vector';
      readonly result: readonly { metric: Record<string, string>; value: [number, string] }[];
    }
  | {
      readonly resultType: 'matrix';
      readonly result: readonly { metric: Record<string, string>; values: [number, string][] }[];
    }
  | { readonly resultType: 'scalar' | 'string'; readonly result: [number, string] };

export interface PrometheusHandle {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly storagePath: string;
  /** `GET /api/v1/query`; `timeSec` is unix seconds (decimals allowed, millisecond precision). */
  queryRaw(expr: string, timeSec: number): Promise<PromQueryData>;
  /** An instant query that must return a vector, as samples with numeric values (`NaN`, `±Inf` included). */
  query(expr: string, timeSec: number): Promise<PromSample[]>;
  /** `GET /api/v1/query_range`, as series of numeric points. */
  queryRange(expr: string, startSec: number, endSec: number, stepSec: number): Promise<PromSeries[]>;
  /** What the process printed (bounded), for failure messages. */
  output(): string;
  /** Kills Prometheus and removes its temporary directories. Safe to call twice. */
  stop(): Promise<void>;
}

/** Formats unix seconds for the HTTP API exactly, with millisecond precision. */
export function formatTimeSec(timeSec: number): string {
  const ms = Math.round(timeSec * 1000);
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  return `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, '0')}`;
}

/** Parses a sample value as the HTTP API writes it. */
export function parsePromValue(text: string): number {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

const DEFAULT_CONFIG = 'global:\n  scrape_interval: 15s\n  evaluation_interval: 15s\nscrape_configs: []\n';

export async function startPrometheus(options: PrometheusOptions = {}): Promise<PrometheusHandle> {
  const binary = requireTool('prometheus');
  const ownStorage = options.storagePath === undefined;
  const storagePath = options.storagePath ?? makeTempDir('wqd-prom-data-');
  const configDir = makeTempDir('wqd-prom-config-');
  const configFile = join(configDir, 'prometheus.yml');
  writeFileSync(configFile, options.configYaml ?? DEFAULT_CONFIG);
  const cleanup = (): void => {
    removeTempDir(configDir);
    if (ownStorage || tempDirs.has(storagePath)) removeTempDir(storagePath);
  };

  try {
    const daemon = await startDaemon({
      name: 'prometheus',
      binary,
      readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
      args: (port) => [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${storagePath}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.retention.time=100y',
        '--web.enable-lifecycle',
        '--log.level=warn',
        ...(options.extraArgs ?? []),
      ],
    });
    return handle(daemon, storagePath, cleanup);
  } catch (error) {
    cleanup();
    throw error;
  }
}

function handle(daemon: Daemon, storagePath: string, cleanup: () => void): PrometheusHandle {
  const url = daemon.url;
  let stopped = false;
  const api = async (path: string, params: Record<string, string>): Promise<PromQueryData> => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params).toString()}`);
    const body = (await res.json()) as { status: string; data?: PromQueryData; error?: string; errorType?: string };
    if (body.status !== 'success' || body.data === undefined) {
      throw new Error(`${path} ${JSON.stringify(params)}: ${body.errorType ?? res.status}: ${body.error ?? ''}`);
    }
    return body.data;
  };
  return {
    url,
    storagePath,
    output: daemon.output,
    queryRaw: (expr, timeSec) => api('/api/v1/query', { query: expr, time: formatTimeSec(timeSec) }),
    async query(expr, timeSec) {
      const data = await api('/api/v1/query', { query: expr, time: formatTimeSec(timeSec) });
      if (data.resultType !== 'vector') throw new Error(`${expr}: expected a vector, got ${data.resultType}`);
      return data.result.map((r) => ({ labels: r.metric, value: parsePromValue(r.value[1]), timeSec: r.value[0] }));
    },
    async queryRange(expr, startSec, endSec, stepSec) {
      const data = await api('/api/v1/query_range', {
        query: expr,
        start: formatTimeSec(startSec),
        end: formatTimeSec(endSec),
        step: String(stepSec),
      });
      if (data.resultType !== 'matrix') throw new Error(`${expr}: expected a matrix, got ${data.resultType}`);
      return data.result.map((r) => ({
        labels: r.metric,
        values: r.values.map(([t, v]) => [t, parsePromValue(v)] as const),
      }));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await daemon.stop();
      cleanup();
    },
  };
}

/**
 * Imports several recordings into one TSDB directory (one `promtool` import each, blocks moved together),
 * so one Prometheus serves them all; returns the directory.
 */
export async function importRecordings(files: readonly string[]): Promise<string> {
  let storage: string | undefined;
  for (const file of files) {
    const dir = await importRecording(file);
    if (storage === undefined) {
      storage = dir;
      continue;
    }
    for (const block of readdirSync(dir)) renameSync(join(dir, block), join(storage, block));
  }
  if (storage === undefined) throw new Error('importRecordings needs at least one file');
  return storage;
}

/**
 * Starts a Prometheus over `storage` (from `importRecordings`) plus the series the recording rules of
 * `rulesYaml` record from `startSec` to `endSec` (`backfillRecordingRules`).
 */
export async function startPrometheusWithRecordings(
  storage: string,
  rulesYaml: string,
  startSec: number,
  endSec: number,
): Promise<PrometheusHandle> {
  await backfillRecordingRules(storage, [rulesYaml], startSec, endSec);
  return startPrometheus({ storagePath: storage });
}

/**
 * Adds to `storage` the series the recording rules of each rules file (YAML) record from `startSec` to `endSec`,
 * evaluated at each group's interval from `startSec` on by `promtool tsdb create-blocks-from rules` against a
 * Prometheus over a copy of `storage`, one file after the other. promtool evaluates each rule over the stored data
 * only, so a rule may read the series of rules in earlier files, not of its own (alerting rules are ignored).
 */
export async function backfillRecordingRules(
  storage: string,
  rulesYamls: readonly string[],
  startSec: number,
  endSec: number,
): Promise<void> {
  const promtool = requireTool('promtool');
  for (const rulesYaml of rulesYamls) {
    const copy = makeTempDir('wqd-tsdb-copy-');
    cpSync(storage, copy, { recursive: true });
    const work = makeTempDir('wqd-backfill-');
    const rulesFile = join(work, 'rules.yaml');
    writeFileSync(rulesFile, rulesYaml);
    const blocks = join(work, 'blocks');
    const source = await startPrometheus({ storagePath: copy, readyTimeoutMs: 120_000 });
    try {
      const r = await runToCompletion(promtool, [
        'tsdb',
        'create-blocks-from',
        'rules',
        `--url=${source.url}`,
        `--start=${Math.round(startSec)}`,
        `--end=${Math.round(endSec)}`,
        `--output-dir=${blocks}`,
        '--quiet',
        rulesFile,
      ]);
      if (r.code !== 0)
        throw new Error(`promtool tsdb create-blocks-from rules failed (${r.code}): ${r.stderr}${r.stdout}`);
    } finally {
      await source.stop();
    }
    for (const block of readdirSync(blocks)) renameSync(join(blocks, block), join(storage, block));
    removeTempDir(work);
  }
}
