/** Human formatting of signal values for summaries, text reports and alert descriptions. */
import type { SignalValue } from './units.js';

export function formatValue(value: SignalValue | undefined): string {
  if (value === undefined || value.value === null) {
    return value?.missing === 'metric_absent' ? 'n/a (metric absent)' : 'n/a (insufficient data)';
  }
  const prefix = value.bound === 'ge' ? '≥ ' : '';
  return prefix + formatNumberWithUnit(value.value, value.unit);
}

/** The number alone, without its unit ("3 of 4 workers"); missing values as `formatValue` writes them. */
export function formatNumber(value: SignalValue | undefined): string {
  if (value === undefined || value.value === null) return formatValue(value);
  return (value.bound === 'ge' ? '≥ ' : '') + round(value.value);
}

export function formatNumberWithUnit(n: number, unit: SignalValue['unit']): string {
  switch (unit) {
    case 's':
      return formatSeconds(n);
    case '1/s':
      return `${round(n)}/s`;
    case 'items':
      return counted(n, 'item');
    case 'workers':
      return counted(n, 'worker');
    case 'ratio':
      return `${round(n * 100)}%`;
  }
}

/** `1 worker`, `4 workers`, `0.5 workers`: the noun singular only for exactly one (as rounded). */
export function counted(n: number, noun: string): string {
  const text = round(n);
  return `${text} ${text === '1' ? noun : `${noun}s`}`;
}

export function formatSeconds(seconds: number): string {
  if (!Number.isFinite(seconds)) return String(seconds);
  const abs = Math.abs(seconds);
  if (abs < 1e-3) return `${round(seconds * 1e6)}µs`;
  if (abs < 1) return `${round(seconds * 1e3)}ms`;
  if (abs < 120) return `${round(seconds)}s`;
  if (abs < 7200) return `${round(seconds / 60)}m`;
  return `${round(seconds / 3600)}h`;
}

/** Three significant digits, no exponent for everyday magnitudes. */
export function round(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(n))));
  return Number(n.toFixed(Math.min(digits, 6))).toString();
}

/** The number of a signal value, or undefined when it is missing. */
export function numberOf(value: SignalValue | undefined): number | undefined {
  return value === undefined || value.value === null ? undefined : value.value;
}
