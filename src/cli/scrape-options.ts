/**
 * The flags of the scrape limits, shared by every command that scrapes (`serve`, `diagnose --target`): each
 * is the flag of a `scrape.*` setting of the configuration table (config/service-settings.ts), so it is read,
 * checked and given precedence over the file there. Defaults are the scrape layer's (scrape/scrape-settings.ts);
 * `serve` sizes those not given from its memory budget instead (service/memory-budget.ts).
 */
import type { Command } from 'commander';
import {
  DEFAULT_SCRAPE_CONCURRENCY,
  DEFAULT_SCRAPE_HELD_SERIES_LIMIT,
  DEFAULT_SCRAPE_LABEL_LIMIT,
  DEFAULT_SCRAPE_LABEL_VALUE_LIMIT,
  DEFAULT_SCRAPE_MAX_BYTES,
  DEFAULT_SCRAPE_QUEUE_LIMIT,
  DEFAULT_SCRAPE_SERIES_LIMIT,
} from '../scrape/scrape-settings.js';

const LIMITS: ReadonlyArray<{ flag: string; help: string; env: string }> = [
  {
    flag: '--scrape-max-bytes <bytes>',
    help: `largest accepted page, uncompressed (default ${DEFAULT_SCRAPE_MAX_BYTES})`,
    env: 'WQD_SCRAPE_MAX_BYTES',
  },
  {
    flag: '--scrape-concurrency <n>',
    help: `scrapes running at once (default ${DEFAULT_SCRAPE_CONCURRENCY})`,
    env: 'WQD_SCRAPE_CONCURRENCY',
  },
  {
    flag: '--scrape-series-limit <n>',
    help: `distinct work-queue, controller and REST client series per target's page (default ${DEFAULT_SCRAPE_SERIES_LIMIT})`,
    env: 'WQD_SCRAPE_SERIES_LIMIT',
  },
  {
    flag: '--scrape-label-value-limit <n>',
    help: `longest label value of those series, in characters (default ${DEFAULT_SCRAPE_LABEL_VALUE_LIMIT})`,
    env: 'WQD_SCRAPE_LABEL_VALUE_LIMIT',
  },
  {
    flag: '--scrape-label-limit <n>',
    help: `most labels on one of those series (default ${DEFAULT_SCRAPE_LABEL_LIMIT})`,
    env: 'WQD_SCRAPE_LABEL_LIMIT',
  },
  {
    flag: '--scrape-label-set-length-limit <n>',
    help: 'most characters of the label names and values of one of those series together (default none)',
    env: 'WQD_SCRAPE_LABEL_SET_LENGTH_LIMIT',
  },
  {
    flag: '--scrape-queue-limit <n>',
    help: `most work queues per target, on its page and held (default ${DEFAULT_SCRAPE_QUEUE_LIMIT})`,
    env: 'WQD_SCRAPE_QUEUE_LIMIT',
  },
  {
    flag: '--scrape-held-series-limit <n>',
    help: `most series one target holds over the retention, stale ones evicted first (default ${DEFAULT_SCRAPE_HELD_SERIES_LIMIT}: twice the series limit)`,
    env: 'WQD_SCRAPE_HELD_SERIES_LIMIT',
  },
  {
    flag: '--scrape-total-series-limit <n>',
    help: 'most series every target together holds (default none)',
    env: 'WQD_SCRAPE_TOTAL_SERIES_LIMIT',
  },
  {
    flag: '--scrape-total-queue-limit <n>',
    help: 'most work queues every target together holds (default none)',
    env: 'WQD_SCRAPE_TOTAL_QUEUE_LIMIT',
  },
];

/** Adds the scrape limit flags; `withEnv` names each one's `WQD_` variable in its help (`serve` reads them). */
export function addScrapeLimitOptions(command: Command, prefix: string, withEnv: boolean): Command {
  for (const limit of LIMITS) command.option(limit.flag, `${prefix}${limit.help}${withEnv ? ` [${limit.env}]` : ''}`);
  return command;
}
