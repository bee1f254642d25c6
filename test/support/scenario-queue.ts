/** A scenario run on virtual time, its recording diagnosed at its end, as the one queue it holds. */
import { expect } from 'vitest';
import type { QueueReport, Report } from '../../src/diagnosis/report.js';
import { diagnoseSource } from '../../src/service/diagnose-source.js';
import { runVirtual, type SimulationParams } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';

/** `recording` (OpenMetrics text) diagnosed at its end. */
export async function diagnoseRecordingText(recording: string, file: string): Promise<Report> {
  const source = recordingSourceFromText(recording, file);
  try {
    return await diagnoseSource(source, { runbookBaseUrl: 'https://runbooks.invalid' });
  } finally {
    await source.close();
  }
}

/** The only queue of `report` (the test fails when there is not exactly one). */
export function onlyQueue(report: Report): QueueReport {
  expect(report.queues).toHaveLength(1);
  return report.queues[0] as QueueReport;
}

/**
 * `scenario` run with `params`, its recording (rewritten by `rewrite` when given) diagnosed at its end: its one
 * queue.
 */
export async function scenarioQueue(
  scenario: string,
  params: Partial<SimulationParams>,
  rewrite: (recording: string) => string = (recording) => recording,
): Promise<QueueReport> {
  const run = await runVirtual(scenario, params);
  return onlyQueue(await diagnoseRecordingText(rewrite(run.recording.text()), `${scenario}.om`));
}

/** Mean of the saturation scenario's sync time (log-normal, median 400 ms, sigma 0.5): 400 × e^(0.5²/2) ms. */
const SATURATION_MEAN_SYNC_SECONDS = 0.4 * Math.exp(0.125);

/** Events per second (three decimals) that offer the saturation scenario's `workers` `load` × what they complete. */
export function saturationRate(workers: number, load: number): number {
  return Math.round((workers / SATURATION_MEAN_SYNC_SECONDS) * load * 1000) / 1000;
}
