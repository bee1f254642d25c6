/**
 * `simulate --queue`: every scenario runs the queue it is asked for, and its truth file names the queue that
 * ran. Which queue ran is read from the recording itself: controller-runtime's priority queue labels its
 * depth by item priority (`priority="0"`, `priority="-100"` …), the classic queue's depth carries
 * `priority=""` (controller-runtime's provider) and nothing else.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { QUEUE_KINDS, type QueueKind, runVirtual, SCENARIO_NAMES } from '../../src/simulate/index.js';
import { runCli } from '../support/cli.js';
import { tempDir } from './helpers.js';

const work = tempDir('wqd-sim-queue-');
afterAll(() => work.remove());

/** The queue kind a recording's depth series show, or undefined without depth series. */
function queueKindRecorded(text: string): QueueKind | undefined {
  const priorities = new Set<string>();
  for (const match of text.matchAll(/^workqueue_depth\{[^}]*priority="([^"]*)"/gm)) priorities.add(match[1]!);
  if (priorities.size === 0) return undefined;
  return [...priorities].some((priority) => priority !== '') ? 'priority' : 'classic';
}

describe('every scenario runs the queue it is asked for', () => {
  it.each(SCENARIO_NAMES.flatMap((scenario) => QUEUE_KINDS.map((queue) => [scenario, queue] as const)))(
    '%s on the %s queue',
    async (scenario, queue) => {
      const run = await runVirtual(scenario, { queue, durationMs: 60_000, background: 'off' });
      expect(run.truth.queue).toBe(queue);
      const recorded = queueKindRecorded(run.recording.text());
      // A standby and a process without work-queue metrics record no depth to tell by.
      if (recorded !== undefined) expect(recorded).toBe(queue);
    },
  );
});

describe('simulate --queue', () => {
  it.each(QUEUE_KINDS)('hot-loop-no-backoff --queue %s: runs it and the truth file names it', async (queue) => {
    const out = join(work.path, `no-backoff-${queue}.om`);
    const { code } = await runCli(
      'simulate',
      '--scenario',
      'hot-loop-no-backoff',
      '--duration',
      '1m',
      '--queue',
      queue,
      '--record',
      out,
    );
    expect(code).toBe(EXIT.ok);
    expect(queueKindRecorded(readFileSync(out, 'utf8'))).toBe(queue);
    expect(JSON.parse(readFileSync(`${out}.truth.json`, 'utf8')).queue).toBe(queue);
  });

  it('without --queue, a scenario runs its own default queue and the truth file names it', async () => {
    const out = join(work.path, 'no-backoff-default.om');
    const { code } = await runCli('simulate', '--scenario', 'hot-loop-no-backoff', '--duration', '1m', '--record', out);
    expect(code).toBe(EXIT.ok);
    expect(queueKindRecorded(readFileSync(out, 'utf8'))).toBe('classic');
    expect(JSON.parse(readFileSync(`${out}.truth.json`, 'utf8')).queue).toBe('classic');
  });

  it('--queue priority with the component-base flavor is a usage error', async () => {
    const { code, stderr } = await runCli(
      'simulate',
      '--scenario',
      'healthy',
      '--flavor',
      'component-base',
      '--queue',
      'priority',
      '--record',
      join(work.path, 'x.om'),
    );
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(/--queue priority needs --flavor controller-runtime/);
  });
});
