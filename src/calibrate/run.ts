/**
 * Runs scenarios on virtual time, diagnoses each recording at its end, and scores the findings against
 * the scenario's ground truth. The recording goes through the same reader and engine as
 * `diagnose --recording`.
 */
import type { RuleOverrides } from '../diagnosis/catalog.js';
import { diagnose } from '../diagnosis/engine.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../generate/defaults.js';
import { runVirtual, type SimulationParams } from '../simulate/index.js';
import { recordingSourceFromText } from '../sources/recording-source.js';
import { compareWithTruth, type QueueVerdict } from './compare.js';

/** One run: a scenario with parameters (defaults where absent). */
export type CalibrationCase = { readonly scenario: string } & Partial<SimulationParams>;

export async function runCase(c: CalibrationCase, overrides: RuleOverrides = {}): Promise<QueueVerdict[]> {
  const { scenario, ...params } = c;
  const run = await runVirtual(scenario, params);
  const file = `${scenario}-${params.seed ?? 'default'}.om`;
  const source = recordingSourceFromText(run.recording.text(), file);
  try {
    const range = source.dataRange();
    if (range === undefined) throw new Error(`scenario ${scenario} produced an empty recording`);
    const report = await diagnose(source.backend, {
      atMs: range.endMs,
      runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
      overrides,
      targets: source.targets(),
    });
    return compareWithTruth(report, run.truth);
  } finally {
    await source.close();
  }
}

export function describeCase(c: CalibrationCase): string {
  const parts = [c.scenario];
  if (c.seed !== undefined) parts.push(`seed=${c.seed}`);
  if (c.workers !== undefined) parts.push(`workers=${c.workers}`);
  if (c.keys !== undefined) parts.push(`keys=${c.keys}`);
  if (c.rate !== undefined) parts.push(`rate=${c.rate}`);
  if (c.durationMs !== undefined) parts.push(`duration=${c.durationMs / 60_000}m`);
  if (c.flavor !== undefined) parts.push(`flavor=${c.flavor}`);
  return parts.join(' ');
}
