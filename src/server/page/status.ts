/**
 * How the page shows a queue's status (the report's `status`): a badge with an icon and the status in words, in a
 * colour of its own (the stylesheet's `--<status>`), so that no status is told by colour alone; the legend that
 * says what each means; and the group the status filter selects it by (`firing` for critical and warning).
 */
import type { QueueStatus } from '../../diagnosis/report-schema.js';
import { escapeHtml } from './html.js';

/** What the status filter offers, in its order. */
export const STATUS_GROUPS = ['firing', 'pending', 'unknown', 'ok', 'standby'] as const;
export type StatusGroup = (typeof STATUS_GROUPS)[number];

type StatusLook = {
  /** Shown beside the word; decorative (hidden from screen readers, who read the word). */
  readonly icon: string;
  readonly meaning: string;
  readonly group: StatusGroup;
};

export const STATUS_LOOK: Readonly<Record<QueueStatus, StatusLook>> = {
  critical: { icon: '✖', meaning: 'a critical finding fires', group: 'firing' },
  warning: { icon: '▲', meaning: 'a warning finding fires', group: 'firing' },
  pending: { icon: '◔', meaning: 'a condition holds, not yet long enough to fire', group: 'pending' },
  unknown: { icon: '?', meaning: 'a rule could not be judged (the queue says why)', group: 'unknown' },
  standby: { icon: '◌', meaning: 'a replica that does not lead: no queues', group: 'standby' },
  ok: { icon: '✔', meaning: 'every rule judged, none holds', group: 'ok' },
};

/** A status badge: icon and word, `data-status` for scripts and tests. */
export function statusBadge(status: QueueStatus): string {
  return `<span class="badge ${status}" data-status="${status}"><span class="icon" aria-hidden="true">${STATUS_LOOK[status].icon}</span>${status}</span>`;
}

/** A badge for something that is not a queue's status (a target's health, a finding's severity). */
export function badge(kind: string, text: string = kind): string {
  return `<span class="badge ${escapeHtml(kind)}">${escapeHtml(text)}</span>`;
}

/** The statuses worst first, the report's order of queues (`compareQueues`). */
export const STATUS_ORDER: readonly QueueStatus[] = ['critical', 'warning', 'pending', 'unknown', 'standby', 'ok'];

/** Every status with its badge and meaning, worst first; then how the charts mark thresholds and onsets. */
export function renderLegend(): string {
  const items = STATUS_ORDER.map((s) => `<li>${statusBadge(s)} ${escapeHtml(STATUS_LOOK[s].meaning)}</li>`);
  return `<ul class="legend" aria-label="What the statuses mean">${items.join('')}
<li class="chart-key">Charts: <span class="key threshold" aria-hidden="true"></span> a threshold the rule compares (dashed),
<span class="key onset" aria-hidden="true"></span> when the condition began to hold,
<span class="key fired" aria-hidden="true"></span> when it fired or will; times in UTC</li></ul>`;
}
