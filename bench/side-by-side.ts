/**
 * The service side by side with a real Prometheus scraping the same live fleet: whole-process CPU, RSS and the
 * time of one evaluation of each, at 100 and 1,000 queues.
 *
 * The fleet: synthetic controller managers (bench/synthetic-managers.ts) of 100 controllers each (1 manager for
 * 100 queues, 10 for 1,000), served live on loopback by one request handler listening on one free 127.0.0.1 port
 * per manager (so that each manager is its own `instance`, as real managers are), manager `m`'s page at
 * `/m<m>/metrics`, its counters going on from the fleet's start.
 *
 * Both scrape every manager every 15 s:
 * - the service: the built CLI, `serve --target <each manager URL> --listen 127.0.0.1:0`, with its default
 *   scrape interval (15 s), evaluation interval (15 s), retention (30 minutes) and log level; no memory limit is
 *   given, so on a machine without a cgroup limit the fixed scrape limits are in force;
 * - Prometheus (the Debian package, `test/support/prometheus.ts`): job `static` (the service's job label) over the
 *   same URLs at `scrape_interval: 15s`, `evaluation_interval: 30s`, loading a copy of the committed
 *   `alerts/workqueue-doctor.rules.yaml` (the generated recording and alerting rules, one group at 30 s).
 *
 * After a warm-up (default 2 minutes), over a steady window (default 8 minutes), for each process: CPU seconds
 * (utime + stime of `/proc/<pid>/stat`, in clock ticks of `getconf CLK_TCK`) as a share of one core over the
 * window; RSS at the window's end (`VmRSS`) and its peak since the start (`VmHWM`). The service's evaluations:
 * the mean of `workqueue_doctor_evaluation_duration_seconds` (sum and count read at both ends of the window) and
 * its CPU per evaluation (its CPU over the window ÷ the evaluations in it). Prometheus's rule group: the median of
 * `prometheus_rule_group_last_duration_seconds` (and `…_last_evaluation_samples`) over the group's evaluations in
 * the window, read from its own `/metrics` every 5 s. The series each holds: the service's samples per scrape
 * (the sum of `samples` over `/api/v1/targets`), Prometheus's `sum(scrape_samples_scraped)` and
 * `prometheus_tsdb_head_series` (which adds its `up` and `scrape_*` series and the rules' series). Checked at the
 * end: the service diagnosed every queue (`/api/v1/diagnosis`) with every target up, Prometheus holds every
 * queue's depth and every target up, and its rule group evaluated without failures.
 *
 * The goals (per run, at each size): the service's whole-process CPU is no more than Prometheus's; at 1,000
 * queues the service's peak RSS is at most 300 MiB and at most Prometheus's peak RSS in the same run.
 *
 * Run: `npm run bench:side-by-side` (about 40 minutes with the defaults). BENCH_SIDE_QUEUES picks the sizes
 * (default `100,1000`), BENCH_SIDE_RUNS the runs of each (default 2), BENCH_SIDE_MINUTES the steady window
 * (default 8) and BENCH_SIDE_WARMUP_MINUTES the warm-up (default 2). The load average (`/proc/loadavg`) is
 * printed at the start and the end of each measurement: the two processes share the machine with the driver
 * (which serves the fleet's pages) and whatever else runs on it.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { closeServer } from '../test/support/local-server.js';
import { type PrometheusHandle, removeTempDirs, startPrometheus } from '../test/support/prometheus.js';
import { builtCli, firstLine, median, peakRssOf, type Running, rssOf, run } from './service-process.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const QUEUES_PER_MANAGER = 100;
const SIZES = (process.env.BENCH_SIDE_QUEUES ?? '100,1000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_SIDE_RUNS ?? 2);
const WINDOW_S = Number(process.env.BENCH_SIDE_MINUTES ?? 8) * 60;
const WARMUP_S = Number(process.env.BENCH_SIDE_WARMUP_MINUTES ?? 2) * 60;
const SCRAPE_INTERVAL = '15s';
const RULE_EVALUATION_INTERVAL = '30s';
/** The service's job label for static targets; Prometheus's job is named the same, so the series are the same. */
const JOB = 'static';
const GROUP = 'workqueue-doctor';
const SAMPLE_EVERY_MS = 5_000;
const GOALS = { peakRssMiB: 300, rssGoalQueues: 1_000 } as const;
const MiB = 2 ** 20;
const RULES_FILE = new URL('../alerts/workqueue-doctor.rules.yaml', import.meta.url);
const CLOCK_TICKS_PER_SECOND = clockTicksPerSecond();

function clockTicksPerSecond(): number {
  const answer = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const ticks = Number(answer.stdout.trim());
  if (answer.status !== 0 || !Number.isFinite(ticks) || ticks <= 0) throw new Error('getconf CLK_TCK failed');
  return ticks;
}

/** CPU seconds (user + system) a live process has used since it started. */
function cpuSecondsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces), from field 3 (state) on: utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

// ---------------------------------------------------------------------------------------------------
// The fleet.

type Fleet = { readonly urls: readonly string[]; readonly addresses: readonly string[]; close(): Promise<void> };

/** `managers` synthetic managers, manager `m` on its own 127.0.0.1 port at `/m<m>/metrics`. */
async function startFleet(managers: number): Promise<Fleet> {
  const startMs = Date.now();
  const queuesOf = Array.from({ length: managers }, (_, m) => profiles(m, QUEUES_PER_MANAGER));
  const handler: http.RequestListener = (req, res) => {
    const manager = /^\/m(\d+)\/metrics$/.exec(req.url ?? '')?.[1];
    const queues = manager === undefined ? undefined : queuesOf[Number(manager)];
    if (queues === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(syntheticPage(queues, (Date.now() - startMs) / 1000));
  };
  const servers = await Promise.all(
    queuesOf.map(async () => {
      const server = http.createServer(handler);
      await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
      return server;
    }),
  );
  const addresses = servers.map((s) => `127.0.0.1:${(s.address() as AddressInfo).port}`);
  return {
    addresses,
    urls: addresses.map((address, m) => `http://${address}/m${m}/metrics`),
    close: async () => {
      await Promise.all(servers.map(closeServer));
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The two processes.

type Service = Running & { readonly url: string; readonly pid: number };

async function startService(cli: string, urls: readonly string[]): Promise<Service> {
  const running = run([
    cli,
    'serve',
    '--target',
    ...urls,
    '--listen',
    '127.0.0.1:0',
    '--scrape-interval',
    SCRAPE_INTERVAL,
  ]);
  try {
    const listen = await firstLine(running.proc, (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; listen?: string };
        return entry.msg === 'listening' ? entry.listen : undefined;
      } catch {
        return undefined;
      }
    });
    return { ...running, url: `http://${listen}`, pid: running.proc.pid as number };
  } catch (error) {
    await running.stop();
    throw error;
  }
}

function prometheusConfig(fleet: Fleet, rulesFile: string): string {
  return stringify({
    global: { scrape_interval: SCRAPE_INTERVAL, evaluation_interval: RULE_EVALUATION_INTERVAL },
    rule_files: [rulesFile],
    scrape_configs: [
      {
        job_name: JOB,
        static_configs: fleet.addresses.map((address, m) => ({
          targets: [address],
          labels: { __metrics_path__: `/m${m}/metrics` },
        })),
      },
    ],
  });
}

/** The pid of the Prometheus listening at `url` (the test helper does not hand it out): from its command line. */
function prometheusPid(url: string): number {
  const listen = `--web.listen-address=${new URL(url).host}`;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (args.includes(listen) && /prometheus$/.test(args[0] ?? '')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  throw new Error(`no process found listening with ${listen}`);
}

// ---------------------------------------------------------------------------------------------------
// Reading /metrics pages and the APIs.

/** The values of the samples of `name` (exactly; no suffix) whose labels contain `labelPart`. */
function sampleValues(page: string, name: string, labelPart = ''): number[] {
  const values: number[] = [];
  for (const line of page.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== '{' && rest[0] !== ' ') continue;
    const labelsEnd = rest[0] === '{' ? rest.lastIndexOf('}') : 0;
    if (!rest.slice(0, labelsEnd + 1).includes(labelPart)) continue;
    const valueAndTime = rest.slice(labelsEnd + 1).trim();
    values.push(Number(valueAndTime.split(' ')[0]));
  }
  return values;
}

function oneValue(page: string, name: string, labelPart = ''): number {
  const values = sampleValues(page, name, labelPart);
  if (values.length !== 1) throw new Error(`expected one sample of ${name}${labelPart}, found ${values.length}`);
  return values[0] as number;
}

async function textOf(url: string): Promise<string> {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`GET ${url}: ${answer.status}`);
  return answer.text();
}

async function jsonOf<T>(url: string): Promise<T> {
  const answer = await fetch(url);
  if (!answer.ok) throw new Error(`GET ${url}: ${answer.status}`);
  return (await answer.json()) as T;
}

type ServiceTargets = { targets?: Array<{ up: boolean; samples: number | null; lastError: { code: string } | null }> };
type ServiceReport = { queues: Array<{ status: string }>; errors?: unknown[] };

/** The rule group's label, as Prometheus writes it: `<file>;<group>`. */
const GROUP_LABEL = `;${GROUP}"`;

type Readings = {
  serviceCpuS: number;
  prometheusCpuS: number;
  evaluationSumS: number;
  evaluations: number;
  ruleGroupIterations: number;
  ruleGroupFailures: number;
  atMs: number;
};

async function readings(
  service: Service,
  prometheus: PrometheusHandle,
  prometheusPidNumber: number,
): Promise<Readings> {
  const [servicePage, prometheusPage] = await Promise.all([
    textOf(`${service.url}/metrics`),
    textOf(`${prometheus.url}/metrics`),
  ]);
  return {
    serviceCpuS: cpuSecondsOf(service.pid),
    prometheusCpuS: cpuSecondsOf(prometheusPidNumber),
    evaluationSumS: oneValue(servicePage, 'workqueue_doctor_evaluation_duration_seconds_sum'),
    evaluations: oneValue(servicePage, 'workqueue_doctor_evaluation_duration_seconds_count'),
    ruleGroupIterations: oneValue(prometheusPage, 'prometheus_rule_group_iterations_total', GROUP_LABEL),
    ruleGroupFailures: sampleValues(prometheusPage, 'prometheus_rule_evaluation_failures_total', GROUP_LABEL).reduce(
      (a, b) => a + b,
      0,
    ),
    atMs: Date.now(),
  };
}

type RuleGroupEvaluation = { durationS: number; samples: number };

/** The rule group's last evaluation as Prometheus's /metrics tells it, keyed by its time. */
async function lastRuleGroupEvaluation(
  prometheus: PrometheusHandle,
): Promise<{ atS: number; evaluation: RuleGroupEvaluation } | undefined> {
  const page = await textOf(`${prometheus.url}/metrics`);
  const atS = oneValue(page, 'prometheus_rule_group_last_evaluation_timestamp_seconds', GROUP_LABEL);
  if (atS <= 0) return undefined;
  return {
    atS,
    evaluation: {
      durationS: oneValue(page, 'prometheus_rule_group_last_duration_seconds', GROUP_LABEL),
      samples: oneValue(page, 'prometheus_rule_group_last_evaluation_samples', GROUP_LABEL),
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// One measurement.

type Row = {
  run: number;
  queues: number;
  windowS: number;
  loadStart: string;
  loadEnd: string;
  serviceSeries: number;
  prometheusScraped: number;
  prometheusHeadSeries: number;
  serviceQueues: number;
  serviceTargetsUp: number;
  prometheusQueues: number;
  prometheusTargetsUp: number;
  targets: number;
  serviceCpuS: number;
  prometheusCpuS: number;
  serviceRss: number;
  servicePeakRss: number;
  prometheusRss: number;
  prometheusPeakRss: number;
  evaluations: number;
  evaluationMeanS: number;
  ruleGroupEvaluations: number;
  ruleGroupMedianS: number;
  ruleGroupSamples: number;
  ruleGroupFailures: number;
};

async function measure(cli: string, queues: number, runNumber: number): Promise<Row> {
  const loadStart = loadAverage();
  const managers = queues / QUEUES_PER_MANAGER;
  const rulesDir = mkdtempSync(join(tmpdir(), 'wqd-bench-side-'));
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const rulesFile = join(rulesDir, 'workqueue-doctor.rules.yaml');
    copyFileSync(RULES_FILE, rulesFile);
    const fleet = await startFleet(managers);
    cleanups.push(() => fleet.close());
    const service = await startService(cli, fleet.urls);
    cleanups.push(() => service.stop());
    const prometheus = await startPrometheus({ configYaml: prometheusConfig(fleet, rulesFile) });
    cleanups.push(() => prometheus.stop());
    const prometheusPidNumber = prometheusPid(prometheus.url);
    process.stderr.write(
      `side-by-side: run ${runNumber}, ${queues} queues: service pid ${service.pid}, Prometheus pid ${prometheusPidNumber}; warming up ${WARMUP_S} s\n`,
    );
    await sleep(WARMUP_S * 1000);

    const start = await readings(service, prometheus, prometheusPidNumber);
    const ruleGroup = new Map<number, RuleGroupEvaluation>();
    const windowEndMs = start.atMs + WINDOW_S * 1000;
    const startS = start.atMs / 1000;
    while (Date.now() < windowEndMs) {
      await sleep(Math.min(SAMPLE_EVERY_MS, Math.max(0, windowEndMs - Date.now())));
      const last = await lastRuleGroupEvaluation(prometheus);
      if (last !== undefined && last.atS >= startS && last.atS * 1000 <= windowEndMs) {
        ruleGroup.set(last.atS, last.evaluation);
      }
      if (service.proc.exitCode !== null) throw new Error(`the service exited:\n${service.output()}`);
    }
    const end = await readings(service, prometheus, prometheusPidNumber);
    const serviceRss = rssOf(service.pid);
    const servicePeakRss = peakRssOf(service.pid);
    const prometheusRss = rssOf(prometheusPidNumber);
    const prometheusPeakRss = peakRssOf(prometheusPidNumber);

    const targets = await jsonOf<ServiceTargets>(`${service.url}/api/v1/targets`);
    const report = await jsonOf<ServiceReport>(`${service.url}/api/v1/diagnosis`);
    const nowS = Date.now() / 1000;
    const scalar = async (expr: string) => (await prometheus.query(expr, nowS))[0]?.value ?? 0;
    const prometheusPage = await textOf(`${prometheus.url}/metrics`);
    const evaluations = end.evaluations - start.evaluations;
    const durations = [...ruleGroup.values()];
    return {
      run: runNumber,
      queues,
      windowS: (end.atMs - start.atMs) / 1000,
      loadStart,
      loadEnd: loadAverage(),
      serviceSeries: (targets.targets ?? []).reduce((n, t) => n + (t.samples ?? 0), 0),
      prometheusScraped: await scalar(`sum(scrape_samples_scraped{job="${JOB}"})`),
      prometheusHeadSeries: oneValue(prometheusPage, 'prometheus_tsdb_head_series'),
      serviceQueues: report.queues.length,
      serviceTargetsUp: (targets.targets ?? []).filter((t) => t.up && t.lastError === null).length,
      prometheusQueues: await scalar(`count(sum without (priority) (workqueue_depth{job="${JOB}"}))`),
      prometheusTargetsUp: await scalar(`sum(up{job="${JOB}"})`),
      targets: managers,
      serviceCpuS: end.serviceCpuS - start.serviceCpuS,
      prometheusCpuS: end.prometheusCpuS - start.prometheusCpuS,
      serviceRss,
      servicePeakRss,
      prometheusRss,
      prometheusPeakRss,
      evaluations,
      evaluationMeanS: evaluations > 0 ? (end.evaluationSumS - start.evaluationSumS) / evaluations : Number.NaN,
      ruleGroupEvaluations: durations.length,
      ruleGroupMedianS: durations.length > 0 ? median(durations.map((d) => d.durationS)) : Number.NaN,
      ruleGroupSamples: durations.length > 0 ? median(durations.map((d) => d.samples)) : Number.NaN,
      ruleGroupFailures: end.ruleGroupFailures,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    removeTempDirs();
    rmSync(rulesDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------------
// Output.

const percentOfCore = (cpuS: number, windowS: number) => (100 * cpuS) / windowS;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;
const ms = (seconds: number) => `${(seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1)} ms`;
const met = (ok: boolean) => (ok ? 'met' : 'missed');

function cpuGoal(r: Row): boolean {
  return r.serviceCpuS <= r.prometheusCpuS;
}

function rssGoal(r: Row): { underCap: boolean; underPrometheus: boolean } {
  return {
    underCap: r.servicePeakRss <= GOALS.peakRssMiB * MiB,
    underPrometheus: r.servicePeakRss <= r.prometheusPeakRss,
  };
}

function printRows(rows: readonly Row[]): void {
  console.log(
    '| run | queues | series: service / Prometheus scraped (head) | service CPU % core | Prometheus CPU % core | ratio | service RSS end (peak) | Prometheus RSS end (peak) | ratio (peak) | service evaluation (mean) | Prometheus rule group (median last duration) | ratio |',
  );
  console.log('|---:|---:|---|---:|---:|---:|---|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const serviceCpu = percentOfCore(r.serviceCpuS, r.windowS);
    const prometheusCpu = percentOfCore(r.prometheusCpuS, r.windowS);
    console.log(
      `| ${r.run} | ${r.queues} | ${r.serviceSeries} / ${r.prometheusScraped} (${r.prometheusHeadSeries}) | ${serviceCpu.toFixed(1)} | ${prometheusCpu.toFixed(1)} | ${(r.serviceCpuS / r.prometheusCpuS).toFixed(2)} | ${mib(r.serviceRss)} (${mib(r.servicePeakRss)}) | ${mib(r.prometheusRss)} (${mib(r.prometheusPeakRss)}) | ${(r.servicePeakRss / r.prometheusPeakRss).toFixed(2)} | ${ms(r.evaluationMeanS)} | ${ms(r.ruleGroupMedianS)} | ${(r.evaluationMeanS / r.ruleGroupMedianS).toFixed(2)} |`,
    );
  }
  console.log(
    '\n| run | queues | window | load average start → end | service: queues diagnosed, targets up | Prometheus: queues held, targets up | service evaluations, CPU per evaluation | Prometheus rule group: evaluations, samples, failures |',
  );
  console.log('|---:|---:|---:|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.run} | ${r.queues} | ${r.windowS.toFixed(0)} s | ${r.loadStart} → ${r.loadEnd} | ${r.serviceQueues}, ${r.serviceTargetsUp}/${r.targets} | ${r.prometheusQueues}, ${r.prometheusTargetsUp}/${r.targets} | ${r.evaluations}, ${ms(r.serviceCpuS / r.evaluations)} | ${r.ruleGroupEvaluations}, ${r.ruleGroupSamples}, ${r.ruleGroupFailures} |`,
    );
  }
}

function printGoals(rows: readonly Row[]): void {
  console.log('');
  for (const r of rows) {
    const checks = [
      `the service's whole-process CPU no more than Prometheus's: ${met(cpuGoal(r))} (${r.serviceCpuS.toFixed(1)} s vs ${r.prometheusCpuS.toFixed(1)} s)`,
    ];
    if (r.queues === GOALS.rssGoalQueues) {
      const rss = rssGoal(r);
      checks.push(
        `peak RSS at most ${GOALS.peakRssMiB} MiB: ${met(rss.underCap)} (${mib(r.servicePeakRss)})`,
        `peak RSS at most Prometheus's: ${met(rss.underPrometheus)} (${mib(r.servicePeakRss)} vs ${mib(r.prometheusPeakRss)})`,
      );
    }
    const diagnosed =
      r.serviceQueues === r.queues && r.serviceTargetsUp === r.targets && r.prometheusQueues === r.queues
        ? ''
        : ' [not every queue held by both: see the table above]';
    console.log(`- run ${r.run}, ${r.queues} queues: ${checks.join('; ')}${diagnosed}`);
  }
  console.log('');
  for (const queues of new Set(rows.map((r) => r.queues))) {
    const runs = rows.filter((r) => r.queues === queues);
    const summary = [`CPU ${runs.filter(cpuGoal).length}/${runs.length}`];
    if (queues === GOALS.rssGoalQueues) {
      summary.push(
        `peak RSS <= ${GOALS.peakRssMiB} MiB ${runs.filter((r) => rssGoal(r).underCap).length}/${runs.length}`,
        `peak RSS <= Prometheus's ${runs.filter((r) => rssGoal(r).underPrometheus).length}/${runs.length}`,
      );
    }
    console.log(`${queues} queues, runs meeting each goal: ${summary.join(', ')}`);
  }
}

async function main(): Promise<void> {
  const cli = builtCli();
  const rows: Row[] = [];
  for (let runNumber = 1; runNumber <= RUNS; runNumber++) {
    for (const queues of SIZES) {
      if (!Number.isInteger(queues / QUEUES_PER_MANAGER) || queues <= 0) {
        throw new Error(`BENCH_SIDE_QUEUES: ${queues} is not a positive multiple of ${QUEUES_PER_MANAGER}`);
      }
      rows.push(await measure(cli, queues, runNumber));
    }
  }
  console.log(
    `Service: \`serve\` with scrape and evaluation every 15 s; Prometheus ${RULE_EVALUATION_INTERVAL} rule evaluation, 15 s scrape. Warm-up ${WARMUP_S} s, window ${WINDOW_S} s, ${CLOCK_TICKS_PER_SECOND} clock ticks/s.\n`,
  );
  printRows(rows);
  printGoals(rows);
}

await main();
