/** Where a finding's runbook is: one file per rule id under a base URL. */

/** Where the generated runbooks are published; `--runbook-base-url` (serve, diagnose, generate) replaces it. */
export const DEFAULT_RUNBOOK_BASE_URL =
  'https://github.com/workqueue-doctor/workqueue-doctor/blob/main/alerts/runbooks';

/** The runbook of rule `id` under `base` (a trailing slash on `base` or not). */
export function runbookUrl(base: string, id: string): string {
  return `${base.replace(/\/+$/, '')}/${id}.md`;
}
