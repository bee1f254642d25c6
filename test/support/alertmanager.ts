/**
 * A real Alertmanager for tests (Debian package `prometheus-alertmanager`, 0.25; the binary is
 * `prometheus-alertmanager`).
 *
 * - `startAlertmanager(options)`: an Alertmanager on a free 127.0.0.1 port with HA gossip off
 *   (`--cluster.listen-address=` empty, otherwise it binds 0.0.0.0:9094) and temporary storage, ready when it
 *   returns. `alerts(filter)` lists its alerts through `GET /api/v2/alerts`. `stop()` kills it and removes its
 *   temporary directory.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDaemon } from './daemon.js';
import { requireTool } from './prometheus.js';

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

  try {
    const daemon = await startDaemon({
      name: 'alertmanager',
      binary,
      readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
      args: (port, attempt) => [
        `--config.file=${configFile}`,
        `--storage.path=${join(dir, `data-${attempt}`)}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ],
    });
    let stopped = false;
    return {
      url: daemon.url,
      address: `127.0.0.1:${daemon.port}`,
      async alerts(filter = []) {
        const query = new URLSearchParams(filter.map((f): [string, string] => ['filter', f]));
        const res = await fetch(`${daemon.url}/api/v2/alerts${filter.length > 0 ? `?${query.toString()}` : ''}`);
        if (!res.ok) throw new Error(`GET /api/v2/alerts: ${res.status} ${await res.text()}`);
        return (await res.json()) as AlertmanagerAlert[];
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await daemon.stop();
        cleanup();
      },
    };
  } catch (error) {
    cleanup();
    throw error;
  }
}
