/**
 * A real Alertmanager for tests (Debian package `prometheus-alertmanager`, 0.25; the binary is
 * `prometheus-alertmanager`).
 *
 * - `startAlertmanager(options)`: an Alertmanager on a free 127.0.0.1 port with HA gossip off
 *   (`--cluster.listen-address=` empty, otherwise it binds 0.0.0.0:9094) and temporary storage, ready when it
 *   returns. `alerts(filter)` lists its alerts through `GET /api/v2/alerts`. `stop()` kills it and removes its
 *   temporary directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireTool } from './prometheus.js';

export interface AlertmanagerOptions {
  /** alertmanager.yml contents. */
  readonly configYaml: string;
  /** How long to wait for `/-/ready`; default 30 s. */
  readonly readyTimeoutMs?: number;
}

/** An alert as `GET /api/v2/alerts` lists it (the fields tests read). */
export interface AlertmanagerAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly fingerprint: string;
  readonly receivers: ReadonlyArray<{ readonly name: string }>;
  readonly status: { readonly state: string; readonly silencedBy: string[]; readonly inhibitedBy: string[] };
}

export interface AlertmanagerHandle {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** `host:port`, as Prometheus's `alerting.alertmanagers` static targets name it. */
  readonly address: string;
  /** `GET /api/v2/alerts`, with each matcher (e.g. `alertname="X"`) as a `filter` parameter. */
  alerts(filter?: readonly string[]): Promise<AlertmanagerAlert[]>;
  /** Kills Alertmanager and removes its temporary directory. Safe to call twice. */
  stop(): Promise<void>;
}

export async function startAlertmanager(options: AlertmanagerOptions): Promise<AlertmanagerHandle> {
  const binary = requireTool('prometheus-alertmanager');
  const dir = mkdtempSync(join(tmpdir(), 'wqd-alertmanager-'));
  const cleanup = (): void => rmSync(dir, { recursive: true, force: true });
  const configFile = join(dir, 'alertmanager.yml');
  writeFileSync(configFile, options.configYaml);

  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const url = `http://${address}`;
    const child = spawn(
      binary,
      [
        `--config.file=${configFile}`,
        `--storage.path=${join(dir, `data-${attempt}`)}`,
        `--web.listen-address=${address}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (d: Buffer): void => {
      output = (output + d.toString()).slice(-8192);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    try {
      await waitReady(url, child, options.readyTimeoutMs ?? 30_000, () => output);
    } catch (err) {
      await kill(child);
      lastError = err as Error;
      if (/address already in use/.test(output)) continue;
      cleanup();
      throw err;
    }
    let stopped = false;
    return {
      url,
      address,
      async alerts(filter = []) {
        const query = new URLSearchParams(filter.map((f): [string, string] => ['filter', f]));
        const res = await fetch(`${url}/api/v2/alerts${filter.length > 0 ? `?${query.toString()}` : ''}`);
        if (!res.ok) throw new Error(`GET /api/v2/alerts: ${res.status} ${await res.text()}`);
        return (await res.json()) as AlertmanagerAlert[];
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await kill(child);
        cleanup();
      },
    };
  }
  cleanup();
  throw lastError ?? new Error('alertmanager did not start');
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number, output: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });
  while (Date.now() < deadline) {
    if (exited !== null) throw new Error(`alertmanager exited with code ${exited} before it was ready:\n${output()}`);
    try {
      const res = await fetch(`${url}/-/ready`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`alertmanager at ${url} not ready after ${timeoutMs} ms:\n${output()}`);
}

function kill(child: ChildProcess): Promise<void> {
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
