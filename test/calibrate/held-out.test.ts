/**
 * The committed held-out grid (`calibration/held-out.json`): seeds, worker counts 1 to 16, key counts,
 * durations 20 to 60 minutes and both flavors, not used while choosing the thresholds.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseCalibrationGrid } from '../../src/calibrate/grid.js';
import { describeCase, runCase } from '../../src/calibrate/run.js';

const cases = parseCalibrationGrid(readFileSync('calibration/held-out.json', 'utf8'), 'calibration/held-out.json');

describe('calibration on the held-out grid', () => {
  it('covers the grid the README describes', () => {
    const workers = cases.map((c) => c.workers ?? 0);
    const minutes = cases.map((c) => (c.durationMs ?? 0) / 60_000);
    expect(Math.min(...workers)).toBe(1);
    expect(Math.max(...workers)).toBe(16);
    expect(Math.min(...minutes)).toBe(20);
    expect(Math.max(...minutes)).toBe(60);
    expect(new Set(cases.map((c) => c.flavor))).toEqual(new Set(['controller-runtime', 'component-base']));
  });

  it.each(cases.map((c) => [describeCase(c), c] as const))('%s', { timeout: 240_000 }, async (_name, c) => {
    for (const v of await runCase(c)) {
      expect({ queue: v.name, missed: v.missed, unexpected: v.unexpected, problems: v.problems }).toEqual({
        queue: v.name,
        missed: [],
        unexpected: [],
        problems: [],
      });
    }
  });
});
