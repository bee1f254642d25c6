/**
 * What `GET /api/v1/targets` reports: in scrape mode, each target's scrape health (with discovery's
 * status when targets come from Kubernetes); in Prometheus mode, whether the server answers and its
 * build info. URLs are shown without credentials.
 */

import type { Target } from '../discovery/target.js';
import { labelsOf } from '../exposition/labels.js';
import type { BuildInfo, PrometheusClient } from '../prometheus/prometheus-api.js';
import { redactUrl } from '../scrape/scrape-error.js';
import type { TargetHealth } from '../scrape/target-health.js';
import { scrapeLabels } from '../sources/target-provider.js';
import { targetName } from '../sources/target-state.js';

export type TargetView = {
  readonly key: string;
  readonly url: string;
  /** `job/instance`, as in the report's `queue.target`. */
  readonly target: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly up: boolean;
  readonly lastScrape: string | null;
  readonly lastDurationSeconds: number | null;
  readonly samples: number | null;
  readonly bytes: number | null;
  readonly consecutiveFailures: number;
  readonly skippedScrapes: number;
  readonly lastError: { readonly code: string; readonly message: string; readonly at: string } | null;
  /** What a limit did to the last successful scrape (e.g. stale series evicted); null when none acted on it. */
  readonly lastWarning: { readonly code: string; readonly message: string; readonly at: string } | null;
};

export type DiscoveryView = {
  readonly kind: 'kubernetes';
  readonly healthy: boolean;
  readonly lastSync: string | null;
  readonly consecutiveFailures: number;
  readonly lastError: { readonly message: string; readonly at: string } | null;
};

export type PrometheusView = {
  readonly url: string;
  readonly up: boolean;
  readonly checkedAt: string | null;
  readonly buildInfo: BuildInfo | null;
  readonly lastError: { readonly message: string; readonly at: string } | null;
};

export type TargetsView =
  | { readonly mode: 'scrape'; readonly targets: readonly TargetView[]; readonly discovery?: DiscoveryView }
  | { readonly mode: 'prometheus'; readonly prometheus: PrometheusView };

/** Joins the provider's current targets with the scrape source's health, by key, in key order. */
export function scrapeTargetsView(
  targets: readonly Target[],
  health: readonly TargetHealth[],
  discovery?: DiscoveryView,
): TargetsView {
  const byKey = new Map(health.map((h) => [h.key, h]));
  const views = [...targets]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((t): TargetView => {
      const labels = scrapeLabels(t);
      const h = byKey.get(t.key);
      return {
        key: redactUrl(t.key),
        url: redactUrl(t.url),
        target: targetName(labelsOf(labels)),
        labels,
        up: h?.up ?? false,
        lastScrape: iso(h?.lastScrapeAt ?? null),
        lastDurationSeconds: h?.lastDurationMs == null ? null : h.lastDurationMs / 1000,
        samples: h?.samples ?? null,
        bytes: h?.bytes ?? null,
        consecutiveFailures: h?.consecutiveFailures ?? 0,
        skippedScrapes: h?.skippedScrapes ?? 0,
        lastError:
          h?.lastError == null
            ? null
            : { code: String(h.lastError.code), message: h.lastError.message, at: iso(h.lastError.at) as string },
        lastWarning:
          h?.lastWarning == null
            ? null
            : {
                code: String(h.lastWarning.code),
                message: h.lastWarning.message,
                at: iso(h.lastWarning.at) as string,
              },
      };
    });
  return { mode: 'scrape', targets: views, ...(discovery !== undefined ? { discovery } : {}) };
}

/** The name (`job/instance`) a target's series and findings carry. */
export function targetNameOf(target: Target): string {
  return targetName(labelsOf(scrapeLabels(target)));
}

export interface PrometheusStatus {
  view(): PrometheusView;
  /** Asks the server for its build info now (also done every `intervalMs` once started). */
  refresh(): Promise<void>;
  start(): void;
  stop(): void;
}

/** Polls the Prometheus server's build info; the API answers from the last poll, never on request. */
export function createPrometheusStatus(
  client: Pick<PrometheusClient, 'buildInfo'>,
  url: string,
  intervalMs: number,
  now: () => number = Date.now,
): PrometheusStatus {
  let state: PrometheusView = { url: redactUrl(url), up: false, checkedAt: null, buildInfo: null, lastError: null };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const refresh = (): Promise<void> => {
    running ??= client
      .buildInfo()
      .then(
        (buildInfo) => {
          state = { ...state, up: true, checkedAt: iso(now()), buildInfo, lastError: null };
        },
        (error: unknown) => {
          const at = iso(now()) as string;
          const message = error instanceof Error ? error.message : String(error);
          state = { ...state, up: false, checkedAt: at, lastError: { message, at } };
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  return {
    view: () => state,
    refresh,
    start() {
      if (timer !== undefined) return;
      void refresh();
      timer = setInterval(() => void refresh(), intervalMs);
      timer.unref();
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
