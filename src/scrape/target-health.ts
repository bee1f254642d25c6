/**
 * Scrape health of one target, as the REST API and the service's own metrics report it.
 * Records are immutable; the updaters return a new record.
 */
import type { ScrapeErrorCode } from './scrape-error.js';
import { ScrapeError } from './scrape-error.js';

export interface TargetScrapeError {
  /** A `ScrapeErrorCode`, or another short code for failures past the fetch (e.g. parse errors). */
  code: ScrapeErrorCode | (string & {});
  message: string;
  /** Epoch milliseconds. */
  at: number;
}

export interface TargetHealth {
  key: string;
  url: string;
  /** The last scrape succeeded. False before the first scrape. */
  up: boolean;
  /** The error of the last failed scrape; null once a scrape succeeds again. */
  lastError: TargetScrapeError | null;
  /**
   * What a limit did to the last successful scrape, which was stored (e.g. the target's stale series evicted to stay
   * within the held series limit); null when none acted on it, and after a failed scrape.
   */
  lastWarning: TargetScrapeError | null;
  /** When the last scrape (successful or not) finished, epoch milliseconds. */
  lastScrapeAt: number | null;
  lastDurationMs: number | null;
  /** Samples parsed from the last successful page (filled by the scraper; null until known). */
  samples: number | null;
  /** Uncompressed bytes of the last successful page. */
  bytes: number | null;
  /** Failed scrapes since the last success. */
  consecutiveFailures: number;
  /** Scrapes skipped because the previous one of this target was still running. */
  skippedScrapes: number;
}

export function newTargetHealth(key: string, url: string): TargetHealth {
  return {
    key,
    url,
    up: false,
    lastError: null,
    lastWarning: null,
    lastScrapeAt: null,
    lastDurationMs: null,
    samples: null,
    bytes: null,
    consecutiveFailures: 0,
    skippedScrapes: 0,
  };
}

export function recordScrapeSuccess(
  health: TargetHealth,
  result: {
    at: number;
    durationMs: number;
    bytes: number;
    samples?: number;
    warning?: { readonly code: string; readonly message: string };
  },
): TargetHealth {
  return {
    ...health,
    up: true,
    lastError: null,
    lastWarning: result.warning === undefined ? null : { ...result.warning, at: result.at },
    lastScrapeAt: result.at,
    lastDurationMs: result.durationMs,
    bytes: result.bytes,
    samples: result.samples ?? health.samples,
    consecutiveFailures: 0,
  };
}

/** `samples` is usually known only after parsing, which follows the fetch. */
export function recordScrapeSamples(health: TargetHealth, samples: number): TargetHealth {
  return { ...health, samples };
}

export function recordScrapeFailure(
  health: TargetHealth,
  failure: { at: number; durationMs: number; error: unknown },
): TargetHealth {
  return {
    ...health,
    up: false,
    lastError: describeError(failure.error, failure.at),
    lastWarning: null,
    lastScrapeAt: failure.at,
    lastDurationMs: failure.durationMs,
    consecutiveFailures: health.consecutiveFailures + 1,
  };
}

export function recordSkippedScrape(health: TargetHealth): TargetHealth {
  return { ...health, skippedScrapes: health.skippedScrapes + 1 };
}

function describeError(error: unknown, at: number): TargetScrapeError {
  if (error instanceof ScrapeError) return { code: error.code, message: error.message, at };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { code: typeof code === 'string' ? code : 'error', message: error.message, at };
  }
  return { code: 'error', message: String(error), at };
}
