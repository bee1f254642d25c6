/**
 * A real Prometheus (Debian package `prometheus`) on a free 127.0.0.1 port with a temporary storage
 * directory, scraping a prom-client exporter on 127.0.0.1 every second. `stop()` ends both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { type LocalServer, startHttpServer, unusedPort, waitFor } from './local-server.js';

export const PROMETHEUS_BINARY = '/usr/bin/prometheus';
export const EXPORTER_JOB = 'wqd-exporter';

export interface Exporter {
  server: LocalServer;
  /** host:port, as Prometheus' `instance` label shows it. */
  hostPort: string;
  depth: Gauge<string>;
  adds: Counter<string>;
}

export async function startExporter(): Promise<Exporter> {
  const registry = new Registry();
  const depth = new Gauge({
    name: WORKQUEUE.depth,
    help: 'Current depth of workqueue',
    labelNames: [LABEL.name],
    registers: [registry],
  });
  const adds = new Counter({
    name: WORKQUEUE.adds,
    help: 'Total number of adds handled by workqueue',
    labelNames: [LABEL.name],
    registers: [registry],
  });
  depth.set({ name: 'demo' }, 3);
  const server = await startHttpServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404);
      res.end();
      return;
    }
    adds.inc({ name: 'demo' }, 2);
    registry.metrics().then(
      (body) => {
        res.writeHead(200, { 'content-type': registry.contentType });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(500);
        res.end(String(err));
      },
    );
  });
  return { server, hostPort: `127.0.0.1:${server.port}`, depth, adds };
}

export interface RunningPrometheus {
  /** `http://127.0.0.1:PORT` */
  url: string;
  exporter: Exporter;
  /** What the process printed (bounded), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/** Fails (never skips) when the binary is missing. */
export function requirePrometheusBinary(): void {
  if (!existsSync(PROMETHEUS_BINARY)) {
    throw new Error(`${PROMETHEUS_BINARY} not found: install Debian package prometheus (apt-get install prometheus)`);
  }
}

export async function startPrometheusScrapingExporter(): Promise<RunningPrometheus> {
  requirePrometheusBinary();
  const exporter = await startExporter();
  const dir = mkdtempSync(join(tmpdir(), 'wqd-prom-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(
    configFile,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      `  - job_name: ${EXPORTER_JOB}`,
      '    static_configs:',
      `      - targets: ['${exporter.hostPort}']`,
      '',
    ].join('\n'),
  );
  let lastFailure = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await unusedPort();
    const storage = mkdtempSync(join(dir, 'data-'));
    const child = spawn(
      PROMETHEUS_BINARY,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${storage}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-64 * 1024);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    let exited = false;
    child.on('exit', () => {
      exited = true;
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitFor(
        'prometheus to be ready',
        async () => {
          if (exited) throw new Error(`prometheus exited: ${output}`);
          return (await httpStatus(`${url}/-/ready`)) === 200;
        },
        20_000,
        100,
      );
    } catch (err) {
      await stopChild(child);
      lastFailure = err instanceof Error ? err.message : String(err);
      if (output.includes('address already in use')) continue; // the free port was taken meanwhile
      break;
    }
    return {
      url,
      exporter,
      output: () => output,
      stop: async () => {
        await stopChild(child);
        await exporter.server.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  await exporter.server.close();
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`could not start prometheus: ${lastFailure}`);
}

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.setTimeout(2_000, () => req.destroy(new Error('timeout')));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killTimer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(killTimer);
}
