/**
 * A real single-node VictoriaMetrics for tests (Debian package `victoria-metrics`, 1.79.5; binary
 * `victoria-metrics`).
 *
 * - `startVictoriaMetrics(options)`: a VictoriaMetrics on a free 127.0.0.1 port with a new temporary storage
 *   directory, ready when it returns. `stop()` kills it and removes the directory. Start one per test file
 *   (beforeAll/afterAll), not one per test.
 * - `handle.importOpenMetrics(files)`: imports OpenMetrics recordings (as `promtool tsdb create-blocks-from
 *   openmetrics` reads them) through `/api/v1/import/prometheus`, then `/internal/force_flush`, so every sample
 *   is queryable when it returns.
 * - `openMetricsToPrometheusText(text)`: the conversion that import applies (see there).
 *
 * The server runs with the query settings a user would have (lookbehind windows, staleness and the lookback
 * detected from the samples' spacing), except what only hides freshly imported data: `-search.latencyOffset=0s`
 * (points near "now" are not held back) and `-search.disableCache` (no response cache to reset after an import).
 * The retention (`-retentionPeriod=100y`) keeps recordings whose timestamps lie far in the past or future.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon } from './daemon.js';
import { requireTool } from './prometheus.js';

export interface VictoriaMetricsOptions {
  readonly extraArgs?: readonly string[];
  /** How long to wait for `/-/ready`; default 30 s. */
  readonly readyTimeoutMs?: number;
}

export interface VictoriaMetricsHandle {
  /** `http://127.0.0.1:PORT`: the Prometheus query API is at its root (`/api/v1/query`). */
  readonly url: string;
  /** Imports OpenMetrics files (converted by `openMetricsToPrometheusText`) and flushes them to search. */
  importOpenMetrics(files: readonly string[]): Promise<void>;
  /** What the process printed (bounded), for failure messages. */
  output(): string;
  /** Kills VictoriaMetrics and removes its storage directory. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startVictoriaMetrics(options: VictoriaMetricsOptions = {}): Promise<VictoriaMetricsHandle> {
  const binary = requireTool('victoria-metrics');
  const storage = mkdtempSync(join(tmpdir(), 'wqd-vm-data-'));
  let stopped = false;
  try {
    const daemon = await startDaemon({
      name: 'victoria-metrics',
      binary,
      readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
      args: (port) => [
        `-storageDataPath=${storage}`,
        `-httpListenAddr=127.0.0.1:${port}`,
        '-retentionPeriod=100y',
        '-search.latencyOffset=0s',
        '-search.disableCache',
        '-loggerLevel=WARN',
        ...(options.extraArgs ?? []),
      ],
    });
    const url = daemon.url;
    return {
      url,
      output: daemon.output,
      async importOpenMetrics(files) {
        for (const file of files) {
          const body = openMetricsToPrometheusText(readFileSync(file, 'utf8'));
          const res = await fetch(`${url}/api/v1/import/prometheus`, { method: 'POST', body });
          if (!res.ok)
            throw new Error(`import of ${file} failed: ${res.status} ${await res.text()}\n${daemon.output()}`);
        }
        const flushed = await fetch(`${url}/internal/force_flush`);
        if (!flushed.ok) throw new Error(`/internal/force_flush failed: ${flushed.status} ${await flushed.text()}`);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await daemon.stop();
        rmSync(storage, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(storage, { recursive: true, force: true });
    throw error;
  }
}

/**
 * OpenMetrics text as VictoriaMetrics' `/api/v1/import/prometheus` reads it (Prometheus text format): every
 * sample's timestamp from seconds (OpenMetrics, decimals allowed) to whole milliseconds (Prometheus text, as
 * promtool converts them), and
 * the `# EOF` terminator dropped. VictoriaMetrics 1.79.5 guesses seconds from a timestamp's size and accepts the
 * terminator as a comment; neither is left to its guess. Other comment lines (`# HELP`, `# TYPE`, `# UNIT`) pass
 * unchanged: they carry no samples. A sample with an exemplar or more than a value and a timestamp is refused.
 */
export function openMetricsToPrometheusText(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line === '# EOF') continue;
    if (line.startsWith('#')) {
      out.push(line);
      continue;
    }
    const seriesEnd = endOfSeries(line);
    const fields = line.slice(seriesEnd).trim().split(/\s+/);
    if (fields.length === 1) {
      out.push(line);
      continue;
    }
    const [value, timestamp] = fields;
    if (fields.length !== 2 || value === undefined || timestamp === undefined)
      throw new Error(`unexpected OpenMetrics sample line: ${line}`);
    out.push(`${line.slice(0, seriesEnd)} ${value} ${secondsToMilliseconds(timestamp)}`);
  }
  out.push('');
  return out.join('\n');
}

/** The index just past a sample line's name and label set (quoted label values may hold `}` and spaces). */
function endOfSeries(line: string): number {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  if (brace === -1 || (space !== -1 && space < brace)) return space === -1 ? line.length : space;
  let quoted = false;
  for (let i = brace + 1; i < line.length; i++) {
    const c = line[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === '}') return i + 1;
  }
  throw new Error(`unterminated label set: ${line}`);
}

/**
 * Seconds to whole milliseconds as promtool's OpenMetrics parser converts them (`int64(ts * 1000)` on a float64:
 * the product truncated toward zero), so both servers hold samples at the same millisecond.
 */
function secondsToMilliseconds(seconds: string): string {
  const value = Number(seconds);
  if (!Number.isFinite(value) || !/^-?\d+(\.\d*)?$/.test(seconds))
    throw new Error(`unexpected OpenMetrics timestamp: ${seconds}`);
  return String(Math.trunc(value * 1000));
}
