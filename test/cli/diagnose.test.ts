/**
 * `workqueue-doctor diagnose`: reports from a recording as text and as JSON (valid against the report
 * schema), exit codes 0/1/2 with `--fail-on`, `--at`, `--config` overrides, and clear errors for bad input.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import type { Report } from '../../src/diagnosis/report.js';
import { runVirtual, startLiveSimulation } from '../../src/simulate/index.js';
import { expectValid, validateReport } from '../server/helpers.js';
import { type CliResult, runCli } from '../support/cli.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-diagnose-cli-'));
const file = (name: string) => join(work, name);

beforeAll(async () => {
  for (const scenario of ['healthy', 'stuck-worker', 'hot-loop-status-write']) {
    const run = await runVirtual(scenario, { seed: 4 });
    writeFileSync(file(`${scenario}.om`), run.recording.text());
  }
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function cli(...args: string[]): Promise<CliResult> {
  return runCli('diagnose', ...args);
}

describe('diagnose --recording', () => {
  it('exits 0 on a healthy controller and prints one line per queue', async () => {
    const { code, stdout } = await cli('--recording', file('healthy.om'));
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(/^workqueue-doctor: 1 queue, 0 with findings, at 2026-01-01T00:30:00.000Z \(window 5m\)/);
    expect(stdout).toMatch(/OK {2}deployment {2}\[workqueue-doctor-sim\/healthy:8080\]/);
  });

  it('prints a finding with evidence, cause, fix and runbook, and exits 1', async () => {
    const { code, stdout } = await cli(
      '--recording',
      file('stuck-worker.om'),
      '--runbook-base-url',
      'https://rb.example/x/',
    );
    expect(code).toBe(EXIT.findings);
    expect(stdout).toContain('CRITICAL  backup');
    expect(stdout).toContain('WorkqueueStuckWorker (critical, since ');
    expect(stdout).toMatch(/Longest-running sync\s+\d+(\.\d+)?m/);
    expect(stdout).toContain('runbook: https://rb.example/x/WorkqueueStuckWorker.md');
    expect(stdout.indexOf('WorkqueueStuckWorker')).toBeLessThan(stdout.indexOf('WorkqueueSlowWork'));
  });

  it('writes JSON that validates against the report schema', async () => {
    const { code, stdout } = await cli('--recording', file('hot-loop-status-write.om'), '--output', 'json');
    expect(code).toBe(EXIT.findings);
    const report = JSON.parse(stdout) as Report;
    expectValid(validateReport, report);
    const queue = report.queues.find((q) => q.queue.name === 'ingress-status');
    expect(queue?.status).toBe('warning');
    expect(queue?.findings.map((f) => f.rule)).toEqual(['WorkqueueHotLoop']);
    expect(queue?.findings[0]?.evidence.addRate?.unit).toBe('1/s');
    expect(queue?.id).toMatch(/^[A-Za-z0-9._~-]+$/);
  });

  it('--fail-on critical ignores warnings but not critical findings', async () => {
    expect((await cli('--recording', file('hot-loop-status-write.om'), '--fail-on', 'critical')).code).toBe(EXIT.ok);
    expect((await cli('--recording', file('stuck-worker.om'), '--fail-on', 'critical')).code).toBe(EXIT.findings);
  });

  it('--at evaluates earlier: before the sync got stuck there is no finding', async () => {
    const { code, stdout } = await cli(
      '--recording',
      file('stuck-worker.om'),
      '--at',
      '2026-01-01T00:06:00Z',
      '--output',
      'json',
    );
    expect(code).toBe(EXIT.ok);
    expect((JSON.parse(stdout) as Report).evaluatedAt).toBe('2026-01-01T00:06:00.000Z');
  });

  it('applies threshold overrides from --config', async () => {
    const config = file('overrides.yaml');
    writeFileSync(config, 'rules:\n  WorkqueueHotLoop:\n    thresholds:\n      minAddRate: 100000\n');
    const { code } = await cli('--recording', file('hot-loop-status-write.om'), '--config', config);
    expect(code).toBe(EXIT.ok);
  });
});

describe('diagnose --target', () => {
  it('scrapes a live controller over the window and reports its queue', { timeout: 60_000 }, async () => {
    const live = await startLiveSimulation({ scenario: 'healthy', listen: '127.0.0.1:0' });
    try {
      const { code, stdout } = await cli(
        '--target',
        live.url,
        '--window',
        '3s',
        '--interval',
        '1s',
        '--output',
        'json',
      );
      const report = JSON.parse(stdout) as Report;
      expectValid(validateReport, report);
      expect(report.errors).toEqual([]);
      const queue = report.queues.find((q) => q.queue.name === 'deployment');
      expect(queue?.queue.target).toBe(`workqueue-doctor-diagnose/${new URL(live.url).host}`);
      expect(queue?.signals.maxWorkers?.value).toBe(4);
      expect(code).toBe(EXIT.ok);
    } finally {
      await live.stop();
    }
  });
});

describe('diagnose --config queues', () => {
  it('silences a queue and overrides a threshold for one queue only', async () => {
    const config = file('queues.yaml');
    writeFileSync(config, 'queues:\n  - name: backup\n    silenced: true\n');
    const silenced = await cli('--recording', file('stuck-worker.om'), '--config', config, '--output', 'json');
    expect(silenced.code).toBe(EXIT.ok);
    expect((JSON.parse(silenced.stdout) as Report).queues.map((q) => q.queue.name)).not.toContain('backup');
    writeFileSync(
      config,
      'queues:\n  - name: ingress-status\n    rules:\n      WorkqueueHotLoop:\n        thresholds: { minAddRate: 100000 }\n',
    );
    expect((await cli('--recording', file('hot-loop-status-write.om'), '--config', config)).code).toBe(EXIT.ok);
  });

  it('names an unknown section', async () => {
    const config = file('bad-section.yaml');
    writeFileSync(config, 'rulez: {}\n');
    const { code, stderr } = await cli('--recording', file('healthy.om'), '--config', config);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('bad-section.yaml: rulez: unknown key; expected rules or queues');
  });
});

describe('diagnose input errors exit 2 with a clear message', () => {
  it('names the line of a malformed recording', async () => {
    const lines = readFileSync(file('healthy.om'), 'utf8').split('\n');
    lines[9] = 'workqueue_adds_total{name="x" 1 2';
    writeFileSync(file('broken.om'), lines.join('\n'));
    const { code, stderr } = await cli('--recording', file('broken.om'));
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(/broken\.om.*line 10/);
  });

  it('reports a missing file', async () => {
    const { code, stderr } = await cli('--recording', file('absent.om'));
    expect(code).toBe(EXIT.usage);
    expect(stderr).toContain('absent.om');
  });

  it('refuses no source or two sources, and bad values', async () => {
    expect((await cli()).code).toBe(EXIT.usage);
    expect((await cli('--recording', file('healthy.om'), '--prometheus-url', 'http://127.0.0.1:9')).code).toBe(
      EXIT.usage,
    );
    const badTime = await cli('--recording', file('healthy.om'), '--at', 'yesterday');
    expect(badTime.code).toBe(EXIT.usage);
    expect(badTime.stderr).toContain('invalid time "yesterday"');
    expect((await cli('--recording', file('healthy.om'), '--output', 'xml')).code).toBe(EXIT.usage);
  });

  it('exits 2 when no live target can be scraped', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(500);
      res.end('down');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const { code, stderr } = await cli(
        '--target',
        `http://127.0.0.1:${port}/metrics`,
        '--window',
        '1s',
        '--interval',
        '1s',
      );
      expect(code).toBe(EXIT.usage);
      expect(stderr).toContain('no target could be scraped');
      expect(stderr).toContain('HTTP 500');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
