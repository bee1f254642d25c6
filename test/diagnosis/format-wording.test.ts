/** Human wording of numbers: units agree with the number, at most three significant digits. */
import { describe, expect, it } from 'vitest';
import { RULES } from '../../src/diagnosis/catalog.js';
import { formatNumberWithUnit, formatValue, round } from '../../src/diagnosis/format.js';
import type { SignalSnapshot } from '../../src/diagnosis/rule.js';

describe('format', () => {
  it('singular for exactly one, plural otherwise', () => {
    expect(formatNumberWithUnit(1, 'workers')).toBe('1 worker');
    expect(formatNumberWithUnit(4, 'workers')).toBe('4 workers');
    expect(formatNumberWithUnit(0.5, 'workers')).toBe('0.5 workers');
    expect(formatNumberWithUnit(1, 'items')).toBe('1 item');
    expect(formatNumberWithUnit(0, 'items')).toBe('0 items');
    expect(formatNumberWithUnit(1.0004, 'items')).toBe('1 item');
  });

  it('rounds to three significant digits', () => {
    expect(round(67.4321987654321)).toBe('67.4');
    expect(round(1234.5678)).toBe('1235');
    expect(round(0.012345678)).toBe('0.0123');
    expect(formatValue({ value: 3.3333333333333335, unit: '1/s' })).toBe('3.33/s');
  });
});

describe('backlog summary', () => {
  const backlog = RULES.find((r) => r.id === 'WorkqueueBacklog');
  const summary = (depthSlope: number): string => {
    const signals = {
      depth: { value: 1200, unit: 'items' },
      depthSlope: { value: depthSlope, unit: '1/s' },
      addRate: { value: 10, unit: '1/s' },
      completionRate: { value: 77.4, unit: '1/s' },
      timeToDrain: { value: null, unit: 's', missing: 'insufficient_data' },
      workDurationMean: { value: 0.5, unit: 's' },
      busyWorkers: { value: 4, unit: 'workers' },
      maxWorkers: { value: 4, unit: 'workers' },
    } as unknown as SignalSnapshot;
    const texts = backlog?.text as unknown as {
      summary: (c: { signals: SignalSnapshot; thresholds: Record<string, number> }) => string;
      cause: (c: { signals: SignalSnapshot; thresholds: Record<string, number> }) => string;
    };
    return `${texts.summary({ signals, thresholds: {} })} ${texts.cause({ signals, thresholds: {} })}`;
  };

  it('says falling for a negative slope and never "growing -"', () => {
    expect(summary(-67.4321)).toContain('falling 67.4/s');
    expect(summary(-67.4321)).not.toContain('growing -');
    expect(summary(3.21)).toContain('growing 3.21/s');
    expect(summary(0)).toContain('holding steady');
  });

  it('counts busy workers as "4 of 4 workers busy"', () => {
    expect(summary(1)).toContain('4 of 4 workers busy');
  });
});
