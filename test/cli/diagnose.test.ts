/**
 * `workqueue-doctor diagnose`: reports from a recording as text and as JSON (valid against the report
 * schema), exit codes 0/1/2 with `--fail-on`, `--at`, `--config` overrides, and clear errors for bad input.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { isFiring, type Report } from '../../src/diagnosis/report.js';
import { runVirtual, startLiveSimulation } from '../../src/simulate/index.js';
import { expectValid, validateReport } from '../server/helpers.js';
import { type CliResult, runCli } from '../support/cli.js';
import { withoutTargetLabels } from '../support/recordings.js';
import { queueSeries, seriesRecording } from '../support/series-recording.js';

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
    // The last scrape, within the simulated scrape jitter (a second) of the 30th minute.
    expect(stdout).toMatch(
      /^workqueue-doctor: 1 queue, 0 with findings, at 2026-01-01T00:(29:59|30:00)\.\d{3}Z \(window 5m\)/,
    );
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

  it('--at evaluates earlier: before the sync got stuck there is no finding, and 6 minutes judge no long rule', async () => {
    const args = ['--recording', file('stuck-worker.om'), '--at', '2026-01-01T00:06:00Z', '--output', 'json'];
    const { code, stdout } = await cli(...args);
    const report = JSON.parse(stdout) as Report;
    expect(report.evaluatedAt).toBe('2026-01-01T00:06:00.000Z');
    expect(report.queues.flatMap((q) => q.findings.filter(isFiring))).toEqual([]);
    // Six minutes of data span no 15- or 30-minute range: those rules are unknown, and so is the exit code.
    const unknown = report.queues.flatMap((q) => q.unknown ?? []);
    expect(unknown.map((u) => u.rule)).toContain('WorkqueuePersistentFailures');
    expect(unknown.every((u) => /^window 6m is shorter than the rule's range /.test(u.reason))).toBe(true);
    expect(code).toBe(EXIT.unknown);
    expect((await cli(...args, '--fail-on', 'warning')).code).toBe(EXIT.ok);
  });

  it('applies threshold overrides from --config', async () => {
    const config = file('overrides.yaml');
    writeFileSync(config, 'rules:\n  WorkqueueHotLoop:\n    thresholds:\n      minAddRate: 100000\n');
    const { code } = await cli('--recording', file('hot-loop-status-write.om'), '--config', config);
    expect(code).toBe(EXIT.ok);
  });
});

/** A `/metrics` page as captured once at `timeSec`: every sample stamped, `# EOF` appended. */
function stampedPage(page: string, timeSec: number): string {
  const lines = page.split('\n').filter((line) => line.trim() !== '');
  return `${lines.map((line) => (line.startsWith('#') ? line : `${line} ${timeSec}`)).join('\n')}\n# EOF\n`;
}

function targetsOf(report: Report): string[] {
  return [...new Set(report.queues.map((q) => q.queue.target))].sort();
}

const CLIENT_GO_PAGES = fileURLToPath(new URL('../fixtures/client-go/', import.meta.url));

describe('diagnose --recording without job and instance labels: one target named after the file', () => {
  const pages = readdirSync(CLIENT_GO_PAGES).filter((f) => f.endsWith('.prom'));

  it('has real client-go pages to read', () => {
    expect(pages.length).toBeGreaterThanOrEqual(5);
  });

  it.each(pages)('%s, stamped: one target, no WorkqueueNotObservable, nothing firing from one page', async (page) => {
    const recording = file(page.replace(/\.prom$/, '.om'));
    writeFileSync(recording, stampedPage(readFileSync(join(CLIENT_GO_PAGES, page), 'utf8'), 1767225600));
    const { code, stdout } = await cli('--recording', recording, '--output', 'json');
    const report = JSON.parse(stdout) as Report;
    expectValid(validateReport, report);
    expect(targetsOf(report)).toEqual([basename(recording)]);
    expect(report.queues.length).toBeGreaterThan(0);
    expect(report.queues.every((q) => q.queue.name !== null)).toBe(true);
    expect(report.queues.flatMap((q) => q.findings.map((f) => f.rule))).not.toContain('WorkqueueNotObservable');
    expect(report.errors).toEqual([]);
    // One page proves no `for` and spans no range: nothing fires, and what is not pending is unknown.
    expect(report.queues.flatMap((q) => q.findings.filter(isFiring))).toEqual([]);
    expect(report.queues.every((q) => q.status === 'pending' || q.status === 'unknown')).toBe(true);
    expect(code).toBe(EXIT.unknown);
    const pending = report.queues.some((q) => q.findings.length > 0);
    expect((await cli('--recording', recording, '--fail-on', 'warning,pending')).code).toBe(
      pending ? EXIT.findings : EXIT.ok,
    );
  });

  it('a page without timestamps is not a recording: exit 2 naming the line, and how to diagnose a page', async () => {
    const { code, stderr } = await cli('--recording', join(CLIENT_GO_PAGES, 'controller-runtime-hotloop.prom'));
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(/controller-runtime-hotloop\.prom: line \d+, column \d+: sample without a timestamp/);
    expect(stderr).toContain('--target URL --window');
    expect(stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a recording cut short of its # EOF: exit 2 naming the line, and what a recording is', async () => {
    const cut = file('stuck-worker-cut.om');
    writeFileSync(cut, readFileSync(file('stuck-worker.om'), 'utf8').replace(/# EOF\s*$/, ''));
    const { code, stderr } = await cli('--recording', cut);
    expect(code).toBe(EXIT.usage);
    expect(stderr).toMatch(
      /stuck-worker-cut\.om: line \d+, column \d+: data does not end with # EOF\. A recording is samples over time/,
    );
  });

  it('keeps queue identity and findings; only the target becomes the file name', async () => {
    const plain = file('stuck-worker-plain.om');
    writeFileSync(plain, withoutTargetLabels(readFileSync(file('stuck-worker.om'), 'utf8')));
    expect(readFileSync(plain, 'utf8')).not.toMatch(/job=|instance=/);
    const labelled = JSON.parse(
      (await cli('--recording', file('stuck-worker.om'), '--output', 'json')).stdout,
    ) as Report;
    const { code, stdout } = await cli('--recording', plain, '--output', 'json');
    const report = JSON.parse(stdout) as Report;
    expectValid(validateReport, report);
    expect(code).toBe(EXIT.findings);
    expect(targetsOf(report)).toEqual(['stuck-worker-plain.om']);
    const shape = (r: Report) =>
      r.queues.map((q) => ({
        name: q.queue.name,
        controller: q.queue.controller,
        status: q.status,
        rules: q.findings.map((f) => [f.rule, f.since]),
        signals: q.signals,
      }));
    expect(shape(report)).toEqual(shape(labelled));
    expect(report.queues.flatMap((q) => q.findings.map((f) => f.rule))).not.toContain('WorkqueueNotObservable');
    // Without findings the exit code is 0: no phantom target fails the run.
    writeFileSync(file('healthy-plain.om'), withoutTargetLabels(readFileSync(file('healthy.om'), 'utf8')));
    const healthy = await cli('--recording', file('healthy-plain.om'), '--output', 'json');
    expect(healthy.code).toBe(EXIT.ok);
    expect(targetsOf(JSON.parse(healthy.stdout) as Report)).toEqual(['healthy-plain.om']);
  });

  it('a recording mixing a labelled target and unlabelled samples has two targets, the labelled one unchanged', async () => {
    const healthy = readFileSync(file('healthy.om'), 'utf8').replace(/# EOF\n?$/, '');
    const plain = withoutTargetLabels(readFileSync(file('stuck-worker.om'), 'utf8'));
    writeFileSync(file('mixed.om'), `${healthy}${plain}`);
    const alone = JSON.parse((await cli('--recording', file('healthy.om'), '--output', 'json')).stdout) as Report;
    const { code, stdout } = await cli('--recording', file('mixed.om'), '--output', 'json');
    const report = JSON.parse(stdout) as Report;
    expectValid(validateReport, report);
    expect(code).toBe(EXIT.findings);
    expect(targetsOf(report)).toEqual(['mixed.om', 'workqueue-doctor-sim/healthy:8080']);
    const labelled = report.queues.filter((q) => q.queue.target === 'workqueue-doctor-sim/healthy:8080');
    expect(labelled).toEqual(alone.queues);
    expect(report.queues.find((q) => q.queue.target === 'mixed.om' && q.queue.name === 'backup')?.status).toBe(
      'critical',
    );
    expect(report.queues.flatMap((q) => q.findings.map((f) => f.rule))).not.toContain('WorkqueueNotObservable');
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
      // Three seconds judge no rule's range: unknown with the reason, never ok, exit 3.
      expect(queue?.status).toBe('unknown');
      expect(queue?.unknown?.length).toBeGreaterThan(0);
      expect(code).toBe(EXIT.unknown);
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
    expect(stderr).toMatch(/bad-section\.yaml: rulez: unknown key; expected one of .*rules, queues/);
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
      expect(stderr).toBe(
        `workqueue-doctor: cannot scrape http://127.0.0.1:${port}/metrics: HTTP 500 Internal Server Error\n`,
      );
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('diagnose: observations are reported but never counted by --fail-on', () => {
  it('exits 0 on a queue whose only entry is an observation, and prints and writes it', async () => {
    const recording = file('observation-only.om');
    const busy = { job: 'ctrl', instance: 'a:8080', controller: 'busy', name: 'busy' };
    writeFileSync(
      recording,
      seriesRecording({
        series: queueSeries(busy, { depth: () => 0, adds: (t) => 80 * t, completions: (t) => 80 * t }),
      }),
    );
    const text = await cli('--recording', recording, '--fail-on', 'warning');
    expect(text.code).toBe(EXIT.ok);
    expect(text.stdout).toMatch(
      /^OK {2}busy .*\n.*\n {2}observations \(.*not findings\):\n {4}note: HighAddRateLowDepth: /m,
    );
    const json = await cli('--recording', recording, '--fail-on', 'warning', '--output', 'json');
    expect(json.code).toBe(EXIT.ok);
    const report = JSON.parse(json.stdout) as Report;
    expectValid(validateReport, report);
    expect(report.queues.flatMap((q) => q.findings)).toEqual([]);
    expect(report.queues.flatMap((q) => q.observations.map((o) => o.id))).toEqual(['HighAddRateLowDepth']);
  });
});
