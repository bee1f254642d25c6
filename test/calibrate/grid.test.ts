/** The calibration grid file: its fields, and each malformed entry named. */
import { describe, expect, it } from 'vitest';
import { GridError, parseCalibrationGrid } from '../../src/calibrate/grid.js';

const parse = (cases: unknown[]) => parseCalibrationGrid(JSON.stringify({ cases }), 'g.json');

describe('calibration grid', () => {
  it('reads the scenario and its parameters, and sets aside the note and what a near miss forbids', () => {
    expect(
      parse([
        {
          scenario: 'transient-errors',
          seed: 8005,
          transientShare: 0.035,
          flavor: 'controller-runtime',
          note: 'why',
          forbids: ['WorkqueuePersistentFailures'],
        },
      ]),
    ).toEqual([{ scenario: 'transient-errors', seed: 8005, transientShare: 0.035, flavor: 'controller-runtime' }]);
  });

  it('names the entry and the field that is wrong', () => {
    expect(() => parse([{ scenario: 'healthy' }, { scenario: 'healthy', forbids: ['NoSuchRule'] }])).toThrow(
      /^g\.json: case 1: "forbids" must be a list of rule ids \(WorkqueueStuckWorker, .*WorkqueueBacklog/,
    );
    expect(() => parse([{ scenario: 'healthy', forbids: 'WorkqueueBacklog' }])).toThrow(/case 0: "forbids" must be/);
    expect(() => parse([{ scenario: 'healthy', transientShare: '3%' }])).toThrow(
      'g.json: case 0: "transientShare" must be a number',
    );
    expect(() => parse([{ scenario: 'healthy', colour: 'red' }])).toThrow(GridError);
    expect(() => parse([{ scenario: 'healthy', colour: 'red' }])).toThrow('g.json: case 0: unknown field "colour"');
  });
});
