/**
 * The flags of the scrape limits, shared by every command that scrapes (`serve`, `diagnose --target`): each
 * is the flag of a `scrape.*` setting of the configuration table (config/service-settings.ts), so it is read,
 * checked and given precedence over the file there. Defaults are the scrape layer's (scrape/scrape-settings.ts).
 */
import type { Command } from 'commander';
import {
  DEFAULT_SCRAPE_CONCURRENCY,
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
    flag: '--scrape-queue-limit <n>',
    help: `most work queues per target's page (default ${DEFAULT_SCRAPE_QUEUE_LIMIT})`,
    env: 'WQD_SCRAPE_QUEUE_LIMIT',
  },
];

/** Adds the scrape limit flags; `withEnv` names each one's `WQD_` variable in its help (`serve` reads them). */
export function addScrapeLimitOptions(command: Command, prefix: string, withEnv: boolean): Command {
  for (const limit of LIMITS) command.option(limit.flag, `${prefix}${limit.help}${withEnv ? ` [${limit.env}]` : ''}`);
  return command;
}
