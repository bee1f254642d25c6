/**
 * The page's colours, one definition for the stylesheet and the chart script. Status colours carry white text at
 * 4.5:1 or more (WCAG AA); series colours and dashes keep every line of a chart apart, and each colour stands
 * at 3:1 or more against the white chart (WCAG's contrast for graphics).
 */
import type { QueueStatus } from '../../diagnosis/report.js';

export const STATUS_COLORS: Readonly<Record<QueueStatus, string>> = {
  critical: '#b42318',
  warning: '#c2410c',
  pending: '#6941c6',
  unknown: '#475467',
  standby: '#175cd3',
  ok: '#067647',
};

/** A chart's lines, in order: colour and dash pattern (canvas pixels; empty: solid) of each. */
export const SERIES_STYLES: readonly { readonly color: string; readonly dash: readonly number[] }[] = [
  { color: '#0072b2', dash: [] },
  { color: '#008060', dash: [8, 4] },
  { color: '#b8458c', dash: [3, 3] },
  { color: '#7a5c00', dash: [12, 4, 3, 4] },
  { color: '#3d4451', dash: [2, 5] },
];

/** Threshold lines: dashed, in the finding's severity colour. */
export const THRESHOLD_DASH: readonly number[] = [6, 4];
/** The time a condition began to hold: dashed, in the pending colour; the time it fired: solid, in its severity's. */
export const ONSET_DASH: readonly number[] = [4, 3];
