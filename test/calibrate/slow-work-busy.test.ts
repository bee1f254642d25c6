/**
 * Blocking syncs in a busy controller: one sync of 12 to 18 s about every 80 seconds among 20 syncs a second. They
 * are 0.06% of the syncs, under the share's floor, and a 15-second scrape sees one still running past 10 s only now
 * and then; their rate (about 0.01 a second) is what shows them. The truth owes SlowWork (blocking syncs of 10 s and
 * more, recurring within two minutes) at every step from its deadline, on both queues and with component-base's
 * metrics.
 */
import { describe, it } from 'vitest';
import { EVERY_QUEUE, expectAllPass, judgeEveryStep, variantName } from './support.js';

const BUSY_BLOCKING = { rate: 20, blockingShare: 0.0006, blockingSeconds: 15, durationMs: 30 * 60_000 } as const;

describe('blocking syncs in a busy controller', () => {
  it.each(EVERY_QUEUE.map((variant) => [variantName(variant), variant] as const))(
    'are slow work at every step (%s)',
    { timeout: 300_000 },
    async (name, variant) => {
      for (const seed of [1, 2, 3]) {
        expectAllPass(
          await judgeEveryStep({ scenario: 'blocking-call', seed, ...BUSY_BLOCKING, ...variant }),
          `${name} seed ${seed}`,
        );
      }
    },
  );
});
