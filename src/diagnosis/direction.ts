/**
 * Direction words for a slope, one rule for every text: "growing 6.95/s" for a positive slope, "falling
 * 27.8/s" for a negative one, "holding steady" for one that rounds to zero where it is printed. The word always
 * agrees with the sign of the number printed beside it, and the number is the slope's magnitude.
 */
import { formatNumberWithUnit, numberOf, round } from './format.js';
import type { SignalValue } from './units.js';

export type Direction = 'growing' | 'falling' | 'steady' | 'unknown';

/** The direction of `slope` as printed (three significant digits): zero when it rounds to zero. */
export function directionOf(slope: SignalValue | undefined): Direction {
  const value = numberOf(slope);
  if (value === undefined) return 'unknown';
  if (round(value) === '0') return 'steady';
  return value > 0 ? 'growing' : 'falling';
}

/** "growing 6.95/s", "falling 27.8/s", "holding steady", or "trend unknown" without the slope. */
export function describeSlope(slope: SignalValue | undefined): string {
  const value = numberOf(slope);
  switch (directionOf(slope)) {
    case 'unknown':
      return 'trend unknown';
    case 'steady':
      return 'holding steady';
    case 'growing':
      return `growing ${formatNumberWithUnit(value as number, '1/s')}`;
    case 'falling':
      return `falling ${formatNumberWithUnit(-(value as number), '1/s')}`;
  }
}
