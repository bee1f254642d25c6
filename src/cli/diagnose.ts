/**
 * `workqueue-doctor diagnose`: a one-shot diagnosis from a recording, live targets or a Prometheus URL.
 * Exit codes (exit-codes.ts, fail-on.ts): 0 nothing `--fail-on` counts; 1 a counted finding; 2 nothing could
 * be diagnosed (no target read, a Prometheus without work-queue series) or a usage error; 3 no counted finding
 * but a rule that could not be judged, when `--fail-on` counts unknown (the default).
 *
 * Live targets (`--target`): the first scrape round decides at once whether anything can be read; when
 * every target fails, the command exits 2 with one line per target naming its URL and the cause, without
 * waiting for the window. While the window runs, a progress line is shown on stderr when it is a terminal
 * (nothing otherwise). `--record FILE` writes the scraped window as a recording that `--recording FILE`
 * reads back.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { Option } from 'commander';
import { ConfigError } from '../config/config-error.js';
import type { ServiceConfig } from '../config/service-config.js';
import { DEFAULT_PROMETHEUS_TIMEOUT } from '../config/service-defaults.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { renderTextReport } from '../diagnosis/text-report.js';
import { staticTargets } from '../discovery/static.js';
import { ExpositionError } from '../exposition/exposition-error.js';
import { MISSING_EOF_REASON, MISSING_TIMESTAMP_REASON } from '../exposition/parser.js';
import { PrometheusApiError } from '../prometheus/prometheus-api.js';
import { redactUrl } from '../scrape/scrape-error.js';
import { DEFAULT_DIAGNOSE_SCRAPE_INTERVAL } from '../scrape/scrape-settings.js';
import { diagnoseSource, NoWorkQueueSeriesError } from '../service/diagnose-source.js';
import { prometheusClientOptions, prometheusSourceFor, scrapeSourceFor } from '../service/source-factory.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import type { ScrapeSource } from '../sources/scrape-source.js';
import type { MetricsSource } from '../sources/source.js';
import { DEFAULT_LOOKBACK_DELTA_MS } from '../store/history.js';
import { historyToRecording } from '../store/history-recording.js';
import { formatDuration, ParseError, parseDuration, parseTime } from '../util/duration.js';
import { loadCommandConfig } from './config-file.js';
import { EXIT, UsageError } from './exit-codes.js';
import { DEFAULT_FAIL_ON, exitCodeFor, parseFailOn } from './fail-on.js';
import { flagValue } from './flag-values.js';
import { readTextFile } from './input-files.js';
import { cannotWrite, isFileSystemError } from './output-files.js';
import { prometheusFailureLine } from './prometheus-failure.js';
import { oneLine } from './run-program.js';
import { addScrapeLimitOptions } from './scrape-options.js';

type PrometheusSource = Extract<ServiceConfig['source'], { kind: 'prometheus' }>;

type DiagnoseFlags = {
  recording?: string;
  target?: string[];
  prometheusUrl?: string;
  prometheusEngine?: string;
  prometheusRecordedSeries?: string;
  at?: string;
  window: string;
  scrapeInterval?: string;
  /** The former name of `scrapeInterval`. */
  interval?: string;
  record?: string;
  output: 'text' | 'json';
  failOn: string;
  config?: string;
  runbookBaseUrl?: string;
  bearerTokenFile?: string;
  caFile?: string;
  insecureSkipVerify?: boolean;
  header?: string[];
  basicAuthUser?: string;
  basicAuthPasswordFile?: string;
  timeout?: string;
  /** The scrape limits (scrape-options.ts), read by the configuration. */
  scrapeMaxBytes?: string;
  scrapeConcurrency?: string;
  scrapeSeriesLimit?: string;
  scrapeLabelValueLimit?: string;
  scrapeLabelLimit?: string;
  scrapeQueueLimit?: string;
};

/** Where the progress line goes: stderr, shown only when `isTTY`. */
export type ProgressStream = { readonly isTTY?: boolean; write(chunk: string): unknown };

export function registerDiagnoseCommand(program: Command): void {
  const command = program
    .command('diagnose')
    .description(
      'Diagnose work queues once, from a recording, live targets or Prometheus, and print a report. Exit code 0: nothing --fail-on counts; 1: a counted finding; 2: nothing could be diagnosed (no target read, no work-queue series in Prometheus) or a usage error; 3: no counted finding, but a rule could not be judged for lack of data (with --fail-on unknown, the default).',
    )
    .option('--recording <file>', 'a recording (OpenMetrics with timestamps), e.g. from `simulate` or `--record`')
    .option('--target <url...>', 'live /metrics URLs to scrape for --window')
    .option(
      '--prometheus-url <url>',
      'a Prometheus-compatible API (Prometheus, Thanos, Mimir, Cortex, VictoriaMetrics)',
    )
    .option(
      '--prometheus-engine <engine>',
      'its query engine: prometheus, victoriametrics or auto (ask it; the default)',
    )
    .option(
      '--prometheus-recorded-series <mode>',
      'whether signals are read from the series of the generated recording rules: auto (where it holds them; the default), on or off',
    )
    .option(
      '--at <time>',
      'evaluation time, RFC 3339 or unix seconds, within the recording (default: end of the recording, or now)',
    )
    .option('--window <duration>', 'live targets: how long to scrape before diagnosing', '2m')
    .option(
      '--scrape-interval <duration>',
      `live targets: scrape interval (default ${DEFAULT_DIAGNOSE_SCRAPE_INTERVAL})`,
    )
    .addOption(new Option('--interval <duration>', 'the former name of --scrape-interval').hideHelp())
    .option('--record <file>', 'live targets: also write the scraped window as a recording (for --recording)')
    .addOption(new Option('-o, --output <format>', 'report format').choices(['text', 'json']).default('text'))
    .option(
      '--fail-on <list>',
      'what makes the exit code non-zero, comma-separated: warning or critical (lowest severity of a firing finding: exit 1), pending (pending findings count as firing ones), unknown (a rule without the data to judge it: exit 3)',
      DEFAULT_FAIL_ON,
    )
    .option(
      '--config <file>',
      'the configuration file every command reads (see deploy/config-example.yaml): diagnose reads rules:, queues:, selector:, runbookBaseUrl, scrape.* and prometheus.*; flags win over it',
    )
    .option(
      '--runbook-base-url <url>',
      `base URL of the runbooks linked from findings (default ${DEFAULT_RUNBOOK_BASE_URL})`,
    )
    .option('--bearer-token-file <file>', 'bearer token sent to targets or Prometheus (re-read when it changes)')
    .option('--ca-file <file>', 'CA certificate bundle for HTTPS targets or Prometheus')
    .option('--insecure-skip-verify', 'do not verify TLS certificates')
    .option('--header <header...>', 'extra header for Prometheus, "Name: value" (e.g. "X-Scope-OrgID: team-a")')
    .option('--basic-auth-user <user>', 'Prometheus basic-auth user')
    .option('--basic-auth-password-file <file>', 'file holding the Prometheus basic-auth password')
    .option(
      '--timeout <duration>',
      `timeout of each request to Prometheus (default ${DEFAULT_PROMETHEUS_TIMEOUT}) or a target (at most 0.8 x --scrape-interval)`,
    )
    .option(
      '--fleet-selector <matchers>',
      'Prometheus: label matchers added to every query, e.g. \'job=~"my-operator.*"\' (selector: in --config)',
    );
  addScrapeLimitOptions(command, 'live targets: ', false).action(async (flags: DiagnoseFlags) => {
    process.exitCode = await runDiagnose(flags, process.stderr);
  });
}

async function runDiagnose(flags: DiagnoseFlags, progress: ProgressStream): Promise<number> {
  const modes = [flags.recording, flags.target, flags.prometheusUrl].filter((m) => m !== undefined);
  if (modes.length !== 1) throw new UsageError('give exactly one of --recording, --target or --prometheus-url');
  if (flags.target === undefined) {
    for (const [flag, given] of [
      ['--record', flags.record],
      ['--scrape-interval', flags.scrapeInterval ?? flags.interval],
    ] as const) {
      if (given !== undefined) throw new UsageError(`${flag} goes with --target`);
    }
  }
  if (flags.target !== undefined && flags.at !== undefined) {
    throw new UsageError(
      '--at goes with --recording or --prometheus-url; live targets are diagnosed at the end of --window',
    );
  }
  const failOn = parseFailOn(flags.failOn);
  const config = await loadDiagnoseConfig(flags);
  const atOption = flags.at === undefined ? undefined : flagValue('--at', () => parseTime(flags.at as string));
  let source: MetricsSource | undefined;
  try {
    source = await openSource(flags, config, progress);
    if (source === undefined) return EXIT.usage;
    if (atOption !== undefined && source.kind === 'recording') checkWithin(atOption, source, flags.recording as string);
    const report = await diagnoseSource(source, {
      ...(atOption !== undefined ? { atMs: atOption } : {}),
      runbookBaseUrl: config.runbookBaseUrl,
      overrides: config.overrides,
    });
    process.stdout.write(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderTextReport(report));
    return exitCodeFor(report, failOn);
  } catch (error) {
    if (error instanceof PrometheusApiError && config.source.kind === 'prometheus') {
      const where = config.origins['prometheus.url'] ?? '--prometheus-url';
      process.stderr.write(`workqueue-doctor: ${prometheusFailureLine(where, config.source.url, error)}\n`);
      return EXIT.usage;
    }
    if (error instanceof ExpositionError || error instanceof NoWorkQueueSeriesError) {
      process.stderr.write(`workqueue-doctor: ${oneLine(error.message)}\n`);
      return EXIT.usage;
    }
    throw error;
  } finally {
    await source?.close();
  }
}

/**
 * `--at` must fall within the recording's data, or within the lookback after its last sample (where its
 * last values still hold, as in Prometheus).
 */
function checkWithin(atMs: number, source: MetricsSource, file: string): void {
  const range = source.dataRange();
  if (range === undefined) return;
  if (atMs < range.startMs || atMs > range.endMs + DEFAULT_LOOKBACK_DELTA_MS) {
    throw new UsageError(
      `--at ${new Date(atMs).toISOString()} is outside the recording ${file}, which runs from ${new Date(range.startMs).toISOString()} to ${new Date(range.endMs).toISOString()}`,
    );
  }
}

/** Parse failures that say the file is not a recording at all: most often a single /metrics page saved by hand. */
const NOT_A_RECORDING_REASONS: readonly string[] = [MISSING_TIMESTAMP_REASON, MISSING_EOF_REASON];
const NOT_A_RECORDING_HINT =
  'A recording is samples over time: OpenMetrics with a timestamp on every sample, ending in `# EOF`, as `workqueue-doctor diagnose --target URL --record FILE` and `workqueue-doctor simulate` write it. A single /metrics page holds no rates to judge: to diagnose a controller from its page, scrape it over a window instead (`workqueue-doctor diagnose --target URL --window 2m`).';

/** The source to diagnose; undefined when no live target could be scraped (already reported). */
async function openSource(
  flags: DiagnoseFlags,
  config: ServiceConfig,
  progress: ProgressStream,
): Promise<MetricsSource | undefined> {
  if (flags.recording !== undefined) {
    const text = await readTextFile(flags.recording, '--recording');
    if (text.trim() === '') {
      throw new UsageError(
        `--recording ${flags.recording}: the file is empty; record one with \`workqueue-doctor diagnose --target URL --record FILE\` or \`workqueue-doctor simulate --scenario NAME --record FILE\``,
        { hint: false },
      );
    }
    try {
      return recordingSourceFromText(text, flags.recording);
    } catch (error) {
      if (error instanceof ExpositionError && NOT_A_RECORDING_REASONS.includes(error.reason))
        throw new UsageError(`--recording ${oneLine(error.message)}. ${NOT_A_RECORDING_HINT}`, { hint: false });
      throw error;
    }
  }
  if (config.source.kind === 'prometheus') {
    const source = config.source as PrometheusSource;
    const clientOptions = await asUsage(() => prometheusClientOptions(config, source));
    return usage(() => prometheusSourceFor(config, clientOptions, source));
  }
  const windowMs = flagValue('--window', () => parseDuration(flags.window));
  const intervalMs = config.scrape.intervalMs;
  const intervalFlag = flags.interval !== undefined ? '--interval' : '--scrape-interval';
  if (windowMs < intervalMs) throw new UsageError(`--window must be at least one ${intervalFlag}`);
  const targets = usage(() => staticTargets(flags.target ?? [], { job: 'workqueue-doctor-diagnose' }));
  // `--timeout` bounds a scrape too, below the interval; `scrape.timeout` (the file) says exactly.
  const timeoutMs =
    config.scrape.timeoutMs ??
    (flags.timeout === undefined
      ? undefined
      : Math.min(
          flagValue('--timeout', () => parseDuration(flags.timeout as string)),
          Math.floor(intervalMs * 0.8),
        ));
  const scrape = {
    ...config.scrape,
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    // The whole window is kept, whatever the retention.
    retentionMs: Math.max(config.scrape.retentionMs, windowMs + 2 * intervalMs),
  };
  const source = await asUsage(async () => scrapeSourceFor({ scrape }, { targets }));
  try {
    if (!(await scrapeWindow(source, windowMs, intervalMs, progress))) {
      for (const line of unreachableLines(source)) process.stderr.write(`workqueue-doctor: ${line}\n`);
      await source.close();
      return undefined;
    }
    if (flags.record !== undefined) await writeRecording(flags.record, source);
  } catch (error) {
    await source.close();
    throw error;
  }
  return source;
}

/**
 * Scrapes every target once, then at every interval until the window is over. Resolves false at once when
 * the first round read no target at all, true once the window is over.
 */
export async function scrapeWindow(
  source: Pick<ScrapeSource, 'scrapeOnce' | 'targets'>,
  windowMs: number,
  intervalMs: number,
  progress: ProgressStream,
): Promise<boolean> {
  const scrapes = Math.floor(windowMs / intervalMs) + 1;
  const show = progress.isTTY === true ? (line: string) => progress.write(`\r\x1b[K${line}`) : undefined;
  try {
    for (let i = 0; i < scrapes; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
      await source.scrapeOnce();
      const states = source.targets();
      if (i === 0 && states.length > 0 && states.every((t) => t.error !== undefined)) return false;
      show?.(
        progressLine(i + 1, scrapes, states.length, states.filter((t) => t.error !== undefined).length, intervalMs),
      );
    }
    return true;
  } finally {
    show?.('');
  }
}

/** `scraping 2 targets: 3 of 25 scrapes, 1m50s left` (and how many targets fail, if any). */
export function progressLine(
  done: number,
  total: number,
  targets: number,
  failing: number,
  intervalMs: number,
): string {
  const left = formatDuration((total - done) * intervalMs);
  const failed = failing > 0 ? `, ${failing} failing` : '';
  return `scraping ${targets} target${targets === 1 ? '' : 's'}${failed}: ${done} of ${total} scrapes, ${left} left`;
}

/** One line per target: `cannot scrape <url>: <cause>`, the URL without credentials. */
function unreachableLines(source: ScrapeSource): string[] {
  return source.health().map((h) => {
    const url = redactUrl(h.url);
    const message = (h.lastError?.message ?? 'no data').replace(/^GET /, '');
    const cause = message.startsWith(`${url}: `) ? message.slice(url.length + 2) : message;
    return `cannot scrape ${url}: ${oneLine(cause, 200)}`;
  });
}

async function writeRecording(file: string, source: ScrapeSource): Promise<void> {
  try {
    await writeFile(file, historyToRecording(source.history));
  } catch (error) {
    if (isFileSystemError(error)) throw cannotWrite('--record', file, error);
    throw error;
  }
}

/**
 * The configuration of `--config` (the one file of every command; keys are checked as for `serve`), with the
 * flags above it. Diagnose reads no `WQD_` variable; its source is the one flag of --recording, --target and
 * --prometheus-url, and `--timeout` is Prometheus's request timeout in Prometheus mode.
 */
async function loadDiagnoseConfig(flags: DiagnoseFlags): Promise<ServiceConfig> {
  if (flags.scrapeInterval !== undefined && flags.interval !== undefined && flags.scrapeInterval !== flags.interval)
    throw new UsageError('--interval is the former name of --scrape-interval: give one of them');
  const { recording: _recording, timeout, interval, ...settings } = flags;
  const settingFlags = {
    ...settings,
    scrapeInterval: flags.scrapeInterval ?? interval,
    ...(flags.prometheusUrl !== undefined ? { prometheusTimeout: timeout } : {}),
  };
  return loadCommandConfig(settingFlags, {
    scrapeIntervalDefault: DEFAULT_DIAGNOSE_SCRAPE_INTERVAL,
    ...(flags.recording !== undefined ? { otherSource: `the recording ${flags.recording} (--recording)` } : {}),
  });
}

/** Runs a step that reads the configuration, turning its `ConfigError` into a usage error. */
async function asUsage<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

/** Runs a parser of user input, turning its error into a usage error. */
function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ParseError || error instanceof TypeError || error instanceof RangeError) {
      throw new UsageError(error.message);
    }
    throw error;
  }
}
