/**
 * One configuration file for every command: `deploy/config-example.yaml` (which exercises every section) is
 * accepted by serve (its configuration entry point), diagnose, calibrate and generate; a key no command knows
 * is still rejected with the file, the dotted key and the valid keys; the fleet selector and the scrape
 * settings reach what each command builds.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { loadServiceConfig } from '../../src/config/service-config.js';
import type { Report } from '../../src/diagnosis/report.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { runVirtual } from '../../src/simulate/index.js';
import { runCli } from '../support/cli.js';
import { spawnCli } from '../support/cli-process.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLE = join(ROOT, 'deploy/config-example.yaml');
const work = mkdtempSync(join(tmpdir(), 'wqd-one-config-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('deploy/config-example.yaml serves every command', () => {
  it('serve: the configuration serve loads has every section', async () => {
    const config = await loadServiceConfig({ config: EXAMPLE }, {});
    expect(config.scope.selector).toEqual([{ label: 'job', op: '=~', value: '.+' }]);
    expect(config.scope.clusterLabel).toBe('cluster');
    expect(config.scope.namespaceLabel).toBe('namespace');
    expect(config.dashboardsReadRecordings).toBe(true);
    expect(config.overrides.queues?.length).toBeGreaterThan(0);
    expect(config.scrape.seriesLimit).toBe(DEFAULT_SCRAPE_SETTINGS.seriesLimit);
  });

  it('serve --config starts with it and stops on SIGTERM', async () => {
    // Loopback and a free port instead of the example's 0.0.0.0:9808; everything else is the file's.
    const serve = spawnCli(['serve', '--config', EXAMPLE, '--listen', '127.0.0.1:0']);
    try {
      await serve.output('stdout', /"msg":"listening"/);
      expect(serve.stderr()).toBe('');
      serve.child.kill('SIGTERM');
      expect(await serve.exited).toBe(0);
    } finally {
      await serve.stop();
    }
  }, 60_000);

  it('diagnose --config', async () => {
    const recording = join(work, 'healthy.om');
    writeFileSync(recording, (await runVirtual('healthy', { seed: 1 })).recording.text());
    const result = await runCli('diagnose', '--recording', recording, '--config', EXAMPLE, '-o', 'json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(EXIT.ok);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.queues.map((q) => q.status)).toEqual(['ok']);
  }, 60_000);

  it('calibrate --config', async () => {
    const result = await runCli('calibrate', '--config', EXAMPLE, '--scenario', 'healthy', '--seeds', '1');
    expect(result.stderr).not.toMatch(/unknown key|config-example/);
    expect(result.stdout).toMatch(/1 runs/);
  }, 120_000);

  it('generate --config', async () => {
    const result = await runCli('generate', '--config', EXAMPLE, '--out', join(work, 'generated'));
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const rules = readFileSync(join(work, 'generated/alerts/workqueue-doctor.rules.yaml'), 'utf8');
    expect(rules).toContain('job=~".+"');
  });
});

describe('a key no command knows', () => {
  it.each([
    ['diagnose', '--recording', 'x.om'],
    ['generate', '--out', 'x'],
    ['calibrate', '--seeds', '1'],
  ])('%s names the file, the key and the valid keys', async (command, ...rest) => {
    const bad = join(work, 'bad.yaml');
    writeFileSync(bad, 'scrape:\n  seriesLimitt: 5\n');
    const result = await runCli(command, ...rest, '--config', bad);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml: scrape\.seriesLimitt: unknown key; expected one of .*seriesLimit/);
  });
});

describe('every command sets every scrape limit', () => {
  it('diagnose takes the limits from flags and the file (flags win)', async () => {
    const file = join(work, 'limits.yaml');
    writeFileSync(file, 'scrape:\n  seriesLimit: 7\n  queueLimit: 9\n');
    // A limit of 7 series refuses any controller's page: the one target cannot be read.
    const result = await runCli(
      'diagnose',
      '--target',
      'http://127.0.0.1:9/metrics',
      '--config',
      file,
      '--scrape-series-limit',
      '0',
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--scrape-series-limit: expected an integer/);
  });
});
