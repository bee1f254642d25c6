/**
 * Prometheus mode over a large fleet: the queries one evaluation sends to a real Prometheus, their time and
 * the bytes they bring back, for 1,000 and 10,000 queues.
 *
 * The fleet: synthetic controller managers (bench/synthetic-managers.ts) of 100 controllers each, 10 or 100 of
 * them, 20 minutes at one scrape a minute, written as one OpenMetrics recording (families in order, each
 * series' samples together) and imported with promtool. The service's Prometheus source reads it through a
 * counting proxy on loopback (requests and response bytes); three evaluations at the recording's end with the
 * service's memory (Prometheus mode keeps no steps between evaluations: the data may change without telling).
 * The claim under test: the number of queries per evaluation does not grow with the number of queues.
 *
 * Run: `npm run bench:prometheus-mode` (about two minutes and 1.5 GB of temporary disk at 10,000 queues).
 */
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EvaluationMemory } from '../src/diagnosis/holding.js';
import { diagnoseSource } from '../src/service/diagnose-source.js';
import { createPrometheusSource } from '../src/sources/prometheus-source.js';
import { importRecordings, removeTempDirs, startPrometheus } from '../test/support/prometheus.js';
import { profiles, syntheticPage } from './synthetic-managers.js';

const QUEUES_PER_MANAGER = 100;
const SIZES = (process.env.BENCH_PROMETHEUS_QUEUES ?? '1000,10000').split(',').map(Number);
const SCRAPE_S = 60;
const SCRAPES = 21;
const START_S = 1_767_225_600; // 2026-01-01T00:00:00Z
const EVALUATIONS = 3;
const RUNBOOK = 'https://example.invalid/runbooks';

/**
 * Writes the recording of `managers` managers: for each family (in page order), each manager's series, each
 * series' samples in time order. Families are gathered in one file each, then joined with their TYPE lines.
 */
async function writeRecording(dir: string, managers: number): Promise<string> {
  const families = new Map<string, { type: string; file: string }>();
  for (let m = 0; m < managers; m++) {
    const queues = profiles(m, QUEUES_PER_MANAGER);
    const target = `job="bench-prometheus-mode",instance="manager-${m}:8080"`;
    // family → series → lines, for this manager.
    const gathered = new Map<string, Map<string, string[]>>();
    for (let k = 0; k < SCRAPES; k++) {
      const t = k * SCRAPE_S;
      let family = '';
      for (const line of syntheticPage(queues, t).split('\n')) {
        if (line === '') continue;
        if (line.startsWith('# TYPE ')) {
          const [, , name, type] = line.split(' ');
          family = name as string;
          // OpenMetrics names a counter family without `_total`.
          const key = type === 'counter' ? family.replace(/_total$/, '') : family;
          if (!families.has(family))
            families.set(family, { type: `${key} ${type}`, file: join(dir, `${families.size}.part`) });
          continue;
        }
        if (line.startsWith('#')) continue;
        const brace = line.indexOf('{');
        const space = line.lastIndexOf(' ');
        const series = line.slice(0, space);
        const labelled =
          brace >= 0 && brace < space
            ? `${series.slice(0, brace + 1)}${target},${series.slice(brace + 1)}`
            : `${series}{${target}}`;
        let bySeries = gathered.get(family);
        if (bySeries === undefined) {
          bySeries = new Map();
          gathered.set(family, bySeries);
        }
        let lines = bySeries.get(labelled);
        if (lines === undefined) {
          lines = [];
          bySeries.set(labelled, lines);
        }
        lines.push(`${labelled} ${line.slice(space + 1)} ${START_S + t}`);
      }
    }
    for (const [family, bySeries] of gathered) {
      const file = families.get(family)?.file as string;
      await appendFile(file, `${[...bySeries.values()].flat().join('\n')}\n`);
    }
  }
  const out = join(dir, 'fleet.om');
  const stream = createWriteStream(out);
  for (const { type, file } of families.values()) {
    stream.write(`# TYPE ${type}\n`);
    stream.write(await readFile(file));
    rmSync(file);
  }
  stream.end('# EOF\n');
  await new Promise<void>((done, fail) => {
    stream.on('finish', done);
    stream.on('error', fail);
  });
  return out;
}

/** An HTTP proxy to `upstream` counting requests and response bytes. */
async function countingProxy(upstream: string): Promise<{
  url: string;
  take(): { requests: number; bytes: number };
  close(): Promise<void>;
}> {
  const target = new URL(upstream);
  let requests = 0;
  let bytes = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    const forward = http.request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take() {
      const counted = { requests, bytes };
      requests = 0;
      bytes = 0;
      return counted;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

type Row = {
  queues: number;
  series: number;
  recordingMiB: number;
  firstMs: number;
  first: { requests: number; bytes: number };
  laterMs: number;
  later: { requests: number; bytes: number };
  found: number;
};

async function measure(queues: number): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'wqd-bench-prom-mode-'));
  try {
    const file = await writeRecording(dir, queues / QUEUES_PER_MANAGER);
    const recordingMiB = (await readFile(file)).length / 2 ** 20;
    const storage = await importRecordings([file]);
    rmSync(file);
    const prom = await startPrometheus({ storagePath: storage, readyTimeoutMs: 120_000 });
    const proxy = await countingProxy(prom.url);
    const source = createPrometheusSource({ url: proxy.url, timeoutMs: 120_000 });
    try {
      const series = Number(
        (await prom.query('count({job="bench-prometheus-mode"})', START_S + SCRAPES * SCRAPE_S))[0]?.value,
      );
      const atMs = (START_S + (SCRAPES - 1) * SCRAPE_S) * 1000;
      const memory = new EvaluationMemory();
      const runs: Array<{ ms: number; requests: number; bytes: number; found: number }> = [];
      for (let i = 0; i < EVALUATIONS; i++) {
        const start = performance.now();
        const report = await diagnoseSource(source, { atMs, runbookBaseUrl: RUNBOOK, memory });
        const ms = performance.now() - start;
        const counted = proxy.take();
        runs.push({ ...counted, ms, found: report.queues.length });
      }
      const [first, ...later] = runs as [(typeof runs)[0], ...typeof runs];
      const median = later.sort((a, b) => a.ms - b.ms)[Math.floor(later.length / 2)] ?? first;
      return {
        queues,
        series,
        recordingMiB,
        firstMs: first.ms,
        first: { requests: first.requests, bytes: first.bytes },
        laterMs: median.ms,
        later: { requests: median.requests, bytes: median.bytes },
        found: first.found,
      };
    } finally {
      await source.close();
      await proxy.close();
      await prom.stop();
      removeTempDirs();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  for (const size of SIZES) rows.push(await measure(size));
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  console.log(
    '| queues | series in Prometheus | recording | queues reported | first evaluation: queries, time, bytes | later evaluations: queries, time, bytes |',
  );
  console.log('|---:|---:|---:|---:|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.queues} | ${r.series} | ${r.recordingMiB.toFixed(0)} MiB | ${r.found} | ${r.first.requests}, ${(r.firstMs / 1000).toFixed(1)} s, ${mib(r.first.bytes)} | ${r.later.requests}, ${(r.laterMs / 1000).toFixed(1)} s, ${mib(r.later.bytes)} |`,
    );
  }
  const counts = new Set(rows.map((r) => r.later.requests));
  console.log(
    `\nQueries per evaluation constant in the number of queues: ${counts.size === 1 ? 'met' : 'missed'} (${[...counts].join(', ')})`,
  );
  writeFileSync(join(tmpdir(), 'wqd-bench-prometheus-mode.json'), JSON.stringify(rows));
}

await main();
