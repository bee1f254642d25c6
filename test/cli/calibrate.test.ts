/** `workqueue-doctor calibrate`: the confusion matrix and scores, the JSON form, exit codes and grid errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { type CliResult, runCli } from '../support/cli.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-calibrate-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function cli(...args: string[]): Promise<CliResult> {
  return runCli('calibrate', ...args);
}

describe('calibrate', () => {
  it('prints the confusion matrix with precision and recall, and exits 0 when every queue matches', {
    timeout: 120_000,
  }, async () => {
    const { code, stdout } = await cli('--scenario', 'healthy', 'stuck-worker', '--seeds', '2');
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(
      /^scenario\/queue\s+Stuck\s+Backlog\s+HotLoop\s+Saturated\s+SlowWork\s+Failures\s+NotObs\s+pass$/m,
    );
    expect(stdout).toMatch(/^stuck-worker\/backup\s+2\/2\*\s+0\/2\s+0\/2\s+0\/2\s+2\/2~/m);
    expect(stdout).toMatch(/^WorkqueueStuckWorker\s+1\.000\s+1\.000\s+2\s+0\s+0$/m);
    expect(stdout).toContain(
      '4 runs, 4 queue verdicts (2 could miss an expected diagnosis, 4 could raise a false alarm), 0 failing',
    );
  });

  it('runs a grid file and reports per-case verdicts as JSON', { timeout: 120_000 }, async () => {
    const grid = join(work, 'grid.json');
    writeFileSync(grid, JSON.stringify([{ scenario: 'backlog', seed: 9, workers: 2, durationMs: 1_200_000 }]));
    const { code, stdout } = await cli('--grid', grid, '--output', 'json');
    const result = JSON.parse(stdout) as {
      cases: number;
      failures: number;
      verdicts: Array<{ case: string; found: string[] }>;
    };
    expect(code).toBe(EXIT.ok);
    expect(result.cases).toBe(1);
    expect(result.failures).toBe(0);
    expect(result.verdicts[0]?.case).toBe('backlog seed=9 workers=2 duration=20m');
    expect(result.verdicts[0]?.found).toContain('WorkqueueBacklog');
  });

  it('names the bad entry of a grid file and exits 2', async () => {
    const grid = join(work, 'bad.json');
    writeFileSync(grid, JSON.stringify({ cases: [{ scenario: 'healthy' }, { scenario: 'healthy', workers: 'many' }] }));
    const { code, stderr } = await cli('--grid', grid);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('case 1: "workers" must be a number');
  });

  it('rejects an unknown scenario and a bad seed count', async () => {
    expect((await cli('--scenario', 'nope')).stderr).toContain('unknown scenario "nope"');
    expect((await cli('--seeds', '0')).code).toBe(EXIT.usage);
  });
});
