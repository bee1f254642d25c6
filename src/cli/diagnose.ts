/**
 * `workqueue-doctor diagnose`: a one-shot diagnosis from a recording, live targets or a Prometheus URL.
 * Exit codes: 0 no finding at or above `--fail-on`; 1 at least one; 2 nothing could be diagnosed or a
 * usage error.
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
import { parseConfigFile } from '../config/config-layers.js';
import { parseOverrideSections } from '../config/queue-overrides.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import type { Report } from '../diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { renderTextReport } from '../diagnosis/text-report.js';
import { staticTargets } from '../discovery/static.js';
import { ExpositionError } from '../exposition/exposition-error.js';
import { PrometheusApiError } from '../prometheus/prometheus-api.js';
import { redactUrl } from '../scrape/scrape-error.js';
import { diagnoseSource } from '../service/diagnose-source.js';
import { createPrometheusSource } from '../sources/prometheus-source.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import { createScrapeSource, type ScrapeSource } from '../sources/scrape-source.js';
import type { MetricsSource } from '../sources/source.js';
import { DEFAULT_LOOKBACK_DELTA_MS } from '../store/history.js';
import { historyToRecording } from '../store/history-recording.js';
import { formatDuration, ParseError, parseDuration, parseTime } from '../util/duration.js';
import { EXIT, UsageError } from './exit-codes.js';
import { fileProblem, readTextFile } from './input-files.js';
import { oneLine } from './run-program.js';

type DiagnoseFlags = {
  recording?: string;
  target?: string[];
  prometheusUrl?: string;
  at?: string;
  window: string;
  scrapeInterval?: string;
  /** The former name of `scrapeInterval`. */
  interval?: string;
  record?: string;
  output: 'text' | 'json';
  failOn: 'warning' | 'critical';
  config?: string;
  runbookBaseUrl: string;
  bearerTokenFile?: string;
  caFile?: string;
  insecureSkipVerify?: boolean;
  header?: string[];
  basicAuthUser?: string;
  basicAuthPasswordFile?: string;
  timeout: string;
};

/** Where the progress line goes: stderr, shown only when `isTTY`. */
export type ProgressStream = { readonly isTTY?: boolean; write(chunk: string): unknown };

const DEFAULT_SCRAPE_INTERVAL = '5s';

export function registerDiagnoseCommand(program: Command): void {
  program
    .command('diagnose')
    .description(
      'Diagnose work queues once, from a recording, live targets or Prometheus, and print a report. Exit code 0: no finding at or above --fail-on; 1: at least one; 2: nothing could be diagnosed, or a usage error.',
    )
    .option('--recording <file>', 'a recording (OpenMetrics with timestamps), e.g. from `simulate` or `--record`')
    .option('--target <url...>', 'live /metrics URLs to scrape for --window')
    .option('--prometheus-url <url>', 'a Prometheus-compatible API (Prometheus, Thanos, Mimir, Cortex)')
    .option(
      '--at <time>',
      'evaluation time, RFC 3339 or unix seconds, within the recording (default: end of the recording, or now)',
    )
    .option('--window <duration>', 'live targets: how long to scrape before diagnosing', '2m')
    .option('--scrape-interval <duration>', `live targets: scrape interval (default ${DEFAULT_SCRAPE_INTERVAL})`)
    .addOption(new Option('--interval <duration>', 'the former name of --scrape-interval').hideHelp())
    .option('--record <file>', 'live targets: also write the scraped window as a recording (for --recording)')
    .addOption(new Option('-o, --output <format>', 'report format').choices(['text', 'json']).default('text'))
    .addOption(
      new Option('--fail-on <severity>', 'lowest severity that makes the exit code 1')
        .choices(['warning', 'critical'])
        .default('warning'),
    )
    .option(
      '--config <file>',
      "YAML file with threshold overrides (`rules:` and `queues:`); serve's configuration file is accepted as it is",
    )
    .option('--runbook-base-url <url>', 'base URL of the runbooks linked from findings', DEFAULT_RUNBOOK_BASE_URL)
    .option('--bearer-token-file <file>', 'bearer token sent to targets or Prometheus (re-read when it changes)')
    .option('--ca-file <file>', 'CA certificate bundle for HTTPS targets or Prometheus')
    .option('--insecure-skip-verify', 'do not verify TLS certificates')
    .option('--header <header...>', 'extra header for Prometheus, "Name: value" (e.g. "X-Scope-OrgID: team-a")')
    .option('--basic-auth-user <user>', 'Prometheus basic-auth user')
    .option('--basic-auth-password-file <file>', 'file holding the Prometheus basic-auth password')
    .option('--timeout <duration>', 'timeout of each request to Prometheus or a target', '30s')
    .action(async (flags: DiagnoseFlags) => {
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
  const overrides = await loadOverrides(flags.config);
  const atOption = flags.at === undefined ? undefined : usage(() => parseTime(flags.at as string));
  let source: MetricsSource | undefined;
  try {
    source = await openSource(flags, progress);
    if (source === undefined) return EXIT.usage;
    if (atOption !== undefined && source.kind === 'recording') checkWithin(atOption, source, flags.recording as string);
    const report = await diagnoseSource(source, {
      ...(atOption !== undefined ? { atMs: atOption } : {}),
      runbookBaseUrl: flags.runbookBaseUrl,
      overrides,
    });
    process.stdout.write(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderTextReport(report));
    return exitCodeFor(report, flags.failOn);
  } catch (error) {
    if (error instanceof PrometheusApiError) {
      // The expression is long and says nothing to the reader; the request and the cause do.
      process.stderr.write(`workqueue-doctor: ${oneLine(error.message.replace(/ \[expr: [\s\S]*\]$/, ''))}\n`);
      return EXIT.usage;
    }
    if (error instanceof ExpositionError) {
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

/** The source to diagnose; undefined when no live target could be scraped (already reported). */
async function openSource(flags: DiagnoseFlags, progress: ProgressStream): Promise<MetricsSource | undefined> {
  const timeoutMs = usage(() => parseDuration(flags.timeout));
  if (flags.recording !== undefined) {
    const text = await readTextFile(flags.recording, '--recording');
    return recordingSourceFromText(text, flags.recording);
  }
  if (flags.prometheusUrl !== undefined) {
    const basicAuth =
      flags.basicAuthUser === undefined
        ? undefined
        : {
            username: flags.basicAuthUser,
            password: (
              await readTextFile(
                requireFlag(flags.basicAuthPasswordFile, '--basic-auth-password-file'),
                '--basic-auth-password-file',
              )
            ).trim(),
          };
    return usage(() =>
      createPrometheusSource({
        url: flags.prometheusUrl as string,
        timeoutMs,
        headers: parseHeaders(flags.header ?? []),
        ...(flags.bearerTokenFile !== undefined ? { bearerTokenFile: flags.bearerTokenFile } : {}),
        ...(flags.caFile !== undefined ? { caFile: flags.caFile } : {}),
        ...(flags.insecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
        ...(basicAuth !== undefined ? { basicAuth } : {}),
      }),
    );
  }
  if (flags.scrapeInterval !== undefined && flags.interval !== undefined && flags.scrapeInterval !== flags.interval)
    throw new UsageError('--interval is the former name of --scrape-interval: give one of them');
  const windowMs = usage(() => parseDuration(flags.window));
  const intervalFlag = flags.interval !== undefined ? '--interval' : '--scrape-interval';
  const intervalMs = usage(() => parseDuration(flags.scrapeInterval ?? flags.interval ?? DEFAULT_SCRAPE_INTERVAL));
  if (intervalMs <= 0) throw new UsageError(`${intervalFlag} must be longer than 0`);
  if (windowMs < intervalMs) throw new UsageError(`--window must be at least one ${intervalFlag}`);
  const targets = usage(() => staticTargets(flags.target ?? [], { job: 'workqueue-doctor-diagnose' }));
  const source = createScrapeSource({
    targets,
    intervalMs,
    timeoutMs: Math.min(timeoutMs, Math.floor(intervalMs * 0.8)),
    ...(flags.bearerTokenFile !== undefined ? { bearerTokenFile: flags.bearerTokenFile } : {}),
    ...(flags.caFile !== undefined ? { caFile: flags.caFile } : {}),
    ...(flags.insecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
  });
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
    if (typeof (error as NodeJS.ErrnoException).code === 'string')
      throw new UsageError(`--record ${file}: cannot write: ${fileProblem(error)}`);
    throw error;
  }
}

function exitCodeFor(report: Report, failOn: 'warning' | 'critical'): number {
  const failing = report.queues.some((q) =>
    q.findings.some((f) => (failOn === 'warning' ? true : f.severity === 'critical')),
  );
  if (failing) return EXIT.findings;
  if (report.queues.length === 0 && report.errors.length > 0) return EXIT.usage;
  return EXIT.ok;
}

/**
 * The overrides of `--config`: the `rules:` and `queues:` sections of a YAML file, which may be serve's whole
 * configuration file (its keys are checked as serve checks them; its other settings are left aside).
 */
async function loadOverrides(file: string | undefined): Promise<RuleOverrides> {
  if (file === undefined) return {};
  const text = await readTextFile(file, '--config');
  try {
    const root = parseConfigFile(text, file);
    return parseOverrideSections(root['rules'], root['queues'], `${file}: `);
  } catch (error) {
    if (error instanceof ConfigError) throw new UsageError(error.message);
    throw error;
  }
}

function parseHeaders(headers: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const header of headers) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new UsageError(`--header "${header}": expected "Name: value"`);
    out[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  return out;
}

function requireFlag(value: string | undefined, flag: string): string {
  if (value === undefined) throw new UsageError(`${flag} is required with --basic-auth-user`);
  return value;
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
