/**
 * `npm run calibrate:held-out-grid -- --draw N --first-seed S --grid-version V > calibration/held-out.json`: draws a held-out
 * calibration grid. Every scenario gets two cases with fresh seeds (S on, used by nothing else) and parameters
 * drawn by a generator seeded with N: the first case of each scenario runs controller-runtime's metrics (its
 * priority queue or, one time in three, the classic queue), the second component-base's; workers, objects
 * (half to one and a half times the scenario's default), background noise (off one time in seven) and duration
 * (30, 45 or 60 minutes) are drawn. A case whose truth owes a finding runs at least five minutes past the latest
 * time the finding is due, and a case that owes persistent failures at least 45 minutes, so that every planted
 * problem the metrics can show is required at some judged step.
 *
 * The draw is the grid: it is written once, committed, run once (`calibrate --grid … --every-step -o json`)
 * and that run is committed beside it with the commit it ran on. Nothing here looks at a rule.
 *
 * `--scenario A,B` draws only those scenarios' cases (the same rules, a generator of their own) and prints them
 * as a JSON list: cases for a scenario added after the grid was drawn, appended to it and run once themselves.
 */
import { owedBy } from '../src/calibrate/owed.js';
import type { CalibrationCase } from '../src/calibrate/run.js';
import { getScenario, SCENARIO_NAMES } from '../src/simulate/index.js';
import { Random } from '../src/simulate/random.js';
import { scriptOptions, usageError } from './command-line.js';

const MINUTE = 60_000;
const DURATIONS_MS = [30, 45, 60].map((m) => m * MINUTE);
/** Persistent failures read 15-minute windows held for 15 minutes: 45 minutes leave room for both. */
const PERSISTENT_FAILURES_MIN_MS = 45 * MINUTE;
const WORKERS_RUNTIME = [1, 2, 2, 3, 4, 8];
const WORKERS_COMPONENT_BASE = [1, 2, 3, 4, 6, 16];
const KEY_SCALES = [0.5, 0.75, 1, 1.25, 1.5];

const NAME = 'calibrate:held-out-grid';
const USAGE = 'npm run calibrate:held-out-grid -- --draw N --first-seed S --grid-version V [--scenario A,B]';
const values = scriptOptions(NAME, USAGE, {
  draw: { type: 'string', default: '1' },
  'first-seed': { type: 'string', default: '10001' },
  'grid-version': { type: 'string', default: '5' },
  scenario: { type: 'string' },
});
for (const option of ['draw', 'first-seed', 'grid-version'] as const)
  if (!Number.isSafeInteger(Number(values[option])) || Number(values[option]) < 1)
    usageError(NAME, USAGE, `--${option} must be a positive integer, got ${values[option]}`);
/** `--scenario A,B`: only these, drawn the same way (cases for scenarios added after a grid was drawn). */
const only = values.scenario?.split(',').map((name) => name.trim());
for (const name of only ?? []) getScenario(name);
const draw = Number(values.draw);
const firstSeed = Number(values['first-seed']);
const rng = new Random(draw, 'held-out-grid');
const pick = <T>(list: readonly T[]): T => list[rng.int(list.length)]!;

function durationFor(c: CalibrationCase): number {
  const owed = owedBy(c);
  let floor = owed.shortestRunMs;
  if (owed.rules.includes('WorkqueuePersistentFailures')) floor = Math.max(floor, PERSISTENT_FAILURES_MIN_MS);
  const drawn = c.durationMs ?? 0;
  if (drawn >= floor) return drawn;
  return DURATIONS_MS.find((d) => d >= floor) ?? Math.ceil(floor / (15 * MINUTE)) * 15 * MINUTE;
}

const cases: CalibrationCase[] = [];
let seed = firstSeed;
for (const scenario of only ?? SCENARIO_NAMES) {
  const defaults = getScenario(scenario).defaults;
  for (const flavor of ['controller-runtime', 'component-base'] as const) {
    const runtime = flavor === 'controller-runtime';
    const drawn: CalibrationCase = {
      scenario,
      seed: seed++,
      flavor,
      ...(runtime && rng.chance(1 / 3) ? { queue: 'classic' as const } : {}),
      workers: pick(runtime ? WORKERS_RUNTIME : WORKERS_COMPONENT_BASE),
      keys: Math.max(1, Math.round(defaults.keys * pick(KEY_SCALES))),
      durationMs: pick(DURATIONS_MS),
      ...(rng.chance(1 / 7) ? { background: 'off' as const } : {}),
    };
    cases.push({ ...drawn, durationMs: durationFor(drawn) });
  }
}

if (only !== undefined) {
  // Cases to append to a drawn grid: written as they are, for the grid's note to record the draw.
  process.stdout.write(`${JSON.stringify(cases, null, 1)}\n`);
  process.exit(0);
}
const note =
  `Held-out calibration grid, version ${values['grid-version']}: seeds ${firstSeed}–${seed - 1}, drawn once by ` +
  `\`npm run calibrate:held-out-grid -- --draw ${draw} --first-seed ${firstSeed} --grid-version ${values['grid-version']}\` after the threshold work on ` +
  'boundary cases and mutations, and never used while choosing thresholds. Two cases per scenario, one per ' +
  'metrics flavor, with drawn workers, objects, queue, background and duration. Its one run, ' +
  '`workqueue-doctor calibrate --grid calibration/held-out.json --every-step -o json`, is ' +
  'calibration/held-out-run.json, with the commit it ran on in calibration/held-out-run.commit.';
process.stdout.write(`${JSON.stringify({ note, cases }, null, 1)}\n`);
