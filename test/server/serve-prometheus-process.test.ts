/**
 * `serve --prometheus-url` as a process against a real Prometheus (2.42), through several evaluations: stdout
 * holds nothing but the JSON log and stderr nothing at all. Every evaluation sends its queries together, each
 * watching the evaluation's one abort signal; they must not add a listener each to it, which made Node print
 * `MaxListenersExceededWarning` into the log.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { DOCTOR } from '../../src/metrics/names.js';
import { runVirtual } from '../../src/simulate/index.js';
import { spawnCli } from '../support/cli-process.js';
import { freePort } from '../support/daemon.js';
import { importRecording, type PrometheusHandle, removeTempDirs, startPrometheus } from '../support/prometheus.js';

const dir = mkdtempSync(join(tmpdir(), 'wqd-serve-prom-process-'));
let prom: PrometheusHandle | undefined;
/** Evaluations to wait for: more than one, so that a listener left behind by one would add up. */
const EVALUATIONS = 4;

beforeAll(async () => {
  // Samples up to a few seconds ago, so that the service's evaluation at "now" sees them.
  const run = await runVirtual('mixed', {}, { startMs: Date.now() - 30 * 60_000, job: 'sim', instance: 'mixed:8080' });
  const file = join(dir, 'mixed.om');
  writeFileSync(file, run.recording.text());
  prom = await startPrometheus({ storagePath: await importRecording(file) });
}, 120_000);

afterAll(async () => {
  await prom?.stop();
  removeTempDirs();
  rmSync(dir, { recursive: true, force: true });
});

/** Evaluations the service has finished, from its own /metrics. */
async function evaluations(origin: string): Promise<number> {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const match = new RegExp(`^${DOCTOR.evaluationDuration}_count(?:\\{\\})? (\\d+)$`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

describe('serve --prometheus-url, as a process', () => {
  it('logs only JSON through several evaluations: no Node warning', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const cli = spawnCli([
      'serve',
      '--prometheus-url',
      prom?.url as string,
      '--listen',
      `127.0.0.1:${port}`,
      '--evaluation-interval',
      '1s',
    ]);
    try {
      await cli.output('stdout', /"msg":"listening"/);
      while ((await evaluations(origin)) < EVALUATIONS) await new Promise((resolve) => setTimeout(resolve, 200));
      cli.child.kill('SIGTERM');
      expect(await cli.exited).toBe(EXIT.ok);
      expect(cli.stderr()).toBe('');
      expect(cli.stdout()).not.toContain('MaxListenersExceededWarning');
      const lines = cli
        .stdout()
        .split('\n')
        .filter((line) => line !== '');
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
      expect(lines.some((line) => line.includes('"msg":"first evaluation finished; ready"'))).toBe(true);
    } finally {
      await cli.stop();
    }
  });
});
