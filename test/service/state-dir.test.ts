/**
 * `--state-dir`: the scraped history survives a restart. A restarted runtime holds every sample the previous
 * one held before it scrapes, continues the same series, and its first report keeps the findings' `since`; a
 * failed write keeps the previous file; a state file it cannot use (foreign, damaged, a gzip bomb, beyond the
 * scrape limits, a sample in the future, a symbolic link, a FIFO) is reported once, not restored and replaced; a
 * state directory with Prometheus or the demo, or one that cannot be written, is a usage error naming the key;
 * one process at a time holds a directory (a second `serve` exits 2 naming the first one's pid, a lock left by a
 * process that is gone is taken over); `serve` writes the file when it stops on SIGTERM, and starts and stops
 * with a FIFO at the file's path.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { ConfigError } from '../../src/config/config-error.js';
import { resolveServiceConfig, type ServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import { staticTargets } from '../../src/discovery/static.js';
import { keepFamilies, parseExposition } from '../../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES, DOCTOR, WORKQUEUE } from '../../src/metrics/names.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { createServiceRuntime, type RuntimeLogger, type ServiceRuntime } from '../../src/service/runtime.js';
import { STATE_FILE_NAME, STATE_LOCK_NAME } from '../../src/service/state-persistence.js';
import { startWarmLiveSimulation, type WarmUpScrape } from '../../src/simulate/index.js';
import type { ScrapeSource } from '../../src/sources/scrape-source.js';
import { scrapeLabels } from '../../src/sources/target-provider.js';
import { History } from '../../src/store/history.js';
import { encodeHistoryState, restoreHistoryState, STATE_FORMAT } from '../../src/store/state-file.js';
import { stateFileLimits } from '../../src/store/state-file-limits.js';
import { runCli } from '../support/cli.js';
import { type CliProcess, spawnCli } from '../support/cli-process.js';
import { type LocalServer, startHttpServer, waitFor } from '../support/local-server.js';
import { depthSeries, stateFileBomb, stateFileOf } from '../support/state-files.js';

/** Lets a test make every rename fail (a write that cannot be put in place); off otherwise. */
const fsControl = vi.hoisted(() => ({ renameError: undefined as Error | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: (from: string, to: string) =>
      fsControl.renameError === undefined ? actual.rename(from, to) : Promise.reject(fsControl.renameError),
  };
});

const work = mkdtempSync(join(tmpdir(), 'wqd-state-'));
let dirs = 0;
const newDir = (): string => join(work, `state-${++dirs}`);
const PASSWORD = 'planted-S3cret-passw0rd';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  fsControl.renameError = undefined;
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Line = { level: 'info' | 'warn' | 'error' | 'debug'; object: Record<string, unknown>; message: string };

function recordingLogger(): RuntimeLogger & { lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: Line['level']) =>
    (object: object, message: string): void => {
      lines.push({ level, object: object as Record<string, unknown>, message });
    };
  return { lines, info: at('info'), warn: at('warn'), error: at('error'), debug: at('debug') };
}

async function runtimeFor(
  config: ServiceConfig,
  logger: RuntimeLogger,
  stateWriteIntervalMs?: number,
): Promise<ServiceRuntime> {
  const runtime = await createServiceRuntime(config, {
    logger,
    processMetrics: false,
    ...(stateWriteIntervalMs !== undefined ? { stateWriteIntervalMs } : {}),
  });
  closers.push(() => runtime.close());
  return runtime;
}

const historyOf = (runtime: ServiceRuntime): History => (runtime.source as ScrapeSource).history;

/** Every series held, by name and labels (not by target id), with its samples. */
function snapshot(history: History): Record<string, { t: number[]; v: number[] }> {
  const out: Record<string, { t: number[]; v: number[] }> = {};
  for (const metric of history.metricNames()) {
    for (const s of history.select({ metric }))
      out[`${metric}${JSON.stringify(s.labels)}`] = { t: [...s.t], v: [...s.v] };
  }
  return out;
}

const newestSampleMs = (history: History): number =>
  Math.max(...history.targets().map((t) => t.lastMs ?? Number.NEGATIVE_INFINITY));

/** A state file's bytes read into a fresh history: throws when they are not a valid state file. */
async function stateOf(bytes: Buffer): Promise<History> {
  const history = new History({ retentionMs: Number.POSITIVE_INFINITY, maxSamplesPerSeries: Number.POSITIVE_INFINITY });
  await restoreHistoryState(bytes, history, { nowMs: Date.now(), limits: stateFileLimits(DEFAULT_SCRAPE_SETTINGS, 1) });
  return history;
}

const readState = (file: string): Promise<History> => stateOf(readFileSync(file));

/** A target serving one queue whose adds keep growing. */
async function queueTarget(): Promise<LocalServer> {
  let adds = 0;
  const server = await startHttpServer((_req, res) => {
    adds += 5;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${WORKQUEUE.depth}{name="q",controller="q"} 3\n${WORKQUEUE.adds}{name="q",controller="q"} ${adds}\n`);
  });
  closers.push(() => server.close());
  return server;
}

function scrapeConfig(url: string, stateDir: string, extra: Record<string, unknown> = {}): ServiceConfig {
  return resolveServiceConfig({
    flags: { target: [url], stateDir, scrapeInterval: '1s', evaluationInterval: '1s', ...extra },
    env: {},
  });
}

const findingsOf = (report: Report) =>
  report.queues.flatMap((q) => q.findings.map((f) => ({ queue: q.queue.name, rule: f.rule, since: f.since })));

describe('state dir: a restart continues the history', () => {
  it('restores every sample before the first scrape, continues the series and keeps the findings since', async () => {
    const warmUp: WarmUpScrape[] = [];
    const sim = await startWarmLiveSimulation({
      scenario: 'mixed',
      warmUpMs: 30 * 60_000,
      listen: '127.0.0.1:0',
      onWarmUpScrape: (scrape) => {
        warmUp.push(scrape);
      },
    });
    closers.push(() => sim.stop());
    // Credentials in the URL: they must not reach the state file.
    const url = sim.url.replace('http://', `http://wqd:${PASSWORD}@`);
    const dir = newDir();
    // A retention beyond the warm-up: nothing ages out between the two runs, so both trace `since` over the same data.
    const config = scrapeConfig(url, dir, { retention: '1h' });

    const firstLog = recordingLogger();
    const first = await runtimeFor(config, firstLog);
    expect(firstLog.lines.find((l) => l.message.includes('no state file yet'))?.object).toEqual({
      file: join(dir, STATE_FILE_NAME),
    });
    // The warm-up, stored as the scrape source stores the target (as the demo does).
    const [target] = staticTargets([url]);
    const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
    for (const scrape of warmUp) {
      const page = parseExposition(scrape.text, { format: 'prometheus-text', keep });
      historyOf(first).append({ id: target?.key ?? '', labels: scrapeLabels(target!) }, page, scrape.timeMs);
    }
    await first.start();
    // Several live rounds after the warm-up.
    await waitFor('three live scrapes', () => newestSampleMs(historyOf(first)) >= sim.warmUpEndMs + 2_500, 30_000);
    const before = await waitFor('a report with findings', () => {
      const report = first.service.report();
      return report !== undefined && findingsOf(report).length > 0 ? report : undefined;
    });
    await first.close();
    const held = snapshot(historyOf(first));
    expect(Object.keys(held).length).toBeGreaterThan(50);

    const file = join(dir, STATE_FILE_NAME);
    const content = gunzipSync(readFileSync(file)).toString('latin1');
    expect(content.startsWith(`${STATE_FORMAT} 1\n`)).toBe(true);
    expect(content).not.toContain(PASSWORD);
    expect(content).not.toContain('wqd:');

    const secondLog = recordingLogger();
    const second = await runtimeFor(config, secondLog);
    // Before the first scrape: every sample, in the same series.
    expect(snapshot(historyOf(second))).toEqual(held);
    expect(secondLog.lines.find((l) => l.message === 'history restored from the state file')?.object).toMatchObject({
      file,
      targets: 1,
      series: Object.keys(held).length,
    });

    await second.start();
    const after = await waitFor('the first report after the restart', () => second.service.report());
    // The live scrapes continue the restored series: one target, no second copy of any series.
    expect(historyOf(second).targets()).toHaveLength(1);
    expect(historyOf(second).stats().series).toBe(Object.keys(held).length);
    // Every finding is raised at once, with the since it had before the restart.
    const found = findingsOf(after);
    for (const finding of findingsOf(before)) expect(found).toContainEqual(finding);
  }, 120_000);
});

describe('state dir: writes', () => {
  it('keeps the previous file when a write fails, logs it, counts it and runs on; the next write succeeds', async () => {
    const target = await queueTarget();
    const dir = newDir();
    const file = join(dir, STATE_FILE_NAME);
    const log = recordingLogger();
    const runtime = await runtimeFor(scrapeConfig(`${target.origin}/metrics`, dir), log, 100);
    await runtime.start();
    await waitFor('a first write', () => existsSync(file));

    fsControl.renameError = Object.assign(new Error('EIO: i/o error, rename'), { code: 'EIO' });
    const failures = () =>
      log.lines.filter((l) => l.level === 'error' && l.message.startsWith('cannot write the state file'));
    await waitFor('a failed write', () => failures().length >= 1);
    const kept = readFileSync(file);
    const scrapedBefore = newestSampleMs(historyOf(runtime));
    await waitFor('another failed write, after another scrape', () => {
      return failures().length >= 2 && newestSampleMs(historyOf(runtime)) > scrapedBefore;
    });
    expect(failures()[0]?.object).toEqual({ file, err: 'EIO: i/o error, rename' });
    // The previous file as it was, still a valid state; no temporary file left behind.
    expect(readFileSync(file).equals(kept)).toBe(true);
    expect((await readState(file)).stats().samples).toBeGreaterThan(0);
    // A write runs every 100 ms: its temporary file exists while it is in flight. A failed write that left its
    // temporary file behind would leave one more each time (each has its own name), so the directory would
    // never be back to the state file and the lock.
    await waitFor('no temporary file left behind', () => {
      const names = readdirSync(dir).sort();
      return names.length === 2 && names[0] === STATE_FILE_NAME && names[1] === STATE_LOCK_NAME;
    });
    const counted = await runtime.metrics.registry.getSingleMetricAsString(DOCTOR.stateWriteErrors);
    expect(Number(counted.match(new RegExp(`^${DOCTOR.stateWriteErrors} (\\d+)$`, 'm'))?.[1])).toBeGreaterThanOrEqual(
      2,
    );
    expect(runtime.service.report()).toBeDefined();

    fsControl.renameError = undefined;
    await waitFor('a write once renames work again', () => !readFileSync(file).equals(kept));
    const written = await readState(file);
    expect(newestSampleMs(written)).toBeGreaterThan(newestSampleMs(await stateOf(kept)));
  });

  it('removes the temporary files an interrupted write left', async () => {
    const target = await queueTarget();
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, `${STATE_FILE_NAME}.tmp-0a1b2c`), 'half a write');
    const log = recordingLogger();
    await runtimeFor(scrapeConfig(`${target.origin}/metrics`, dir), log);
    expect(readdirSync(dir)).toEqual([STATE_LOCK_NAME]);
    expect(log.lines.find((l) => l.message.includes('temporary files'))?.object).toEqual({
      dir,
      files: [`${STATE_FILE_NAME}.tmp-0a1b2c`],
    });
  });
});

describe('state dir: a state file that cannot be used', () => {
  const validState = async (): Promise<Buffer> => {
    const history = new History();
    const now = Date.now();
    for (let i = 0; i < 20; i++) {
      history.append(
        { id: 'x', labels: { job: 'static', instance: 'elsewhere:1' } },
        parseExposition(`${WORKQUEUE.depth}{name="old",controller="old"} ${i}\n`),
        now - 60_000 + i * 1000,
      );
    }
    return encodeHistoryState(history, now);
  };

  /** Places `bytes` at the state file's path. */
  const writes =
    (make: () => Promise<Buffer>) =>
    async (file: string): Promise<void> =>
      writeFileSync(file, await make());
  const elsewhere = { job: 'static', instance: 'elsewhere:1' };
  const oneSeries = (t: number[]): Buffer =>
    stateFileOf({
      writtenAtMs: Date.now(),
      targets: [elsewhere],
      series: [{ target: 0, key: 'workqueue_depth{name="old"}', labels: { ...elsewhere, name: 'old' }, t }],
    });

  it.each([
    ['a text file', writes(async () => Buffer.from('not ours\n')), 'foreign', /not gzip-compressed/],
    ['a gzip file of another program', writes(async () => gzipSync('{"some":"json"}\n')), 'foreign', /not a/],
    ['another version', writes(async () => gzipSync(`${STATE_FORMAT} 99\n{}\n`)), 'version', /version "99"/],
    ['truncated gzip', writes(async () => (await validState()).subarray(0, 60)), 'damaged', /truncated/],
    ['malformed content', writes(async () => gzipSync(`${STATE_FORMAT} 1\n{"writtenAt":`)), 'damaged', /truncated/],
    [
      'a gzip bomb (640 MiB of series in 830 KB)',
      writes(async () => stateFileBomb(40)),
      'limits',
      /^more than \d+ bytes once decompressed$/,
    ],
    [
      'a sample at t=1e49',
      writes(async () => oneSeries([Date.now() - 1000, 1e49])),
      'limits',
      /^series 0 has a sample in the future: at 1e\+49 ms/,
    ],
    [
      'more series of a target than the held series limit',
      writes(async () =>
        stateFileOf({
          writtenAtMs: Date.now(),
          targets: [elsewhere],
          series: depthSeries(0, elsewhere, 20_001, [Date.now()]),
        }),
      ),
      'limits',
      /^more than 20000 series of the target \{instance="elsewhere:1",job="static"\} \(scrape\.heldSeriesLimit\)$/,
    ],
    [
      'a symbolic link to a valid state file',
      async (file: string) => {
        const valid = join(work, `valid-${dirs}.wqd.gz`);
        writeFileSync(valid, await validState());
        symlinkSync(valid, file);
      },
      'not-regular',
      /^a symbolic link, not a regular file$/,
    ],
    [
      'a symbolic link to /dev/zero',
      async (file: string) => symlinkSync('/dev/zero', file),
      'not-regular',
      /^a symbolic link, not a regular file$/,
    ],
    [
      'a FIFO (nothing would ever write to it)',
      async (file: string) => execFileSync('mkfifo', [file]),
      'not-regular',
      /^a FIFO \(named pipe\), not a regular file$/,
    ],
    // Decompressing the bomb up to the bound takes seconds, many more with other test files beside it.
  ] as const)(
    '%s: reported once, ignored, then replaced',
    { timeout: 120_000 },
    async (_what, place, problem, reason) => {
      const target = await queueTarget();
      const dir = newDir();
      mkdirSync(dir);
      const file = join(dir, STATE_FILE_NAME);
      await place(file);
      const log = recordingLogger();
      const runtime = await runtimeFor(scrapeConfig(`${target.origin}/metrics`, dir), log);

      const warnings = log.lines.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.message).toBe('state file ignored; the next write replaces it');
      expect(warnings[0]?.object).toEqual({ file, problem, reason: expect.stringMatching(reason) });
      expect(historyOf(runtime).stats().samples).toBe(0);

      await runtime.start();
      await waitFor('a report', () => runtime.service.report());
      const view = runtime.targets();
      expect(view.mode === 'scrape' ? view.targets.map((t) => t.up) : []).toEqual([true]);
      await runtime.close();
      // Replaced by a regular file of what was scraped since (a link's target as it was).
      expect(lstatSync(file).isFile()).toBe(true);
      const replaced = await readState(file);
      expect(replaced.select({ metric: WORKQUEUE.depth }).map((s) => s.labels.name)).toEqual(['q']);
      expect(log.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    },
  );
});

describe('state dir: usage errors', () => {
  it('is refused with Prometheus or the demo as the source; a file may hold it for another deployment', () => {
    const failure = (inputs: Parameters<typeof resolveServiceConfig>[0]): string => {
      try {
        resolveServiceConfig(inputs);
      } catch (error) {
        if (error instanceof ConfigError) return error.message;
        throw error;
      }
      return 'accepted';
    };
    expect(failure({ flags: { prometheusUrl: 'http://p:9090', stateDir: '/data' }, env: {} })).toBe(
      '--state-dir: applies only with static targets (--target), Kubernetes discovery (--kubernetes); the source here is Prometheus mode (--prometheus-url)',
    );
    expect(failure({ flags: { demo: true }, env: { WQD_STATE_DIR: '/data' } })).toBe(
      'WQD_STATE_DIR: applies only with static targets (--target), Kubernetes discovery (--kubernetes); the source here is the demo (--demo)',
    );
    const fromFile = resolveServiceConfig({
      flags: { prometheusUrl: 'http://p:9090' },
      env: {},
      file: { path: 'config.yaml', text: 'state:\n  dir: /data\n' },
    });
    expect(fromFile.stateDir).toBeUndefined();
    expect(resolveServiceConfig({ flags: {}, env: { WQD_STATE_DIR: '/data' } }).stateDir).toBe('/data');
  });

  it('serve exits 2 with one line naming the flag', async () => {
    const result = await runCli('serve', '--prometheus-url', 'http://127.0.0.1:1', '--state-dir', newDir());
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr.split('\n')[0]).toMatch(/^workqueue-doctor: --state-dir: applies only with static targets/);
  });

  it('fails at start, naming the key, when the directory cannot be used', async () => {
    const notADir = join(work, 'a-file');
    writeFileSync(notADir, 'x');
    const start = (stateDir: string) =>
      createServiceRuntime(scrapeConfig('http://127.0.0.1:1/metrics', stateDir), { processMetrics: false });
    await expect(start(notADir)).rejects.toThrow(
      new ConfigError(`--state-dir: cannot keep the history in ${JSON.stringify(notADir)}: not a directory`),
    );
    await expect(start(join(notADir, 'below'))).rejects.toThrow(/^--state-dir: cannot keep the history in ".*": /);
    await expect(start(join(notADir, 'below'))).rejects.toBeInstanceOf(ConfigError);
  });

  it('fails at start when the directory is not writable', async () => {
    // Root may write wherever the mode bits say no, but not into sysfs.
    const asRoot = process.getuid?.() === 0;
    const dir = asRoot ? '/sys' : newDir();
    if (!asRoot) {
      mkdirSync(dir);
      chmodSync(dir, 0o555);
    }
    try {
      await expect(
        createServiceRuntime(scrapeConfig('http://127.0.0.1:1/metrics', dir), { processMetrics: false }),
      ).rejects.toThrow(/^--state-dir: cannot keep the history in ".*": not writable \((EACCES|EPERM|EROFS)/);
    } finally {
      if (!asRoot) chmodSync(dir, 0o700);
    }
  });
});

describe('state dir: one process at a time', () => {
  const lockHeld = (dir: string, holder: string): string =>
    `--state-dir: cannot keep the history in ${JSON.stringify(dir)}: in use by ${holder}, whose lock is ${STATE_LOCK_NAME}; two services must not share a directory`;

  it('refuses a second runtime of this process until the first has closed and released it', async () => {
    const target = await queueTarget();
    const dir = newDir();
    const config = scrapeConfig(`${target.origin}/metrics`, dir);
    const first = await runtimeFor(config, recordingLogger());
    expect(JSON.parse(readFileSync(join(dir, STATE_LOCK_NAME), 'utf8')).pid).toBe(process.pid);
    await expect(createServiceRuntime(config, { processMetrics: false })).rejects.toThrow(
      new ConfigError(lockHeld(dir, 'this process')),
    );
    await first.close();
    expect(existsSync(join(dir, STATE_LOCK_NAME))).toBe(false);
    await runtimeFor(config, recordingLogger());
  });

  it('takes over the lock of a process that is gone', async () => {
    const target = await queueTarget();
    const dir = newDir();
    mkdirSync(dir);
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await once(gone, 'exit');
    writeFileSync(join(dir, STATE_LOCK_NAME), `${JSON.stringify({ pid: gone.pid })}\n`);
    await runtimeFor(scrapeConfig(`${target.origin}/metrics`, dir), recordingLogger());
    expect(JSON.parse(readFileSync(join(dir, STATE_LOCK_NAME), 'utf8')).pid).toBe(process.pid);
  });

  it('a second serve on the directory exits 2 with one line naming it and the first one’s pid', async () => {
    const target = await queueTarget();
    const dir = newDir();
    const first = serveWithState(`${target.origin}/metrics`, dir);
    try {
      await first.output('stdout', /"msg":"listening"/);
      const second = serveWithState(`${target.origin}/metrics`, dir);
      try {
        expect(await second.exited).toBe(EXIT.usage);
        // One error line, then the usage errors' help hint.
        expect(second.stderr().split('\n')).toEqual([
          `workqueue-doctor: ${lockHeld(dir, `process ${first.child.pid}`)}`,
          "see 'workqueue-doctor serve --help'",
          '',
        ]);
      } finally {
        await second.stop();
      }
      // Released on shutdown.
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      expect(readdirSync(dir)).toEqual([STATE_FILE_NAME]);
    } finally {
      await first.stop();
    }
  }, 90_000);
});

/** `serve` of one target, scraped every second, with its history in `dir`. */
function serveWithState(url: string, dir: string): CliProcess {
  return spawnCli(['serve', '--target', url, '--listen', '127.0.0.1:0', '--scrape-interval', '1s', '--state-dir', dir]);
}

describe('state dir: serve', () => {
  it('writes the state file when it stops on SIGTERM', async () => {
    const target = await queueTarget();
    const dir = newDir();
    const serve = serveWithState(`${target.origin}/metrics`, dir);
    try {
      await serve.output('stdout', /"msg":"listening"/);
      expect(existsSync(join(dir, STATE_FILE_NAME))).toBe(false);
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      const saved = await readState(join(dir, STATE_FILE_NAME));
      expect(saved.select({ metric: WORKQUEUE.adds }).map((s) => s.labels.instance)).toEqual([
        `127.0.0.1:${target.port}`,
      ]);
    } finally {
      await serve.stop();
    }
  }, 90_000);

  it('with a FIFO at the state file, listens, reports it once and exits 0 on SIGTERM', async () => {
    const target = await queueTarget();
    const dir = newDir();
    mkdirSync(dir);
    const file = join(dir, STATE_FILE_NAME);
    execFileSync('mkfifo', [file]);
    const serve = serveWithState(`${target.origin}/metrics`, dir);
    try {
      await serve.output('stdout', /"msg":"listening"/);
      const warnings = serve
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"msg":"state file ignored'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0] as string)).toMatchObject({
        file,
        problem: 'not-regular',
        reason: 'a FIFO (named pipe), not a regular file',
      });
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
      // The FIFO is replaced by the state written at shutdown.
      expect(lstatSync(file).isFile()).toBe(true);
    } finally {
      await serve.stop();
    }
  }, 90_000);
});
