/**
 * `workqueue-doctor diagnose`: a one-shot diagnosis from a recording, live targets or a Prometheus URL.
 * Exit codes: 0 no finding at or above `--fail-on`; 1 at least one; 2 nothing could be diagnosed or a
 * usage error.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { Option } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { parseOverridesFile } from '../config/queue-overrides.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import type { Report } from '../diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { renderTextReport } from '../diagnosis/text-report.js';
import { staticTargets } from '../discovery/static.js';
import { ExpositionError } from '../exposition/exposition-error.js';
import { PrometheusApiError } from '../prometheus/prometheus-api.js';
import { diagnoseSource } from '../service/diagnose-source.js';
import { createPrometheusSource } from '../sources/prometheus-source.js';
import { openRecordingSource } from '../sources/recording-source.js';
import { createScrapeSource } from '../sources/scrape-source.js';
import type { MetricsSource } from '../sources/source.js';
import { ParseError, parseDuration, parseTime } from '../util/duration.js';
import { EXIT, UsageError } from './exit-codes.js';

type DiagnoseFlags = {
  recording?: string;
  target?: string[];
  prometheusUrl?: string;
  at?: string;
  window: string;
  interval: string;
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

export function registerDiagnoseCommand(program: Command): void {
  program
    .command('diagnose')
    .description(
      'Diagnose work queues once, from a recording, live targets or Prometheus, and print a report. Exit code 0: no finding at or above --fail-on; 1: at least one; 2: nothing could be diagnosed.',
    )
    .option('--recording <file>', 'a recording (OpenMetrics with timestamps), e.g. from `simulate`')
    .option('--target <url...>', 'live /metrics URLs to scrape for --window')
    .option('--prometheus-url <url>', 'a Prometheus-compatible API (Prometheus, Thanos, Mimir, Cortex)')
    .option('--at <time>', 'evaluation time, RFC 3339 or unix seconds (default: end of the recording, or now)')
    .option('--window <duration>', 'live targets: how long to scrape before diagnosing', '2m')
    .option('--interval <duration>', 'live targets: scrape interval', '5s')
    .addOption(new Option('--output <format>', 'report format').choices(['text', 'json']).default('text'))
    .addOption(
      new Option('--fail-on <severity>', 'lowest severity that makes the exit code 1')
        .choices(['warning', 'critical'])
        .default('warning'),
    )
    .option('--config <file>', 'YAML file with threshold overrides (the `rules:` and `queues:` sections)')
    .option('--runbook-base-url <url>', 'base URL of the runbooks linked from findings', DEFAULT_RUNBOOK_BASE_URL)
    .option('--bearer-token-file <file>', 'bearer token sent to targets or Prometheus (re-read when it changes)')
    .option('--ca-file <file>', 'CA certificate bundle for HTTPS targets or Prometheus')
    .option('--insecure-skip-verify', 'do not verify TLS certificates')
    .option('--header <header...>', 'extra header for Prometheus, "Name: value" (e.g. "X-Scope-OrgID: team-a")')
    .option('--basic-auth-user <user>', 'Prometheus basic-auth user')
    .option('--basic-auth-password-file <file>', 'file holding the Prometheus basic-auth password')
    .option('--timeout <duration>', 'timeout of each request to Prometheus or a target', '30s')
    .action(async (flags: DiagnoseFlags) => {
      process.exitCode = await runDiagnose(flags);
    });
}

async function runDiagnose(flags: DiagnoseFlags): Promise<number> {
  const modes = [flags.recording, flags.target, flags.prometheusUrl].filter((m) => m !== undefined);
  if (modes.length !== 1) throw new UsageError('give exactly one of --recording, --target or --prometheus-url');
  const overrides = await loadOverrides(flags.config);
  const atOption = flags.at === undefined ? undefined : usage(() => parseTime(flags.at as string));
  let source: MetricsSource | undefined;
  try {
    source = await openSource(flags);
    const report = await diagnoseSource(source, {
      ...(atOption !== undefined ? { atMs: atOption } : {}),
      runbookBaseUrl: flags.runbookBaseUrl,
      overrides,
    });
    process.stdout.write(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderTextReport(report));
    return exitCodeFor(report, flags.failOn);
  } catch (error) {
    if (error instanceof ExpositionError || error instanceof PrometheusApiError || isNodeFileError(error)) {
      process.stderr.write(`workqueue-doctor: ${error.message}\n`);
      return EXIT.usage;
    }
    throw error;
  } finally {
    await source?.close();
  }
}

async function openSource(flags: DiagnoseFlags): Promise<MetricsSource> {
  const timeoutMs = usage(() => parseDuration(flags.timeout));
  if (flags.recording !== undefined) return openRecordingSource(flags.recording);
  if (flags.prometheusUrl !== undefined) {
    return createPrometheusSource({
      url: flags.prometheusUrl,
      timeoutMs,
      headers: parseHeaders(flags.header ?? []),
      ...(flags.bearerTokenFile !== undefined ? { bearerTokenFile: flags.bearerTokenFile } : {}),
      ...(flags.caFile !== undefined ? { caFile: flags.caFile } : {}),
      ...(flags.insecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
      ...(flags.basicAuthUser !== undefined
        ? {
            basicAuth: {
              username: flags.basicAuthUser,
              password: (
                await readFile(requireFlag(flags.basicAuthPasswordFile, '--basic-auth-password-file'), 'utf8')
              ).trim(),
            },
          }
        : {}),
    });
  }
  const windowMs = usage(() => parseDuration(flags.window));
  const intervalMs = usage(() => parseDuration(flags.interval));
  if (intervalMs <= 0 || windowMs < intervalMs)
    throw new UsageError('--window must be at least one --interval, and --interval above 0');
  const targets = usage(() => staticTargets(flags.target ?? [], { job: 'workqueue-doctor-diagnose' }));
  const source = createScrapeSource({
    targets,
    intervalMs,
    timeoutMs: Math.min(timeoutMs, Math.floor(intervalMs * 0.8)),
    ...(flags.bearerTokenFile !== undefined ? { bearerTokenFile: flags.bearerTokenFile } : {}),
    ...(flags.caFile !== undefined ? { caFile: flags.caFile } : {}),
    ...(flags.insecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
  });
  const scrapes = Math.floor(windowMs / intervalMs) + 1;
  for (let i = 0; i < scrapes; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
    await source.scrapeOnce();
  }
  if (source.targets().every((t) => t.error !== undefined)) {
    const reasons = source
      .targets()
      .map((t) => `${t.name}: ${t.error?.message ?? 'no data'}`)
      .join('; ');
    await source.close();
    throw new UsageError(`no target could be scraped: ${reasons}`);
  }
  return source;
}

function exitCodeFor(report: Report, failOn: 'warning' | 'critical'): number {
  const failing = report.queues.some((q) =>
    q.findings.some((f) => (failOn === 'warning' ? true : f.severity === 'critical')),
  );
  if (failing) return EXIT.findings;
  if (report.queues.length === 0 && report.errors.length > 0) return EXIT.usage;
  return EXIT.ok;
}

async function loadOverrides(file: string | undefined): Promise<RuleOverrides> {
  if (file === undefined) return {};
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --config ${file}: ${(error as Error).message}`);
  }
  try {
    return parseOverridesFile(text, file);
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

function isNodeFileError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && 'path' in error;
}
