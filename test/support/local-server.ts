/**
 * HTTP(S) servers on 127.0.0.1 with an ephemeral port, closed (connections included) by `close()` (`closeServer`
 * for a server made elsewhere); and `withApiParameters`, a handler reading a Prometheus API request's parameters.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  server: http.Server;
  port: number;
  /** `http://127.0.0.1:PORT` or `https://127.0.0.1:PORT`, without a trailing slash. */
  origin: string;
  close(): Promise<void>;
}

export async function startHttpServer(handler: http.RequestListener): Promise<LocalServer> {
  return listen(http.createServer(handler), 'http');
}

export async function startHttpsServer(
  tls: { cert: string | Buffer; key: string | Buffer },
  handler: http.RequestListener,
): Promise<LocalServer> {
  return listen(https.createServer({ cert: tls.cert, key: tls.key }, handler), 'https');
}

async function listen(server: http.Server, scheme: 'http' | 'https'): Promise<LocalServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    origin: `${scheme}://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export { freePort } from './daemon.js';

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const suffix = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out waiting for ${what}${suffix}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Stops `server` listening and closes its connections, idle or not; resolves once it is closed. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A request's parameters, from its URL's query and its form body (Prometheus clients POST their queries). */
export type ApiParameter = (name: string) => string | undefined;

/** A handler given the request's path and parameters once its body has arrived. */
export function withApiParameters(
  handler: (path: string, parameter: ApiParameter, res: http.ServerResponse) => void,
): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      const form = new URLSearchParams(body);
      handler(url.pathname, (name) => url.searchParams.get(name) ?? form.get(name) ?? undefined, res);
    });
  };
}
