/**
 * What the memory budget (src/service/memory-budget.ts) charges, measured on the built service: the resident bytes
 * of the service itself, of a held series, of a held sample, of a character of a series' labels and of a work
 * queue, and the bytes of a queue's serialized report. Each point runs `serve` (scraping every second, evaluating
 * every 2 s, the report fetched every 5 s as the page does) against one synthetic target served by this process for
 * the whole retention and a few seconds more, and reads its peak RSS (`VmHWM`). The limits are raised out of the way
 * (`--memory-limit max` and explicit limits), so every point holds what it is given.
 *
 * The costs are differences between points, so what they share cancels out:
 * - the service: one queue of two series (its peak is what the service costs with nothing to hold);
 * - per series and per queue: 100 and 200 full queues (57 series each, a synthetic controller-runtime manager), and
 *   1,000 and 3,000 queues made of one `workqueue_adds_total` series each: a full queue is 57 series and a queue, a
 *   one-series queue one series and a queue;
 * - per sample: the 100 full queues held for 2 minutes (121 samples a series) instead of 1 (61);
 * - per label character: the 100 full queues with names 400 characters longer (on `name` and `controller`).
 *
 * Run: `npm run bench:memory` (about eight minutes: each point waits for its retention to fill).
 */
import type http from 'node:http';
import { availableParallelism } from 'node:os';
import type { Report } from '../src/diagnosis/report.js';
import { WORKQUEUE } from '../src/metrics/names.js';
import { MEMORY_COSTS } from '../src/service/memory-budget.js';
import type { TargetsView } from '../src/service/target-status.js';
import { PROMETHEUS_CONTENT_TYPE } from '../src/simulate/recording-writer.js';
import { freePort, startHttpServer, waitFor } from '../test/support/local-server.js';
import { builtCli, peakRssOf, run } from './service-process.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

type Point = {
  readonly name: string;
  readonly queues: number;
  /** `full`: a synthetic manager's queues; `adds`: one `workqueue_adds_total` series per queue. */
  readonly shape: 'full' | 'adds';
  /** Characters added to every queue name. */
  readonly pad: number;
  readonly retention: '1m' | '2m';
};

type Measured = {
  readonly series: number;
  /** Samples a series holds at the end: the retention at one scrape a second, both ends included. */
  readonly samplesPerSeries: number;
  /** Characters of the label names and values of every series of the page (the target's labels aside). */
  readonly labelChars: number;
  readonly queues: number;
  readonly reportBytes: number;
  readonly peakRssBytes: number;
};

const MiB = 1024 * 1024;
const SETTLE_SECONDS = 15;
const REPORT_EVERY_MS = 5_000;
const POINTS: readonly Point[] = [
  { name: 'one queue', queues: 1, shape: 'full', pad: 0, retention: '1m' },
  { name: '100 full queues', queues: 100, shape: 'full', pad: 0, retention: '1m' },
  { name: '200 full queues', queues: 200, shape: 'full', pad: 0, retention: '1m' },
  { name: '100 full queues, 2m', queues: 100, shape: 'full', pad: 0, retention: '2m' },
  { name: '100 full queues, names +400', queues: 100, shape: 'full', pad: 400, retention: '1m' },
  { name: '1,000 one-series queues', queues: 1_000, shape: 'adds', pad: 0, retention: '1m' },
  { name: '3,000 one-series queues', queues: 3_000, shape: 'adds', pad: 0, retention: '1m' },
];

function pageOf(point: Point): (seconds: number) => string {
  const names = Array.from({ length: point.queues }, (_, i) => `ctl-${i}${'x'.repeat(point.pad)}`);
  if (point.shape === 'adds') {
    return (seconds) =>
      `# TYPE ${WORKQUEUE.adds} counter\n${names.map((n) => `${WORKQUEUE.adds}{name="${n}"} ${Math.floor(seconds)}`).join('\n')}\n`;
  }
  const queues = profiles(1, point.queues).map((q, i) => ({ ...q, name: names[i] as string }));
  return (seconds) => syntheticPage(queues, 3600 + seconds);
}

/** Characters of label names and values on a page (each series once). */
function labelCharsOf(page: string): number {
  let chars = 0;
  for (const line of page.split('\n')) {
    const open = line.indexOf('{');
    if (line.startsWith('#') || open < 0) continue;
    const labels = line.slice(open + 1, line.lastIndexOf('}'));
    chars += labels.replace(/[="]/g, '').replace(/,/g, '').length;
  }
  return chars;
}

async function getJson<T>(url: string): Promise<{ body: T; bytes: number }> {
  const res = await fetch(url);
  const text = await res.text();
  return { body: JSON.parse(text) as T, bytes: Buffer.byteLength(text) };
}

async function measure(cli: string, point: Point): Promise<Measured> {
  const page = pageOf(point);
  const started = Date.now();
  const target = await startHttpServer((_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
    res.end(page((Date.now() - started) / 1000));
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = run([
    cli,
    'serve',
    '--target',
    `${target.origin}/metrics`,
    '--listen',
    `127.0.0.1:${port}`,
    '--scrape-interval',
    '1s',
    '--evaluation-interval',
    '2s',
    '--retention',
    point.retention,
    '--log-level',
    'warn',
    '--memory-limit',
    'max',
    '--scrape-series-limit',
    '200000',
    '--scrape-held-series-limit',
    '400000',
    '--scrape-queue-limit',
    '10000',
    '--scrape-label-value-limit',
    '4096',
  ]);
  try {
    await waitFor(`${base}/healthz`, async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok, 60_000);
    const seconds = (point.retention === '2m' ? 120 : 60) + SETTLE_SECONDS;
    const until = Date.now() + seconds * 1000;
    let report: { body: Report; bytes: number } | undefined;
    while (Date.now() < until) {
      await new Promise((done) => setTimeout(done, REPORT_EVERY_MS));
      report = await getJson<Report>(`${base}/api/v1/diagnosis`).catch(() => report);
    }
    const targets = (await getJson<TargetsView>(`${base}/api/v1/targets`)).body;
    const samples = targets.mode === 'scrape' ? (targets.targets[0]?.samples ?? 0) : 0;
    const peakRssBytes = peakRssOf(service.proc.pid ?? 0);
    return {
      series: samples,
      samplesPerSeries: (point.retention === '2m' ? 120 : 60) + 1,
      labelChars: labelCharsOf(page(0)),
      queues: report?.body.queues.length ?? 0,
      reportBytes: report?.bytes ?? 0,
      peakRssBytes,
    };
  } finally {
    await service.stop();
    await target.close();
  }
}

async function main(): Promise<void> {
  const cli = builtCli();
  const measured = new Map<string, Measured>();
  for (const point of POINTS) {
    process.stderr.write(`${point.name}…\n`);
    measured.set(point.name, await measure(cli, point));
  }
  const m = (name: string) => measured.get(name) as Measured;
  const rows = [
    '| point | series | samples a series | label characters | queues | report bytes | peak RSS |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const point of POINTS) {
    const x = m(point.name);
    rows.push(
      `| ${point.name} | ${x.series} | ${x.samplesPerSeries} | ${x.labelChars} | ${x.queues} | ${x.reportBytes} | ${(x.peakRssBytes / MiB).toFixed(1)} MiB |`,
    );
  }
  const service = m('one queue').peakRssBytes;
  const [full100, full200, full100long] = [m('100 full queues'), m('200 full queues'), m('100 full queues, 2m')];
  const [adds1k, adds3k, padded] = [
    m('1,000 one-series queues'),
    m('3,000 one-series queues'),
    m('100 full queues, names +400'),
  ];
  // A full queue costs k series and a queue, a one-series queue one series and a queue (k series a full queue).
  const k = (full200.series - full100.series) / (full200.queues - full100.queues);
  const perFullQueue = (full200.peakRssBytes - full100.peakRssBytes) / (full200.queues - full100.queues);
  const perAddsQueue = (adds3k.peakRssBytes - adds1k.peakRssBytes) / (adds3k.queues - adds1k.queues);
  const perSeriesAt61 = (perFullQueue - perAddsQueue) / (k - 1);
  const perQueue = perAddsQueue - perSeriesAt61;
  const perSample =
    (full100long.peakRssBytes - full100.peakRssBytes) /
    (full100.series * (full100long.samplesPerSeries - full100.samplesPerSeries));
  const perSeries = perSeriesAt61 - perSample * full100.samplesPerSeries;
  const perLabelChar = (padded.peakRssBytes - full100.peakRssBytes) / (padded.labelChars - full100.labelChars);
  const reportPerQueue = Math.max(full200.reportBytes / full200.queues, adds3k.reportBytes / adds3k.queues);
  const costs = [
    '| cost | measured | charged (src/service/memory-budget.ts) |',
    '|---|---:|---:|',
    `| the service, holding one queue | ${(service / MiB).toFixed(1)} MiB | ${(MEMORY_COSTS.serviceBytes / MiB).toFixed(0)} MiB |`,
    `| a series held, its samples aside | ${perSeries.toFixed(0)} B | ${MEMORY_COSTS.seriesBytes} B |`,
    `| a sample held | ${perSample.toFixed(1)} B | ${MEMORY_COSTS.sampleBytes} B |`,
    `| a character of a series' labels | ${perLabelChar.toFixed(1)} B | ${MEMORY_COSTS.labelCharBytes} B |`,
    `| a work queue, its series aside | ${(perQueue / 1024).toFixed(1)} KiB | ${(MEMORY_COSTS.queueBytes / 1024).toFixed(0)} KiB |`,
    `| a queue's serialized report | ${reportPerQueue.toFixed(0)} B | ${MEMORY_COSTS.reportBytesPerQueue} B |`,
  ];
  process.stdout.write(
    `\nMemory costs: Node ${process.version}, ${availableParallelism()} CPUs; \`serve\` scraping one synthetic target every 1 s, evaluating every 2 s; peak RSS at the end of the retention.\n\n${rows.join('\n')}\n\n${costs.join('\n')}\n`,
  );
}

await main();
