/**
 * Prometheus durations (`30s`, `5m`, `1h30m`, `1500ms`, `2d`, `1w`, `1y`) and times (RFC 3339 or unix
 * seconds), as they appear on the command line and in configuration.
 *
 * A duration is one or more `<integer><unit>` parts, units from largest to smallest, each at most
 * once: `y` (365 d), `w`, `d`, `h`, `m`, `s`, `ms`. `0` alone is zero, as in Prometheus.
 */

/** A malformed duration or time. The message says what was expected; callers turn it into a usage error. */
export class ParseError extends Error {
  override readonly name = 'ParseError';
}

const UNIT_MS = {
  y: 365 * 24 * 3_600_000,
  w: 7 * 24 * 3_600_000,
  d: 24 * 3_600_000,
  h: 3_600_000,
  m: 60_000,
  s: 1_000,
  ms: 1,
} as const;
type Unit = keyof typeof UNIT_MS;
const UNIT_ORDER: readonly Unit[] = ['y', 'w', 'd', 'h', 'm', 's', 'ms'];

const PART = /(\d+)(ms|y|w|d|h|m|s)/y;

/** Parses a Prometheus duration into milliseconds. Throws `ParseError` on anything else. */
export function parseDuration(text: string): number {
  const input = text.trim();
  if (input === '0') return 0;
  if (input === '') throw new ParseError('empty duration: expected a Prometheus duration such as 30s, 5m or 1h30m');
  let total = 0;
  let lastUnitIndex = -1;
  PART.lastIndex = 0;
  while (PART.lastIndex < input.length) {
    const at = PART.lastIndex;
    const match = PART.exec(input);
    if (match === null) {
      throw new ParseError(
        `invalid duration "${text}" at "${input.slice(at)}": expected a Prometheus duration such as 30s, 5m or 1h30m`,
      );
    }
    const unit = match[2] as Unit;
    const unitIndex = UNIT_ORDER.indexOf(unit);
    if (unitIndex <= lastUnitIndex) {
      throw new ParseError(`invalid duration "${text}": units must go from largest to smallest, each once (1h30m)`);
    }
    lastUnitIndex = unitIndex;
    total += Number(match[1]) * UNIT_MS[unit];
  }
  if (!Number.isSafeInteger(total)) throw new ParseError(`duration "${text}" is too large`);
  return total;
}

/** Milliseconds as Prometheus prints a duration: `30s`, `5m`, `1h30m`, `1s500ms`, `1w1d`, `0s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot format ${ms} ms as a duration`);
  let rest = Math.round(ms);
  if (rest === 0) return '0s';
  let out = '';
  for (const unit of UNIT_ORDER) {
    const size = UNIT_MS[unit];
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const UNIX_SECONDS = /^\d+(\.\d+)?$/;

/** Parses an RFC 3339 time (`2026-01-01T00:00:00Z`) or unix seconds (`1767225600`, `1767225600.5`) into epoch ms. */
export function parseTime(text: string): number {
  const input = text.trim();
  if (UNIX_SECONDS.test(input)) {
    const ms = Number(input) * 1000;
    if (Number.isFinite(ms)) return Math.round(ms);
  }
  const match = RFC3339.exec(input);
  if (match !== null) {
    const [, year, month, day, hour, minute, second] = match;
    const valid =
      Number(month) >= 1 &&
      Number(month) <= 12 &&
      Number(day) >= 1 &&
      Number(day) <= daysInMonth(Number(year), Number(month)) &&
      Number(hour) <= 23 &&
      Number(minute) <= 59 &&
      Number(second) <= 60;
    const ms = Date.parse(input.replace(' ', 'T'));
    if (valid && Number.isFinite(ms)) return ms;
  }
  throw new ParseError(`invalid time "${text}": expected RFC 3339 (2026-01-01T00:00:00Z) or unix seconds`);
}

/** Epoch ms as RFC 3339 in UTC, without fractional seconds when there are none. */
export function formatTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}
