/**
 * `workqueue-doctor simulate`: listing, virtual runs writing a recording and its truth, usage errors
 * with exit code 2, and the real-time server stopping cleanly on SIGINT.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { SCENARIO_NAMES } from '../../src/simulate/index.js';
import { type CliResult, runCli } from '../support/cli.js';
import { cliEntry } from '../support/cli-process.js';
import { tempDir } from './helpers.js';

const work = tempDir('wqd-sim-cli-');
afterAll(() => work.remove());
afterEach(() => {
  vi.restoreAllMocks();
});

function cli(...args: string[]): Promise<CliResult> {
  return runCli('simulate', ...args);
}

describe('simulate --list', () => {
  it('lists every scenario with the diagnoses it must produce', async () => {
    const { code, stdout } = await cli('--list');
    expect(code).toBe(EXIT.ok);
    const lines = stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual([...SCENARIO_NAMES]);
    expect(lines.find((line) => line.startsWith('backlog '))).toMatch(
      /WorkqueueBacklog \(allowed: WorkqueueSaturated\)/,
    );
    expect(lines.find((line) => line.startsWith('standby '))).toContain('none (standby)');
    expect(lines.find((line) => line.startsWith('healthy '))).toMatch(/^healthy\s+none\s+steady events/);
  });
});

describe('simulate --scenario --out', () => {
  it('writes the recording and FILE.truth.json', async () => {
    const out = join(work.path, 'stuck.om');
    const { code, stdout } = await cli(
      '--scenario',
      'stuck-worker',
      '--duration',
      '5m',
      '--seed',
      '3',
      '--workers',
      '2',
      '--scrape-interval',
      '30s',
      '--start',
      '1767225600',
      '--flavor',
      'component-base',
      '--instance',
      'backup-operator-0:8080',
      '--out',
      out,
    );
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(/^stuck-worker: 5m simulated, 11 scrapes/);
    const text = readFileSync(out, 'utf8');
    expect(text.endsWith('# EOF\n')).toBe(true);
    // The first scrape: at the start, or up to a second after it (the background's scrape jitter).
    expect(text).toMatch(
      /^workqueue_depth\{instance="backup-operator-0:8080",job="workqueue-doctor-sim",name="backup"\} \d+ 1767225600(\.\d{1,3})?$/m,
    );
    expect(text).not.toContain('controller_runtime_');
    const truth = JSON.parse(readFileSync(`${out}.truth.json`, 'utf8'));
    expect(truth).toMatchObject({
      scenario: 'stuck-worker',
      flavor: 'component-base',
      instance: 'backup-operator-0:8080',
      parameters: { seed: 3, duration: '5m', scrapeInterval: '30s', start: '2026-01-01T00:00:00Z', workers: 2 },
      queues: [{ name: 'backup', controller: null, expected: ['WorkqueueStuckWorker'] }],
      background: { mode: 'default', conflictShare: 0.015 },
    });
    expect(truth.queues[0].allowed).toContain('WorkqueueBacklog');
  });

  it('--background off: no noise, scrapes on the grid, the truth says so', async () => {
    const out = join(work.path, 'healthy-off.om');
    const { code } = await cli('--scenario', 'healthy', '--duration', '2m', '--background', 'off', '--out', out);
    expect(code).toBe(EXIT.ok);
    const text = readFileSync(out, 'utf8');
    const times = new Set(
      text
        .split('\n')
        .filter((l) => l.startsWith('workqueue_adds_total{'))
        .map((l) => l.split(' ').at(-1)),
    );
    expect([...times]).toEqual(Array.from({ length: 9 }, (_, k) => String(1767225600 + 15 * k)));
    expect(text).not.toMatch(/code="(404|409)"/);
    const truth = JSON.parse(readFileSync(`${out}.truth.json`, 'utf8'));
    expect(truth.background).toMatchObject({ mode: 'off', conflictShare: 0, pauses: null, siblingTraffic: null });
  });

  it.each([
    [['--scenario', 'nope', '--out', 'x'], /unknown scenario "nope"; known: healthy/],
    [['--scenario', 'healthy', '--duration', '30x', '--out', 'x'], /invalid duration "30x"/],
    [['--scenario', 'healthy', '--duration', '0', '--out', 'x'], /duration must be more than 0/],
    [['--scenario', 'healthy', '--scrape-interval', '1h', '--out', 'x'], /longer than the duration/],
    [['--scenario', 'healthy', '--seed', '-1', '--out', 'x'], /--seed must be a non-negative integer/],
    [['--scenario', 'healthy', '--workers', '0', '--out', 'x'], /workers must be an integer from 1/],
    [['--scenario', 'healthy', '--keys', '2.5', '--out', 'x'], /--keys must be a non-negative integer/],
    [['--scenario', 'healthy', '--rate', 'fast', '--out', 'x'], /--rate must be a number/],
    [['--scenario', 'sawtooth-batches', '--batch-size', '0', '--out', 'x'], /batchSize must be an integer from 1/],
    [
      ['--scenario', 'sawtooth-batches', '--batch-size', 'many', '--out', 'x'],
      /--batch-size must be a non-negative integer/,
    ],
    [
      ['--scenario', 'hot-loop-status-write', '--status-at-ms', 'early', '--out', 'x'],
      /--status-at-ms must be a number/,
    ],
    [
      ['--scenario', 'hot-loop-status-write', '--status-at-ms', '-5', '--out', 'x'],
      /statusAtMs must be a number from 0/,
    ],
    [
      ['--scenario', 'healthy', '--flavor', 'kcm', '--out', 'x'],
      /--flavor must be one of controller-runtime, component-base/,
    ],
    [['--scenario', 'healthy', '--start', 'yesterday', '--out', 'x'], /invalid time "yesterday"/],
    [['--scenario', 'healthy', '--background', 'loud', '--out', 'x'], /--background must be one of default, off/],
    [['--scenario', 'healthy'], /needs --record FILE/],
    [['--scenario', 'healthy', '--instance', ' ', '--out', 'x'], /--instance must not be empty/],
    [[], /needs --scenario/],
    [['--scenario', 'healthy', '--realtime', '--out', 'x'], /cannot go with --realtime/],
    [['--scenario', 'healthy', '--realtime', '--listen', 'nowhere'], /invalid listen address/],
  ])('%j: exit 2 with a clear message', async (args, message) => {
    const { code, stderr } = await cli(...args);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(message);
    expect(existsSync('x')).toBe(false);
  });
});

describe('simulate --realtime', () => {
  it('serves /metrics until SIGINT, then exits 0', async () => {
    const child = spawn(
      process.execPath,
      [...cliEntry(), 'simulate', '--scenario', 'healthy', '--realtime', '--listen', '127.0.0.1:0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(output);
          if (match !== null) resolve(match[1]!);
        });
        child.stderr.on('data', (chunk: Buffer) => {
          output += chunk.toString();
        });
        child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
      });
      const body = await (await fetch(url)).text();
      // The queue's series exist from its creation (its depth, per priority, from its first key).
      expect(body).toContain('workqueue_adds_total{controller="deployment",name="deployment"}');
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
