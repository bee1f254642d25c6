/**
 * How much a state file may hold for this service (`--state-dir`): the history its scrapes could hold, sized by
 * store/state-file-limits.ts from the scrape settings and the number of targets.
 *
 * Contract: `stateLimitsFor(scrape, source)` counts the configured targets for static targets and
 * `DISCOVERED_TARGETS_RESTORED` for Kubernetes discovery, whose targets are not known yet when the file is read.
 */
import type { SourceConfig } from '../config/service-config.js';
import type { ScrapeSettings } from '../scrape/scrape-settings.js';
import { type StateFileLimits, stateFileLimits } from '../store/state-file-limits.js';

/**
 * With discovery, the file may hold the history of this many targets at the series limit each: the standalone
 * Deployment's 384 MiB hold about ten at the default limit of 10,000 series (30 MiB each) beside the service's
 * own memory.
 */
export const DISCOVERED_TARGETS_RESTORED = 10;

export function stateLimitsFor(scrape: ScrapeSettings, source: SourceConfig): StateFileLimits {
  return stateFileLimits(scrape, source.kind === 'targets' ? source.urls.length : DISCOVERED_TARGETS_RESTORED);
}
