/**
 * How a target's error or warning names the setting that raises the limit it met: the configuration key and the
 * environment variable, as the settings table (config/service-settings.ts) declares them (a test holds the two
 * together).
 */
import type { ScrapeSettings } from '../scrape/scrape-settings.js';

type LimitName =
  | 'seriesLimit'
  | 'labelValueLimit'
  | 'labelLimit'
  | 'labelSetLengthLimit'
  | 'queueLimit'
  | 'heldSeriesLimit'
  | 'totalSeriesLimit'
  | 'totalQueueLimit';

/** Each limit's key and variable, e.g. `scrape.queueLimit or WQD_SCRAPE_QUEUE_LIMIT`. */
export const SCRAPE_LIMIT_SETTINGS: Readonly<Record<LimitName & keyof ScrapeSettings, string>> = {
  seriesLimit: 'scrape.seriesLimit or WQD_SCRAPE_SERIES_LIMIT',
  labelValueLimit: 'scrape.labelValueLimit or WQD_SCRAPE_LABEL_VALUE_LIMIT',
  labelLimit: 'scrape.labelLimit or WQD_SCRAPE_LABEL_LIMIT',
  labelSetLengthLimit: 'scrape.labelSetLengthLimit or WQD_SCRAPE_LABEL_SET_LENGTH_LIMIT',
  queueLimit: 'scrape.queueLimit or WQD_SCRAPE_QUEUE_LIMIT',
  heldSeriesLimit: 'scrape.heldSeriesLimit or WQD_SCRAPE_HELD_SERIES_LIMIT',
  totalSeriesLimit: 'scrape.totalSeriesLimit or WQD_SCRAPE_TOTAL_SERIES_LIMIT',
  totalQueueLimit: 'scrape.totalQueueLimit or WQD_SCRAPE_TOTAL_QUEUE_LIMIT',
};
