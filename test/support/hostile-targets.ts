/**
 * Hostile metrics targets, and the healthy target they are run beside: one table shared by the scrape-source
 * test (`test/sources/hostile-targets.test.ts`) and the service benchmark (`bench/hostile-targets.ts`).
 *
 * Contract:
 * - Each `HostileKind` makes a fresh request handler (`handler()`); state such as a scrape count belongs to that
 *   handler. The caller serves it on 127.0.0.1 and closes the server; a handler that never ends its response (the
 *   trickle, the gzip bomb) stops writing when the connection closes.
 * - The pages are made for the scrape source's default limits (`DEFAULT_SCRAPE_MAX_BYTES`,
 *   `DEFAULT_SCRAPE_SERIES_LIMIT`, `DEFAULT_SCRAPE_LABEL_VALUE_LIMIT`): the gzip bomb expands past the byte limit,
 *   the cardinality bomb stays under the byte limit and passes the series limit, the long label passes the label
 *   value limit. A scrape timeout of a few seconds or less ends the trickle.
 * - `errorAfterScrape(n)` is what the hostile target's health reports after its scrape number `n` (from 0): the
 *   scrape source's error code, or null when that scrape succeeds; `warningAfterScrape(n)`, when given, the code of
 *   the warning a successful scrape carries (a held limit evicted stale series), or null.
 * - The kinds after the classic ones attack the memory over time and through queue identities, each within the
 *   per-page limits but one: 9,999 work queues under one queue name (`controller` differs) and 9,999 queues of
 *   `workqueue_adds_total` alone (both refused by the queue limit, which counts queues as the engine keys them),
 *   9,999 new series at every scrape (held within the held series limit, stale ones evicted), and 250 queues with a
 *   790-character name (a page of about 7 MiB inside every default limit).
 * - The healthy target is a synthetic controller manager (`bench/synthetic-managers.ts`) with queues of every
 *   kind (healthy, backlog, hot loop, failing, slow), its page a function of the time read from the caller's
 *   clock, so two scrapes at the same time read the same page. The hostile pages that parse expose the very same
 *   queue names, so nothing but the target tells them apart.
 */
import type http from 'node:http';
import { profiles, type QueueProfile, syntheticPage } from '../../bench/synthetic-managers.js';
import { CLIENT_GO, WORKQUEUE } from '../../src/metrics/names.js';
import {
  DEFAULT_SCRAPE_HELD_SERIES_LIMIT,
  DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  DEFAULT_SCRAPE_MAX_BYTES,
  DEFAULT_SCRAPE_QUEUE_LIMIT,
  DEFAULT_SCRAPE_SERIES_LIMIT,
} from '../../src/scrape/scrape-settings.js';
import { PROMETHEUS_CONTENT_TYPE } from '../../src/simulate/recording-writer.js';
import type { ScrapeSourceErrorCode } from '../../src/sources/scrape-source.js';
import { gzipBomb } from './gzip-bomb.js';

const MiB = 1024 * 1024;

/** The healthy manager's queues: ten controllers, among them a backlog, a hot loop, a failing and a slow one. */
export const HEALTHY_QUEUES: readonly QueueProfile[] = profiles(0, 10);
/** How long the healthy manager has been up when its clock starts: long enough for counters to be large. */
const HEALTHY_UPTIME_MS = 60 * 60_000;

/** The healthy target: its page at `now()`, from a manager that was up an hour at `startedMs` (default: now). */
export function healthyTargetHandler(now: () => number, startedMs: number = now()): http.RequestListener {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
    res.end(syntheticPage(HEALTHY_QUEUES, (now() - startedMs + HEALTHY_UPTIME_MS) / 1000));
  };
}

export interface HostileKind {
  /** The test's case and the benchmark's row. */
  readonly name: string;
  /** What the target serves. */
  readonly serves: string;
  /** The hostile target's health after its scrape number `scrape` (from 0): its error code, or null (a success). */
  readonly errorAfterScrape: (scrape: number) => ScrapeSourceErrorCode | null;
  /** The warning of a successful scrape number `scrape`, or null; unset: never one. */
  readonly warningAfterScrape?: (scrape: number) => ScrapeSourceErrorCode | null;
  /** A new handler, with its own state; `now` is the scraper's clock. */
  handler(now: () => number): http.RequestListener;
}

/** Cardinality bomb: distinct series of one diagnostic family. */
export const CARDINALITY_BOMB_SERIES = 1_000_000;
/** Length of the label value of the long-label page: 100 times the default limit. */
export const LONG_LABEL_VALUE_CHARS = 100_000;
/** The trickle writes one line this often and never ends its response. */
const TRICKLE_EVERY_MS = 100;
/** How old the explicit timestamps of the old-timestamps page are. */
const OLD_TIMESTAMP_AGE_MS = 6 * 3600_000;
/** Seconds of uptime the hostile pages that parse start from. */
const HOSTILE_UPTIME_S = 24 * 3600;

/** A million distinct series under the byte limit: only the series limit refuses it. */
export const CARDINALITY_BOMB: HostileKind = {
  name: 'cardinality bomb',
  serves: `${CARDINALITY_BOMB_SERIES.toLocaleString('en-US')} series of ${WORKQUEUE.depth}, under the byte limit`,
  errorAfterScrape: () => 'series_limit',
  handler: () => {
    const page = cardinalityBombPage();
    return (_req, res) => {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE, 'content-length': page.length });
      res.end(page);
    };
  },
};

/** Targets that fail, flood or lie, page by page. */
const CLASSIC_KINDS: readonly HostileKind[] = [
  {
    name: 'gzip bomb',
    serves: `${(2 * DEFAULT_SCRAPE_MAX_BYTES) / MiB} MiB of zeros, gzipped (about 1 KB a MiB)`,
    errorAfterScrape: () => 'too_large',
    handler: () => gzipBomb((2 * DEFAULT_SCRAPE_MAX_BYTES) / MiB, PROMETHEUS_CONTENT_TYPE).handler,
  },
  CARDINALITY_BOMB,
  {
    name: 'trickle',
    serves: `a body that never ends: one comment line every ${TRICKLE_EVERY_MS} ms`,
    errorAfterScrape: () => 'timeout',
    handler: () => (_req, res) => {
      res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
      res.write(`# TYPE ${WORKQUEUE.depth} gauge\n`);
      const timer = setInterval(() => res.write('# still writing\n'), TRICKLE_EVERY_MS);
      res.on('close', () => clearInterval(timer));
    },
  },
  {
    name: 'HTTP 500',
    serves: 'HTTP 500 with a text body',
    errorAfterScrape: () => 'http_status',
    handler: () => (_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    },
  },
  {
    name: 'redirect loop',
    serves: 'HTTP 302 to itself',
    errorAfterScrape: () => 'http_status',
    handler: () => (req, res) => {
      res.writeHead(302, { location: req.url ?? '/metrics' });
      res.end();
    },
  },
  {
    name: 'HTML page',
    serves: 'a login page (text/html, 200)',
    errorAfterScrape: () => 'parse_error',
    handler: () => (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><form method="post"><input name="user"></form></body></html>\n',
      );
    },
  },
  {
    name: 'counter reset on every scrape',
    serves: 'the healthy queues, every counter lower than at the scrape before',
    errorAfterScrape: () => null,
    handler: () => {
      let scrape = 0;
      return textHandler(() => syntheticPage(HEALTHY_QUEUES, HOSTILE_UPTIME_S / ++scrape));
    },
  },
  {
    name: 'duplicate series',
    serves: 'the healthy queues, every sample line twice with different values',
    errorAfterScrape: () => null,
    handler: () => {
      let scrape = 0;
      return textHandler(() =>
        mapSampleLines(syntheticPage(HEALTHY_QUEUES, HOSTILE_UPTIME_S + 15 * scrape++), (series, value) => [
          `${series} ${value}`,
          `${series} ${Number(value) + 1}`,
        ]),
      );
    },
  },
  {
    name: 'NaN and ±Inf',
    serves: 'the healthy queues, every value NaN, +Inf or -Inf',
    errorAfterScrape: () => null,
    handler: () => {
      const special = ['NaN', '+Inf', '-Inf'];
      return textHandler(() =>
        mapSampleLines(syntheticPage(HEALTHY_QUEUES, HOSTILE_UPTIME_S), (series, _value, i) => [
          `${series} ${special[i % special.length]}`,
        ]),
      );
    },
  },
  {
    name: 'old timestamps',
    serves: 'the healthy queues, every sample stamped six hours before the scrape',
    errorAfterScrape: () => null,
    handler: (now) =>
      textHandler(() =>
        mapSampleLines(syntheticPage(HEALTHY_QUEUES, HOSTILE_UPTIME_S), (series, value) => [
          `${series} ${value} ${now() - OLD_TIMESTAMP_AGE_MS}`,
        ]),
      ),
  },
  {
    name: 'flapping',
    serves: 'the healthy queues on even scrapes, HTTP 503 on odd ones',
    errorAfterScrape: (scrape) => (scrape % 2 === 0 ? null : 'http_status'),
    handler: () => {
      let scrape = 0;
      return (_req, res) => {
        const n = scrape++;
        if (n % 2 === 1) {
          res.writeHead(503, { 'content-type': 'text/plain' });
          res.end('unavailable\n');
          return;
        }
        res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
        res.end(syntheticPage(HEALTHY_QUEUES, HOSTILE_UPTIME_S + 15 * n));
      };
    },
  },
  {
    name: '100 KB label value',
    serves: `the healthy queues, one of them named with ${LONG_LABEL_VALUE_CHARS.toLocaleString('en-US')} characters`,
    errorAfterScrape: () => 'label_limit',
    handler: () => {
      const [first, ...rest] = HEALTHY_QUEUES as [QueueProfile, ...QueueProfile[]];
      const queues = [{ ...first, name: 'q'.repeat(LONG_LABEL_VALUE_CHARS) }, ...rest];
      return textHandler(() => syntheticPage(queues, HOSTILE_UPTIME_S));
    },
  },
];

/** Series (or queues) the attacks on queue identities and held series bring at once: just under the series limit. */
export const MANY = DEFAULT_SCRAPE_SERIES_LIMIT - 1;
/** Queues of the long-name page, and the length of their names. */
export const LONG_NAME_QUEUES = DEFAULT_SCRAPE_QUEUE_LIMIT;
export const LONG_NAME_CHARS = 790;
/** Scrapes of the churning target before its held series pass the held limit and stale ones are evicted. */
const SCRAPES_TO_FILL = Math.floor(DEFAULT_SCRAPE_HELD_SERIES_LIMIT / MANY);

/** 9,999 queues keyed by `controller` under one queue name: each is a queue of its own to the engine. */
export const CONTROLLERS_UNDER_ONE_NAME: HostileKind = {
  name: 'controllers under one queue name',
  serves: `${MANY.toLocaleString('en-US')} ${WORKQUEUE.depth} series, one name, ${MANY.toLocaleString('en-US')} controllers`,
  errorAfterScrape: () => 'queue_limit',
  handler: () =>
    textHandler(() => seriesPage(WORKQUEUE.depth, 'gauge', MANY, (i) => `controller="c${i.toString(36)}",name="q"`)),
};

/** 9,999 queues that only `workqueue_adds_total` tells of. */
export const ADDS_ONLY_QUEUES: HostileKind = {
  name: 'queues of adds alone',
  serves: `${MANY.toLocaleString('en-US')} ${WORKQUEUE.adds} series, one queue each, no depth`,
  errorAfterScrape: () => 'queue_limit',
  handler: () => textHandler(() => seriesPage(WORKQUEUE.adds, 'counter', MANY, (i) => `name="q${i.toString(36)}"`)),
};

/** A target bringing `count` new series at every scrape (a label holding a request path). */
export function churningHandler(count: number): http.RequestListener {
  let scrape = 0;
  return textHandler(() => {
    const round = (scrape++).toString(36);
    return seriesPage(
      CLIENT_GO.restClientRequests,
      'counter',
      count,
      (i) => `code="200",host="api",method="GET",path="/r${round}/${i.toString(36)}"`,
    );
  });
}

/** 9,999 new series at every scrape: within every page limit, churning the history. */
export const NEW_SERIES_EVERY_SCRAPE: HostileKind = {
  name: 'new series every scrape',
  serves: `${MANY.toLocaleString('en-US')} ${CLIENT_GO.restClientRequests} series with a label new at every scrape`,
  errorAfterScrape: () => null,
  warningAfterScrape: (scrape) => (scrape >= SCRAPES_TO_FILL ? 'held_series_limit' : null),
  handler: () => churningHandler(MANY),
};

/** 250 work queues named with 790 characters: about 7 MiB, inside every default limit. */
export const LONG_QUEUE_NAMES: HostileKind = {
  name: 'queues with long names',
  serves: `${LONG_NAME_QUEUES} queues (the work-queue families) named with ${LONG_NAME_CHARS} characters`,
  errorAfterScrape: () => null,
  handler: () => {
    const queues = profiles(1, LONG_NAME_QUEUES).map((q, i) => ({
      ...q,
      name: `${i.toString(36)}-${'n'.repeat(LONG_NAME_CHARS - 1 - i.toString(36).length)}`,
    }));
    let scrape = 0;
    return textHandler(() => workQueueFamilies(syntheticPage(queues, HOSTILE_UPTIME_S + 15 * scrape++)));
  },
};

/** The kinds that attack memory over time and through queue identities. */
export const MEMORY_KINDS: readonly HostileKind[] = [
  CONTROLLERS_UNDER_ONE_NAME,
  ADDS_ONLY_QUEUES,
  NEW_SERIES_EVERY_SCRAPE,
  LONG_QUEUE_NAMES,
];

export const HOSTILE_KINDS: readonly HostileKind[] = [...CLASSIC_KINDS, ...MEMORY_KINDS];

if (LONG_LABEL_VALUE_CHARS <= DEFAULT_SCRAPE_LABEL_VALUE_LIMIT) {
  throw new Error('the long label value must pass the default label value limit');
}
if (CARDINALITY_BOMB_SERIES <= DEFAULT_SCRAPE_SERIES_LIMIT) {
  throw new Error('the cardinality bomb must pass the default series limit');
}

let bombPage: Buffer | undefined;

/**
 * The cardinality bomb's page: `CARDINALITY_BOMB_SERIES` distinct series of `workqueue_depth` with short names
 * (base 36), so that the page stays under `DEFAULT_SCRAPE_MAX_BYTES` and only the series limit refuses it. Made
 * once per process.
 */
export function cardinalityBombPage(): Buffer {
  if (bombPage === undefined) {
    const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
    for (let i = 0; i < CARDINALITY_BOMB_SERIES; i++) lines.push(`${WORKQUEUE.depth}{name="${i.toString(36)}"} 1`);
    bombPage = Buffer.from(`${lines.join('\n')}\n`);
    if (bombPage.length >= DEFAULT_SCRAPE_MAX_BYTES) {
      throw new Error(`the cardinality bomb (${bombPage.length} bytes) must stay under the default byte limit`);
    }
  }
  return bombPage;
}

/** A page of `count` series of one family, the labels of series `i` given by `labels(i)`. */
function seriesPage(family: string, type: string, count: number, labels: (i: number) => string): string {
  const lines = [`# TYPE ${family} ${type}`];
  for (let i = 0; i < count; i++) lines.push(`${family}{${labels(i)}} ${i}`);
  return `${lines.join('\n')}\n`;
}

/** Only the work-queue families of a synthetic manager's page (what `workqueue_*` a client-go process exposes). */
function workQueueFamilies(page: string): string {
  let keep = false;
  return page
    .split('\n')
    .filter((line) => {
      const family = /^# (?:HELP|TYPE) (\S+)/.exec(line)?.[1];
      if (family !== undefined) keep = family.startsWith('workqueue_');
      return keep || line === '';
    })
    .join('\n');
}

/** Serves `page()` as the Prometheus text format. */
function textHandler(page: () => string): http.RequestListener {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': PROMETHEUS_CONTENT_TYPE });
    res.end(page());
  };
}

/**
 * The page with each sample line (`series value`) replaced by the lines `replace` returns; `i` counts the sample
 * lines. Comment and blank lines are kept.
 */
function mapSampleLines(
  page: string,
  replace: (series: string, value: string, i: number) => readonly string[],
): string {
  let i = 0;
  return page
    .split('\n')
    .flatMap((line) => {
      if (line === '' || line.startsWith('#')) return [line];
      const space = line.lastIndexOf(' ');
      return replace(line.slice(0, space), line.slice(space + 1), i++);
    })
    .join('\n');
}
