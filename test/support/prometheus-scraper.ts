/**
 * A real Prometheus (`startPrometheus`) scraping a prom-client exporter on 127.0.0.1 every second.
 * `stop()` ends both.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { LABEL, WORKQUEUE } from '../../src/metrics/names.js';
import { type LocalServer, startHttpServer } from './local-server.js';
import { startPrometheus } from './prometheus.js';

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

/** Prometheus scraping a fresh exporter every second; fails (never skips) when the binary is missing. */
export async function startPrometheusScrapingExporter(): Promise<RunningPrometheus> {
  const exporter = await startExporter();
  try {
    const prom = await startPrometheus({
      configYaml: [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        `  - job_name: ${EXPORTER_JOB}`,
        '    static_configs:',
        `      - targets: ['${exporter.hostPort}']`,
        '',
      ].join('\n'),
      readyTimeoutMs: 20_000,
    });
    return {
      url: prom.url,
      exporter,
      output: prom.output,
      stop: async () => {
        await prom.stop();
        await exporter.server.close();
      },
    };
  } catch (error) {
    await exporter.server.close();
    throw error;
  }
}
