/**
 * Starts a server binary (Prometheus, Alertmanager) for a test on a free 127.0.0.1 port and waits until its
 * `/-/ready` answers. A port taken between choosing and binding is retried with another; a process that
 * exits or never gets ready fails with what it printed. `stop()` ends it (SIGTERM, then SIGKILL).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

export type DaemonOptions = {
  /** For messages: `prometheus`, `alertmanager`. */
  readonly name: string;
  readonly binary: string;
  /** The command line for a given port; called again with a new port on a retry. */
  readonly args: (port: number, attempt: number) => readonly string[];
  /** Default 30 s. */
  readonly readyTimeoutMs?: number;
};

export type Daemon = {
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  readonly port: number;
  /** The last 8 KiB the process printed, for failure messages. */
  output(): string;
  /** Ends the process. Safe to call twice. */
  stop(): Promise<void>;
};

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(options.binary, [...options.args(port, attempt)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-8192);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    try {
      await waitReady(options.name, url, child, options.readyTimeoutMs ?? 30_000, () => output);
    } catch (error) {
      await stopProcess(child);
      lastError = error as Error;
      if (/address already in use/.test(output)) continue;
      throw error;
    }
    return { url, port, output: () => output, stop: () => stopProcess(child) };
  }
  throw lastError ?? new Error(`${options.name} did not start`);
}

async function waitReady(
  name: string,
  url: string,
  child: ChildProcess,
  timeoutMs: number,
  output: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });
  while (Date.now() < deadline) {
    if (exited !== null) throw new Error(`${name} exited with code ${exited} before it was ready:\n${output()}`);
    try {
      const res = await fetch(`${url}/-/ready`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} at ${url} not ready after ${timeoutMs} ms:\n${output()}`);
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
