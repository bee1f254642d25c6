/**
 * The service's timed evaluations run at multiples of the evaluation interval (the first one at once), so that
 * consecutive evaluations reuse the steps of the rules' grid instead of evaluating off it every time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WORKQUEUE } from '../../src/metrics/names.js';
import { createDiagnosisService, type DiagnosisService } from '../../src/service/diagnosis-service.js';
import { recordingSourceFromText } from '../../src/sources/recording-source.js';

const INTERVAL_MS = 200;

function oneQueueRecording(endSec: number): string {
  const lines = [`# TYPE ${WORKQUEUE.depth} gauge`];
  for (let t = endSec - 600; t <= endSec; t += 15) lines.push(`${WORKQUEUE.depth}{job="j",name="q"} 1 ${t}`);
  lines.push(`# TYPE ${WORKQUEUE.adds.replace(/_total$/, '')} counter`);
  for (let t = endSec - 600; t <= endSec; t += 15) lines.push(`${WORKQUEUE.adds}{job="j",name="q"} ${t} ${t}`);
  lines.push('# EOF', '');
  return lines.join('\n');
}

let service: DiagnosisService | undefined;
afterEach(async () => {
  await service?.stop();
  service = undefined;
});

describe('evaluation schedule', () => {
  it('evaluates at once, then at multiples of the interval', async () => {
    const source = recordingSourceFromText(oneQueueRecording(Math.floor(Date.now() / 1000)), 'one.om');
    const times: number[] = [];
    const enough = new Promise<void>((resolve) => {
      service = createDiagnosisService({
        source,
        evaluationIntervalMs: INTERVAL_MS,
        runbookBaseUrl: 'https://example.invalid',
        onEvaluation: (outcome) => {
          if (outcome.report !== undefined) times.push(Date.parse(outcome.report.evaluatedAt));
          if (times.length === 4) resolve();
        },
      });
      service.start();
    });
    await enough;
    expect(times.slice(1).every((t) => t % INTERVAL_MS === 0)).toBe(true);
    // Consecutive timed evaluations are on consecutive multiples, or later ones when one ran long.
    for (let i = 2; i < times.length; i++) expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThan(0);
  });
});
