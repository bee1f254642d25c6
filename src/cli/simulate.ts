/**
 * `workqueue-doctor simulate`: runs a named scenario on the reference queue.
 *
 * - `--list`: the scenarios, one line each, with the diagnoses each must produce.
 * - `--scenario NAME --out FILE`: virtual time (as fast as the CPU allows); writes the recording to
 *   FILE and its ground truth to FILE.truth.json.
 * - `--scenario NAME --realtime [--listen HOST:PORT]`: the real clock; serves live `/metrics` until
 *   SIGINT or SIGTERM.
 * - `--background off`: without the everyday noise every simulated process has by default (`BackgroundSpec`).
 * - `--queue classic|priority`: the queue the controllers run, honoured by every scenario and named in the
 *   truth file; default: the scenario's own (`Scenario.defaultQueue`), else controller-runtime's priority
 *   queue for the controller-runtime flavor, client-go's classic queue for component-base (its only one).
 */
import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { type Command, Option } from 'commander';
import { QUEUE_KINDS, type QueueKind } from '../simulate/controller-queue.js';
import { startLiveSimulation } from '../simulate/live.js';
import {
  BACKGROUND_MODES,
  type BackgroundMode,
  DEFAULT_BACKGROUND_MODE,
  DEFAULT_DURATION_MS,
  FLAVORS,
  type Flavor,
  queueKindsOf,
  type Scenario,
  type SimulationParams,
} from '../simulate/model.js';
import {
  DEFAULT_JOB,
  DEFAULT_SCRAPE_INTERVAL_MS,
  defaultInstance,
  getScenario,
  groundTruth,
  resolveParams,
  runVirtual,
  SimulationParamError,
} from '../simulate/run.js';
import { SCENARIOS } from '../simulate/scenarios/index.js';
import { formatDuration, ParseError, parseDuration, parseTime } from '../util/duration.js';
import { UsageError } from './exit-codes.js';
import { flagValue } from './flag-values.js';
import { cannotWrite, isFileSystemError } from './output-files.js';

interface SimulateFlags {
  list?: boolean;
  scenario?: string;
  duration?: string;
  seed?: string;
  scrapeInterval?: string;
  flavor?: string;
  background?: string;
  queue?: string;
  workers?: string;
  keys?: string;
  failingKeys?: string;
  pollingKeys?: string;
  listWrites?: string;
  statusAtMs?: string;
  invalidKeys?: string;
  backoffBaseMs?: string;
  loopKeys?: string;
  writesPerSync?: string;
  transientShare?: string;
  outageSeconds?: string;
  spikeSeconds?: string;
  batchSize?: string;
  relistAtSeconds?: string;
  blockingShare?: string;
  blockingSeconds?: string;
  syncMs?: string;
  rate?: string;
  start?: string;
  record?: string;
  /** The former name of `record`. */
  out?: string;
  job?: string;
  instance?: string;
  realtime?: boolean;
  listen?: string;
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description(
      'Run a named controller scenario on the reference work queue: on virtual time into a recording ' +
        '(OpenMetrics with timestamps, plus FILE.truth.json), or on the real clock serving live /metrics.',
    )
    .option('--list', 'list the scenarios and the diagnoses each must produce')
    .option('--scenario <name>', 'scenario to run (see --list)')
    .option('--duration <duration>', 'simulated time (Prometheus duration)', formatDuration(DEFAULT_DURATION_MS))
    .option('--seed <n>', 'random seed (integer >= 0)', '1')
    .option('--scrape-interval <duration>', 'time between recorded scrapes', formatDuration(DEFAULT_SCRAPE_INTERVAL_MS))
    .addOption(new Option('--flavor <flavor>', 'metrics flavor of the simulated process').default('controller-runtime'))
    .addOption(
      new Option(
        '--background <mode>',
        `everyday noise of a real process (conflicts, 404s, polling keys, resyncs, scrape jitter, pauses, sibling traffic): ${BACKGROUND_MODES.join(' or ')}`,
      ).default(DEFAULT_BACKGROUND_MODE),
    )
    .addOption(
      new Option(
        '--queue <kind>',
        `queue the controllers run: ${QUEUE_KINDS.join(' or ')} (default: the scenario's own, else priority for controller-runtime, classic for component-base)`,
      ),
    )
    .option('--workers <n>', "override the main controller's workers (max concurrent reconciles)")
    .option('--keys <n>', "override the main controller's number of objects")
    .option('--rate <r>', "override the main controller's watch events per second")
    .option(
      '--failing-keys <n>',
      'persistent-failure: objects whose every sync fails (default: a tenth of the objects)',
    )
    .option(
      '--invalid-keys <n>',
      'persistent-failure: objects whose spec the controller rejects with a terminal error, not retried (default: none)',
    )
    .option(
      '--polling-keys <n>',
      'persistent-failure: objects polled with RequeueAfter every 30 s, a fixed set beside the failing ones (default: none); slow-poll: objects polled every 4 minutes, each poll blocking (default 1)',
    )
    .option(
      '--backoff-base-ms <ms>',
      "persistent-failure: first delay of a custom per-item exponential rate limiter (to 1000 s, no bucket); 0 requeues failing keys at once (default: controller-runtime's limiter)",
    )
    .option(
      '--loop-keys <n>',
      "hot-loop-status-write, hot-loop-no-backoff, self-requeue-loop: keys in the loop (default: the scenario's)",
    )
    .option(
      '--list-writes <n>',
      'initial-list: status writes each listed object takes to converge, each echo syncing it again (default 0)',
    )
    .option(
      '--status-at-ms <ms>',
      'hot-loop-status-write: how far into each looping sync its status update is made; its echo re-adds the key while the sync runs (default: at its end)',
    )
    .option(
      '--writes-per-sync <n>',
      'event-per-sync: API writes each sync makes, the Event then updates of objects the controller does not watch (default 1)',
    )
    .option(
      '--transient-share <share>',
      'transient-errors, dependency-outage: share of first attempts that fail once and succeed on the retry, 0 to 1 (default 0.01; none outside the outage)',
    )
    .option('--outage-seconds <s>', 'dependency-outage: how long the dependency is down (default 360)')
    .option('--spike-seconds <s>', 'short-spike: how long the burst of distinct objects lasts (default 120)')
    .option('--batch-size <n>', 'sawtooth-batches: distinct objects each batch touches (default 30000, at most --keys)')
    .option(
      '--relist-at-seconds <s>',
      "initial-list, startup-list, starved-backlog, backlog (and mixed's pod controller): when the informer relists every object (an expired watch), seconds after the start (default none)",
    )
    .option('--blocking-share <share>', 'blocking-call: share of syncs that block, 0 to 1 (default 0.008)')
    .option(
      '--blocking-seconds <s>',
      'blocking-call: length of a blocking sync, each 0.8 to 1.2 times this (default: 10 to 60 s); slow-poll: of each poll (default 15)',
    )
    .option(
      '--sync-ms <ms>',
      "backlog, gradual-backlog, saturation: median sync time of the main controller; the load keeps its ratio to capacity; sawtooth-batches: of every sync (the batch keeps its size); hot-loop-status-write: of the looping keys; slow-but-steady: of every sync; persistent-failure: of the failing keys' syncs (default: the scenario's)",
    )
    .option('--start <time>', 'time of the first sample (RFC 3339 or unix seconds)', '2026-01-01T00:00:00Z')
    .option('--record <file>', 'recording to write (virtual time); FILE.truth.json gets the ground truth')
    .addOption(new Option('--out <file>', 'the former name of --record').hideHelp())
    .option('--job <job>', 'job label of every recorded sample', DEFAULT_JOB)
    .option('--instance <instance>', 'instance label of every recorded sample (default: <scenario>:8080)')
    .option('--realtime', 'run on the real clock and serve live /metrics instead of writing a recording')
    .option('--listen <host:port>', 'address of the live /metrics server (with --realtime)', '127.0.0.1:8080')
    .action(async (flags: SimulateFlags) => {
      await runSimulate(flags);
    });
}

async function runSimulate(flags: SimulateFlags): Promise<void> {
  if (flags.list === true) {
    process.stdout.write(listScenarios());
    return;
  }
  if (flags.scenario === undefined) throw new UsageError('simulate needs --scenario NAME (or --list)');
  const name = flags.scenario;
  const scenario = flagValue('--scenario', () => getScenario(name), [SimulationParamError]);
  const params = usage(() => parseParams(flags, scenario));
  if (flags.realtime === true) {
    if (recordFile(flags) !== undefined)
      throw new UsageError('--record writes a virtual-time recording; it cannot go with --realtime');
    const live = await usage(() => startLiveSimulation({ scenario, listen: flags.listen, params }));
    process.stdout.write(`simulating ${scenario.name} on the real clock; metrics at ${live.url} (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      const onSignal = (): void => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
    });
    await live.stop();
    return;
  }
  const out = recordFile(flags);
  if (out === undefined) throw new UsageError('simulate needs --record FILE (or --realtime)');
  const scrapeIntervalMs =
    flags.scrapeInterval === undefined
      ? DEFAULT_SCRAPE_INTERVAL_MS
      : flagValue('--scrape-interval', () => parseDuration(flags.scrapeInterval as string));
  const startMs = flagValue('--start', () => parseTime(flags.start ?? '2026-01-01T00:00:00Z'));
  const job = flags.job ?? DEFAULT_JOB;
  const instance = flags.instance ?? defaultInstance(scenario.name);
  for (const [flag, value] of [
    ['--job', job],
    ['--instance', instance],
  ] as const) {
    if (value.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  const options = { scrapeIntervalMs, startMs, job, instance };
  const run = await usage(() => runVirtual(scenario, params, options));
  writeOutput(out, () => {
    const fd = openSync(out, 'w');
    try {
      run.recording.writeTo((chunk) => {
        writeSync(fd, chunk);
      });
    } finally {
      closeSync(fd);
    }
  });
  writeOutput(`${out}.truth.json`, () => writeFileSync(`${out}.truth.json`, `${JSON.stringify(run.truth, null, 2)}\n`));
  const { stats } = run;
  process.stdout.write(
    `${scenario.name}: ${formatDuration(stats.simulatedMs)} simulated, ${stats.scrapes} scrapes, ${stats.series} series, ` +
      `${stats.samples} samples -> ${out} (+ ${out}.truth.json)\n`,
  );
}

/** `--record`, or its former name `--out`; both at once is an error. */
function recordFile(flags: SimulateFlags): string | undefined {
  if (flags.record !== undefined && flags.out !== undefined && flags.record !== flags.out)
    throw new UsageError('--out is the former name of --record: give one of them');
  return flags.record ?? flags.out;
}

/** Runs a write of `path`, turning a file system error into a usage error naming the path and what is wrong. */
function writeOutput(path: string, write: () => void): void {
  try {
    write();
  } catch (error) {
    if (isFileSystemError(error)) throw cannotWrite('--record', path, error);
    throw error;
  }
}

/** Turns parameter errors into usage errors (exit code 2). */
function usage<T>(fn: () => T): T {
  try {
    const value = fn();
    if (value instanceof Promise) return value.catch(rethrowAsUsage) as T;
    return value;
  } catch (error) {
    return rethrowAsUsage(error);
  }
}

function rethrowAsUsage(error: unknown): never {
  if (error instanceof SimulationParamError || error instanceof ParseError) throw new UsageError(error.message);
  throw error;
}

/** The parameters `flags` give `scenario`: without `--queue`, the scenario's own default queue. */
function parseParams(flags: SimulateFlags, scenario: Scenario): SimulationParams {
  const flavor = flags.flavor ?? 'controller-runtime';
  if (!FLAVORS.includes(flavor as Flavor)) {
    throw new UsageError(`--flavor must be one of ${FLAVORS.join(', ')}, got "${flavor}"`);
  }
  const background = flags.background ?? DEFAULT_BACKGROUND_MODE;
  if (!BACKGROUND_MODES.includes(background as BackgroundMode)) {
    throw new UsageError(`--background must be one of ${BACKGROUND_MODES.join(', ')}, got "${background}"`);
  }
  const queue = flags.queue;
  if (queue !== undefined && !QUEUE_KINDS.includes(queue as QueueKind)) {
    throw new UsageError(`--queue must be one of ${QUEUE_KINDS.join(', ')}, got "${queue}"`);
  }
  if (queue !== undefined && !queueKindsOf(flavor as Flavor).includes(queue as QueueKind)) {
    throw new UsageError(
      `--queue ${queue} needs --flavor controller-runtime: the priority queue is controller-runtime's`,
    );
  }
  return resolveParams(
    {
      seed: integer('--seed', flags.seed ?? '1'),
      ...(queue === undefined ? {} : { queue: queue as QueueKind }),
      durationMs:
        flags.duration === undefined
          ? DEFAULT_DURATION_MS
          : flagValue('--duration', () => parseDuration(flags.duration as string)),
      flavor: flavor as Flavor,
      background: background as BackgroundMode,
      ...(flags.workers === undefined ? {} : { workers: integer('--workers', flags.workers) }),
      ...(flags.keys === undefined ? {} : { keys: integer('--keys', flags.keys) }),
      ...(flags.rate === undefined ? {} : { rate: number('--rate', flags.rate) }),
      ...(flags.failingKeys === undefined ? {} : { failingKeys: integer('--failing-keys', flags.failingKeys) }),
      ...(flags.invalidKeys === undefined ? {} : { invalidKeys: integer('--invalid-keys', flags.invalidKeys) }),
      ...(flags.pollingKeys === undefined ? {} : { pollingKeys: integer('--polling-keys', flags.pollingKeys) }),
      ...(flags.backoffBaseMs === undefined ? {} : { backoffBaseMs: number('--backoff-base-ms', flags.backoffBaseMs) }),
      ...(flags.loopKeys === undefined ? {} : { loopKeys: integer('--loop-keys', flags.loopKeys) }),
      ...(flags.writesPerSync === undefined
        ? {}
        : { writesPerSync: integer('--writes-per-sync', flags.writesPerSync) }),
      ...(flags.listWrites === undefined ? {} : { listWrites: integer('--list-writes', flags.listWrites) }),
      ...(flags.statusAtMs === undefined ? {} : { statusAtMs: number('--status-at-ms', flags.statusAtMs) }),
      ...(flags.transientShare === undefined
        ? {}
        : { transientShare: number('--transient-share', flags.transientShare) }),
      ...(flags.outageSeconds === undefined ? {} : { outageSeconds: number('--outage-seconds', flags.outageSeconds) }),
      ...(flags.spikeSeconds === undefined ? {} : { spikeSeconds: number('--spike-seconds', flags.spikeSeconds) }),
      ...(flags.batchSize === undefined ? {} : { batchSize: integer('--batch-size', flags.batchSize) }),
      ...(flags.relistAtSeconds === undefined
        ? {}
        : { relistAtSeconds: number('--relist-at-seconds', flags.relistAtSeconds) }),
      ...(flags.blockingShare === undefined ? {} : { blockingShare: number('--blocking-share', flags.blockingShare) }),
      ...(flags.blockingSeconds === undefined
        ? {}
        : { blockingSeconds: number('--blocking-seconds', flags.blockingSeconds) }),
      ...(flags.syncMs === undefined ? {} : { syncMs: number('--sync-ms', flags.syncMs) }),
    },
    scenario,
  );
}

function integer(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim())) throw new UsageError(`${flag} must be a non-negative integer, got "${text}"`);
  return Number(text);
}

function number(flag: string, text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) throw new UsageError(`${flag} must be a number, got "${text}"`);
  return value;
}

/** `--list`: name, expected diagnoses at default parameters (allowed in parentheses), summary. */
export function listScenarios(): string {
  const rows = SCENARIOS.map((scenario) => {
    const truth = groundTruth(scenario, resolveParams({}, scenario));
    const expected = new Set<string>();
    const allowed = new Set<string>();
    for (const queue of truth.queues) {
      for (const id of queue.expected) expected.add(id);
      for (const id of queue.allowed) allowed.add(id);
    }
    for (const id of expected) allowed.delete(id);
    let diagnoses = expected.size === 0 ? (truth.standby ? 'none (standby)' : 'none') : [...expected].join(', ');
    if (allowed.size > 0) diagnoses += ` (allowed: ${[...allowed].join(', ')})`;
    return [scenario.name, diagnoses, scenario.summary] as const;
  });
  const nameWidth = Math.max(...rows.map((row) => row[0].length));
  const diagnosisWidth = Math.max(...rows.map((row) => row[1].length));
  return rows
    .map(([name, diagnoses, summary]) => `${name.padEnd(nameWidth)}  ${diagnoses.padEnd(diagnosisWidth)}  ${summary}\n`)
    .join('');
}
