import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, formatTime, ParseError, parseDuration, parseTime } from '../../src/util/duration.js';

describe('parseDuration', () => {
  it('reads Prometheus durations', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('5m')).toBe(300_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1500ms')).toBe(1_500);
    expect(parseDuration('1d2h')).toBe(93_600_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    expect(parseDuration('1y')).toBe(365 * 86_400_000);
    expect(parseDuration('1m30s500ms')).toBe(90_500);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration(' 15s ')).toBe(15_000);
  });

  it.each(['', '5', '5x', 'm', '1.5h', '-5m', '30m1h', '5m5m', '1h 30m', '5M', 'ms'])('rejects %j', (text) => {
    expect(() => parseDuration(text)).toThrow(ParseError);
  });

  it('round-trips with formatDuration', () => {
    expect(formatDuration(5_400_000)).toBe('1h30m');
    expect(formatDuration(1_500)).toBe('1s500ms');
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(8 * 86_400_000)).toBe('1w1d');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 365 * 86_400_000 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });
});

describe('parseTime', () => {
  it('reads RFC 3339 and unix seconds', () => {
    expect(parseTime('2026-01-01T00:00:00Z')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTime('2026-01-01T01:00:00+01:00')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTime('2026-01-01T00:00:00.250Z')).toBe(Date.UTC(2026, 0, 1) + 250);
    expect(parseTime('1767225600')).toBe(Date.UTC(2026, 0, 1));
    expect(parseTime('1767225600.5')).toBe(Date.UTC(2026, 0, 1) + 500);
  });

  it.each([
    '',
    'yesterday',
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-01-01',
    '2026-01-01T00:00:00',
    '-5',
    '1e9',
  ])('rejects %j', (text) => {
    expect(() => parseTime(text)).toThrow(ParseError);
  });

  it('formats RFC 3339 in UTC', () => {
    expect(formatTime(Date.UTC(2026, 0, 1))).toBe('2026-01-01T00:00:00Z');
    expect(formatTime(Date.UTC(2026, 0, 1) + 250)).toBe('2026-01-01T00:00:00.250Z');
  });
});
