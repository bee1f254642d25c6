/**
 * How much the API's cached answers (serialized bodies and their compressed forms, see `BodyCache`) may hold without a
 * memory budget (with one, `serve` sizes them from it: memory-budget.ts, within these), sized for the
 * sidecar's 192 MiB memory limit:
 *
 *     192 MiB  the sidecar's limit
 *   − 100 MiB  the service's resident memory with 50 queues (docs/deployment.md, Resources)
 *   −  20 MiB  a page at the sidecar's 8 MiB byte limit while it is read and parsed (docs/reliability.md)
 *   −  10 MiB  the encoders of the compressions running at once (`COMPRESSION_SLOTS`)
 *   =  62 MiB, of which the cached answers take at most 16 MiB and garbage collection keeps the rest as headroom.
 *
 * A 300 KB report with its two compressed forms holds about 410 KB, so the entry bounds come first for the
 * reports of a few hundred queues; the byte bounds are what hold for larger reports and for clients that ask for
 * every filter there is.
 */

const MiB = 1024 * 1024;

/** Filtered reports (`/api/v1/diagnosis?status=…&rule=…`): at most 16 filters, 8 MiB. */
export const REPORT_BODIES = { maxEntries: 16, maxBytes: 8 * MiB } as const;
/** Single queues (`/api/v1/queues/{id}`): 4 MiB. */
export const QUEUE_BODIES = { maxEntries: 1_000, maxBytes: 4 * MiB } as const;
/** Chart series of one queue and choice of signals (`/api/v1/queues/{id}/series`): 4 MiB. */
export const SERIES_BODIES = { maxEntries: 256, maxBytes: 4 * MiB } as const;

/** The bounds of every cache of answers. */
export type AnswerCacheLimits = {
  readonly reports: { readonly maxEntries: number; readonly maxBytes: number };
  readonly queues: { readonly maxEntries: number; readonly maxBytes: number };
  readonly series: { readonly maxEntries: number; readonly maxBytes: number };
};

export const DEFAULT_ANSWER_CACHE: AnswerCacheLimits = {
  reports: REPORT_BODIES,
  queues: QUEUE_BODIES,
  series: SERIES_BODIES,
};
