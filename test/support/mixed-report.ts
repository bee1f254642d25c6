/**
 * The `mixed` scenario (every kind of finding in one process) recorded, and the report a diagnosis service gives
 * at the recording's end: the page tests' fleet.
 */
import type { RuleOverrides } from '../../src/diagnosis/catalog.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { createDiagnosisService } from '../../src/service/diagnosis-service.js';
import { runVirtual } from '../../src/simulate/index.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';
import type { MetricsSource } from '../../src/sources/source.js';

/** The recording's source (the caller closes it) and the service's report at its end, with `overrides`. */
export async function mixedReportAtEnd(
  overrides: RuleOverrides = {},
): Promise<{ source: MetricsSource; report: Report }> {
  const run = await runVirtual('mixed', {}, { job: 'sim', instance: 'mixed:8080' });
  const source = recordingSourceFromText(run.recording.text(), 'mixed.om');
  const end = source.dataRange()?.endMs ?? 0;
  const service = createDiagnosisService({
    source,
    evaluationIntervalMs: 60_000,
    runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL,
    overrides,
    now: () => end,
  });
  const outcome = await service.evaluate();
  if (outcome.report === undefined) {
    await source.close();
    throw new Error(`evaluation failed: ${outcome.error}`);
  }
  return { source, report: outcome.report };
}
