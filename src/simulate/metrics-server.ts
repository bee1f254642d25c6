/**
 * The HTTP server of a live simulation: `/metrics` in Prometheus text 0.0.4, or OpenMetrics 1.0 when
 * the Accept header asks for `application/openmetrics-text`; `/` says what this is.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SimProcess } from './process.js';
import { formatOpenMetrics, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_CONTENT_TYPE } from './recording-writer.js';

export interface MetricsServer {
  readonly server: http.Server;
  readonly address: AddressInfo;
  /** `http://host:port/metrics` */
  readonly url: string;
}

/** Serves `sim`'s registry on `host:port`; resolves once the server listens. */
export async function listenMetrics(
  sim: SimProcess,
  scenario: string,
  host: string,
  port: number,
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => serveMetrics(sim, scenario, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { server, address, url: `http://${shownHost}:${address.port}/metrics` };
}

/** `/metrics` in Prometheus text, or OpenMetrics when the client asks for it; `/` says what this is. */
function serveMetrics(sim: SimProcess, scenario: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== '/metrics') {
    res.writeHead(path === '/' ? 200 : 404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(path === '/' ? `workqueue-doctor simulate: scenario ${scenario}; metrics at /metrics\n` : 'not found\n');
    return;
  }
  const openMetrics = /application\/openmetrics-text/i.test(req.headers.accept ?? '');
  const body = openMetrics ? sim.registry.getMetricsAsJSON().then(formatOpenMetrics) : sim.registry.metrics();
  body.then(
    (text) => {
      res.writeHead(200, { 'content-type': openMetrics ? OPENMETRICS_CONTENT_TYPE : PROMETHEUS_CONTENT_TYPE });
      res.end(req.method === 'HEAD' ? undefined : text);
    },
    (error: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${error instanceof Error ? error.message : String(error)}\n`);
    },
  );
}
