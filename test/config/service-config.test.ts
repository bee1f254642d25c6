/**
 * `serve`'s configuration: defaults, precedence flags > environment > file (per setting, and for the
 * source as a whole), every bad value named with where it came from and its key, the file format.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { main } from '../../src/cli/main.js';
import { ConfigError } from '../../src/config/config-error.js';
import { type ConfigInputs, loadServiceConfig, resolveServiceConfig } from '../../src/config/service-config.js';
import { DEFAULT_TARGET } from '../../src/config/service-defaults.js';
import { flagName, SETTINGS } from '../../src/config/service-settings.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../../src/diagnosis/runbook.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { SCRAPE_LIMIT_SETTINGS } from '../../src/sources/limit-settings.js';
import { parseDuration } from '../../src/util/duration.js';

const dir = mkdtempSync(join(tmpdir(), 'wqd-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function resolve(input: { flags?: Record<string, unknown>; env?: Record<string, string>; file?: string }) {
  const inputs: ConfigInputs = {
    flags: input.flags ?? {},
    env: input.env ?? {},
    ...(input.file !== undefined ? { file: { path: 'config.yaml', text: input.file } } : {}),
  };
  return resolveServiceConfig(inputs);
}

function failure(input: Parameters<typeof resolve>[0]): string {
  try {
    resolve(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('defaults', () => {
  it('scrapes the sidecar default target, listens on 0.0.0.0:9808, 15 s intervals, 30 m history', () => {
    const config = resolve({});
    expect(config.source).toEqual({ kind: 'targets', urls: [DEFAULT_TARGET] });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 9808 });
    expect(config.listenGiven).toBe(false);
    expect(config.scrape).toEqual(DEFAULT_SCRAPE_SETTINGS);
    expect(config.scrape).toMatchObject({ intervalMs: 15_000, retentionMs: 1_800_000, insecureSkipVerify: false });
    expect(config.evaluation).toEqual({ intervalMs: 15_000 });
    expect(config.logLevel).toBe('info');
    expect(config.runbookBaseUrl).toBe(DEFAULT_RUNBOOK_BASE_URL);
    expect(config.overrides).toEqual({});
    expect(config.apiTokenFile).toBeUndefined();
  });

  it('the demo listens on 127.0.0.1:9808 by default', () => {
    const config = resolve({ flags: { demo: true } });
    expect(config.source).toEqual({ kind: 'demo', scenario: 'mixed' });
    expect(config.listen).toEqual({ host: '127.0.0.1', port: 9808 });
    expect(config.listenGiven).toBe(false);
    expect(resolve({ flags: { demo: true, listen: '127.0.0.1:0' } }).listenGiven).toBe(true);
  });
});

describe('precedence: flags > environment > file', () => {
  const file = 'listen: 10.0.0.1:1000\nscrape:\n  interval: 30s\nlogLevel: warn\nevaluation:\n  interval: 1m\n';

  it('applies per setting', () => {
    const all = resolve({
      file,
      env: { WQD_LISTEN: '10.0.0.2:2000', WQD_SCRAPE_INTERVAL: '20s' },
      flags: { listen: '10.0.0.3:3000' },
    });
    expect(all.listen).toEqual({ host: '10.0.0.3', port: 3000 });
    expect(all.scrape.intervalMs).toBe(20_000);
    expect(all.logLevel).toBe('warn');
    expect(all.evaluation.intervalMs).toBe(60_000);
    expect(all.origins).toMatchObject({
      listen: '--listen',
      'scrape.interval': 'WQD_SCRAPE_INTERVAL',
      logLevel: 'config.yaml: logLevel',
      'evaluation.interval': 'config.yaml: evaluation.interval',
    });

    const envOverFile = resolve({ file, env: { WQD_LISTEN: '10.0.0.2:2000' } });
    expect(envOverFile.listen).toEqual({ host: '10.0.0.2', port: 2000 });
    expect(envOverFile.listenGiven).toBe(true);
    expect(resolve({ file }).listen).toEqual({ host: '10.0.0.1', port: 1000 });
    expect(
      resolve({ file, flags: { scrapeInterval: '5s' }, env: { WQD_SCRAPE_INTERVAL: '20s' } }).scrape.intervalMs,
    ).toBe(5_000);
  });

  it('chooses the source as a whole from the highest layer that names one', () => {
    const file = 'targets:\n  - http://10.0.0.1:8080/metrics\n';
    expect(resolve({ file }).source).toEqual({ kind: 'targets', urls: ['http://10.0.0.1:8080/metrics'] });
    const prom = resolve({ file, env: { WQD_PROMETHEUS_URL: 'http://prometheus:9090' } }).source;
    expect(prom).toMatchObject({
      kind: 'prometheus',
      url: 'http://prometheus:9090',
      timeoutMs: 30_000,
      headers: {},
      engine: 'auto',
    });
    const flags = resolve({
      file,
      env: { WQD_PROMETHEUS_URL: 'http://prometheus:9090' },
      flags: { target: ['http://a:1/metrics', 'http://b:2/metrics'] },
    }).source;
    expect(flags).toEqual({ kind: 'targets', urls: ['http://a:1/metrics', 'http://b:2/metrics'] });
    expect(resolve({ env: { WQD_TARGETS: 'http://a:1/metrics, http://b:2/metrics' } }).source).toEqual({
      kind: 'targets',
      urls: ['http://a:1/metrics', 'http://b:2/metrics'],
    });
    expect(resolve({ file, flags: { demo: true } }).source.kind).toBe('demo');
  });

  it('reads Kubernetes discovery from any layer, with its details merged per setting', () => {
    const source = resolve({
      file: 'kubernetes:\n  enabled: true\n  namespaces: [a, b]\n  selector: app=x\n  port: 8080\n  scheme: https\n  job: ops\n',
      env: { WQD_SELECTOR: 'app=y' },
      flags: { namespace: ['c'] },
    }).source;
    expect(source).toEqual({
      kind: 'kubernetes',
      namespaces: ['c'],
      selector: 'app=y',
      port: 8080,
      scheme: 'https',
      job: 'ops',
    });
    expect(resolve({ flags: { kubernetes: true, kubeconfig: '/k' } }).source).toEqual({
      kind: 'kubernetes',
      namespaces: [],
      kubeconfig: '/k',
    });
    expect(resolve({ file: 'kubernetes:\n  enabled: false\n' }).source.kind).toBe('targets');
  });

  it('reads Prometheus details from the file, flags and environment', () => {
    const source = resolve({
      file: 'prometheus:\n  url: http://p:9090\n  headers: { X-Scope-OrgID: team-a }\n  basicAuth: { username: u, passwordFile: /pw }\n',
      env: { WQD_PROMETHEUS_TIMEOUT: '5s' },
    }).source;
    expect(source).toEqual({
      kind: 'prometheus',
      url: 'http://p:9090',
      timeoutMs: 5_000,
      headers: { 'X-Scope-OrgID': 'team-a' },
      engine: 'auto',
      maxSampleDelayMs: 120_000,
      seriesRefreshMs: 300_000,
      recordedSeries: 'auto',
      basicAuth: { username: 'u', passwordFile: '/pw' },
    });
    const flags = resolve({ flags: { prometheusUrl: 'http://p:9090', header: ['A: b', 'C:d'] } }).source;
    expect(flags).toMatchObject({ headers: { A: 'b', C: 'd' } });
    const engines = [
      resolve({ file: 'prometheus:\n  url: http://p:9090\n  engine: victoriametrics\n' }).source,
      resolve({ env: { WQD_PROMETHEUS_URL: 'http://p:9090', WQD_PROMETHEUS_ENGINE: 'prometheus' } }).source,
      resolve({ flags: { prometheusUrl: 'http://p:9090', prometheusEngine: 'victoriametrics' } }).source,
    ];
    expect(engines.map((s) => (s.kind === 'prometheus' ? s.engine : s.kind))).toEqual([
      'victoriametrics',
      'prometheus',
      'victoriametrics',
    ]);
    const recorded = [
      resolve({ file: 'prometheus:\n  url: http://p:9090\n  recordedSeries: off\n' }).source,
      resolve({ env: { WQD_PROMETHEUS_URL: 'http://p:9090', WQD_PROMETHEUS_RECORDED_SERIES: 'on' } }).source,
      resolve({ flags: { prometheusUrl: 'http://p:9090', prometheusRecordedSeries: 'off' } }).source,
    ];
    expect(recorded.map((s) => (s.kind === 'prometheus' ? s.recordedSeries : s.kind))).toEqual(['off', 'on', 'off']);
    expect(failure({ env: { WQD_PROMETHEUS_URL: 'http://p:9090', WQD_PROMETHEUS_RECORDED_SERIES: 'yes' } })).toBe(
      'WQD_PROMETHEUS_RECORDED_SERIES: invalid mode "yes"; expected one of auto, on, off',
    );
  });

  it('ignores unknown WQD_ variables and empty ones (a Service named wqd injects WQD_PORT and friends)', () => {
    const config = resolve({ env: { WQD_PORT: 'tcp://10.0.0.1:9808', WQD_SERVICE_HOST: '10.0.0.1', WQD_LISTEN: '' } });
    expect(config.listen).toEqual({ host: '0.0.0.0', port: 9808 });
  });
});

describe('bad values are named with their key', () => {
  it('names the file, the key and the problem', () => {
    expect(failure({ file: 'scrape:\n  interval: 5x\n' })).toMatch(
      /^config\.yaml: scrape\.interval: invalid duration "5x"/,
    );
    expect(failure({ env: { WQD_SCRAPE_INTERVAL: '5x' } })).toMatch(/^WQD_SCRAPE_INTERVAL: invalid duration "5x"/);
    expect(failure({ flags: { scrapeInterval: '5x' } })).toMatch(/^--scrape-interval: invalid duration "5x"/);
  });

  it('reports a bad value even where a higher layer overrides it', () => {
    expect(failure({ file: 'scrape:\n  interval: 5x\n', flags: { scrapeInterval: '5s' } })).toMatch(
      /^config\.yaml: scrape\.interval: invalid duration/,
    );
  });

  const BAD: Record<string, { file?: unknown; env?: string; flag?: unknown }> = {
    string: { file: 5, flag: '' },
    duration: { file: '5x', env: '5x', flag: 'soon' },
    boolean: { file: 'maybe', env: 'maybe' },
    list: { file: 5 },
    urls: { file: ['ftp://x/metrics'], env: 'nope', flag: ['http//x'] },
    integer: { file: 0, env: 'many', flag: '1.5' },
    port: { file: 70_000, env: '0', flag: 'http' },
    url: { file: 'nope', env: 'file:///etc/passwd', flag: 'x' },
    listen: { file: 'nope', env: '1.2.3.4', flag: 'host:99999' },
    logLevel: { file: 'loud', env: 'verbose', flag: 'chatty' },
    headers: { file: 'x', flag: ['no colon'] },
    scheme: { file: 'ftp' },
    prometheusEngine: { file: 'thanos', env: 'prom', flag: 'VictoriaMetrics' },
    recordedSeriesMode: { file: 'true', env: 'yes', flag: 'ON' },
    selector: { file: 'job=', env: '{job="x"', flag: 'job' },
    labelName: { file: 'my-cluster' },
    memory: { file: '192 MB', env: 'lots', flag: '-1Gi' },
  };

  for (const setting of SETTINGS) {
    const bad = BAD[setting.kind];
    if (bad === undefined) throw new Error(`no bad value for kind ${setting.kind}`);
    if (setting.flagOnly !== true && bad.file !== undefined) {
      it(`file ${setting.key}`, () => {
        const path = setting.key.split('.');
        let value: unknown = bad.file;
        for (const part of [...path].reverse()) value = { [part]: value };
        const message = failure({ file: JSON.stringify(value) });
        expect(message.startsWith(`config.yaml: ${setting.key}`), message).toBe(true);
      });
    }
    if (setting.env !== undefined && bad.env !== undefined) {
      it(`env ${setting.env}`, () => {
        const message = failure({ env: { [setting.env as string]: bad.env as string } });
        expect(message.startsWith(`${setting.env}: `), message).toBe(true);
      });
    }
    if (setting.flag !== undefined && bad.flag !== undefined) {
      it(`flag ${flagName(setting.flag)}`, () => {
        const message = failure({ flags: { [setting.flag as string]: bad.flag } });
        expect(message.startsWith(flagName(setting.flag as string)), message).toBe(true);
      });
    }
  }

  it('checks values against each other', () => {
    expect(failure({ flags: { scrapeInterval: '10s', scrapeTimeout: '10s' } })).toMatch(
      /^--scrape-timeout: the scrape timeout must be below the scrape interval \(--scrape-interval\)/,
    );
    expect(failure({ file: 'evaluation:\n  interval: "0"\n' })).toBe(
      'config.yaml: evaluation.interval: 0 is outside the accepted range, 1s to 1h',
    );
    expect(failure({ flags: { scrapeInterval: '1m' }, env: { WQD_RETENTION: '1m' } })).toMatch(
      /^WQD_RETENTION: the history must hold at least two scrape intervals/,
    );
    expect(failure({ flags: { prometheusUrl: 'http://p:9090', basicAuthUser: 'u' } })).toMatch(
      /^--basic-auth-user: basic auth needs both a user and a password file/,
    );
    expect(failure({ flags: { target: ['http://a/metrics'], prometheusUrl: 'http://p:9090' } })).toMatch(
      /^--target and --prometheus-url: give only one source/,
    );
    expect(failure({ file: 'targets: [http://a/metrics]\nprometheus: { url: "http://p:9090" }\n' })).toMatch(
      /^config\.yaml: targets and config\.yaml: prometheus\.url: give only one source/,
    );
    expect(failure({ flags: { demo: true, kubernetes: true } })).toMatch(
      /^--demo and --kubernetes: give only one source/,
    );
    expect(failure({ file: 'targets: []\n' })).toBe('config.yaml: targets: give at least one target URL');
  });

  it('rejects a flag or variable that does nothing with the chosen source; the file may hold every section', () => {
    expect(failure({ flags: { target: ['http://a/metrics'], basicAuthUser: 'u', basicAuthPasswordFile: '/p' } })).toBe(
      '--basic-auth-user: applies only with Prometheus mode (--prometheus-url); the source here is static targets (--target)',
    );
    expect(failure({ flags: { namespace: ['ns'] } })).toBe(
      '--namespace: applies only with Kubernetes discovery (--kubernetes); the source here is static targets (--target)',
    );
    expect(failure({ flags: { prometheusUrl: 'http://p:9090' }, env: { WQD_SCRAPE_INTERVAL: '30s' } })).toBe(
      'WQD_SCRAPE_INTERVAL: applies only with static targets (--target), Kubernetes discovery (--kubernetes), the demo (--demo); the source here is Prometheus mode (--prometheus-url)',
    );
    const config = resolveServiceConfig({
      flags: { prometheusUrl: 'http://p:9090' },
      env: {},
      file: { path: 'config.yaml', text: 'scrape:\n  interval: 30s\nkubernetes:\n  namespaces: [ns]\n' },
    });
    expect(config.source.kind).toBe('prometheus');
  });

  it('bounds every duration: timers beyond about 24 days would fire at once, again and again', () => {
    expect(failure({ flags: { evaluationInterval: '4w' } })).toBe(
      '--evaluation-interval: 4w is outside the accepted range, 1s to 1h',
    );
    expect(failure({ env: { WQD_SCRAPE_INTERVAL: '500ms' } })).toBe(
      'WQD_SCRAPE_INTERVAL: 500ms is outside the accepted range, 1s to 1h',
    );
    expect(failure({ file: 'scrape:\n  retention: 30d\n' })).toBe(
      'config.yaml: scrape.retention: 30d is outside the accepted range, 1m to 1d',
    );
    expect(failure({ flags: { prometheusUrl: 'http://p:9090', prometheusTimeout: '1h' } })).toBe(
      '--prometheus-timeout: 1h is outside the accepted range, 1s to 10m',
    );
    expect(failure({ flags: { scrapeTimeout: '10ms' } })).toBe(
      '--scrape-timeout: 10ms is outside the accepted range, 100ms to 1h',
    );
    // The defaults and the edges are accepted.
    for (const setting of SETTINGS) {
      if (setting.range === undefined) continue;
      expect(parseDuration(setting.range.min)).toBeGreaterThan(0);
      expect(parseDuration(setting.range.max)).toBeLessThan(2 ** 31 - 1);
    }
    expect(() =>
      resolveServiceConfig({ flags: { evaluationInterval: '1h', scrapeInterval: '1s', retention: '1d' }, env: {} }),
    ).not.toThrow();
  });

  it('rejects unknown keys, non-mapping sections and invalid YAML', () => {
    expect(failure({ file: 'scrape:\n  intervall: 5s\n' })).toMatch(
      /^config\.yaml: scrape\.intervall: unknown key; expected one of interval, timeout/,
    );
    expect(failure({ file: 'listne: 1.2.3.4:5\n' })).toMatch(/^config\.yaml: listne: unknown key/);
    expect(failure({ file: 'prometheus:\n  basicAuth: { user: u }\n' })).toMatch(
      /^config\.yaml: prometheus\.basicAuth\.user: unknown key; expected one of username, passwordFile/,
    );
    expect(failure({ file: 'scrape: 5\n' })).toBe('config.yaml: scrape: expected a mapping, got 5');
    expect(failure({ file: '- a\n- b\n' })).toBe('config.yaml: expected a mapping at the top, got a list');
    expect(failure({ file: 'scrape: [\n' })).toMatch(/^config\.yaml: not valid YAML/);
  });

  it('checks the rules and queues sections with their dotted paths', () => {
    expect(failure({ file: 'rules:\n  WorkqueueBacklog:\n    thresholds: { minDepth: lots }\n' })).toBe(
      'config.yaml: rules.WorkqueueBacklog.thresholds.minDepth: expected a finite number, got "lots"',
    );
    expect(failure({ file: 'rules:\n  WorkqueueBacklogg: {}\n' })).toMatch(
      /^config\.yaml: rules\.WorkqueueBacklogg: unknown rule/,
    );
    expect(failure({ file: 'queues:\n  - silenced: true\n' })).toMatch(
      /^config\.yaml: queues\[0\]: give a name or a controller to match/,
    );
    expect(failure({ file: 'queues:\n  - name: a\n  - name: b\n    silenced: yes please\n' })).toBe(
      'config.yaml: queues[1].silenced: expected true or false, got "yes please"',
    );
    expect(failure({ file: 'queues:\n  - name: a\n    rules: { WorkqueueHotLoop: { for: 5x } }\n' })).toMatch(
      /^config\.yaml: queues\[0\]\.rules\.WorkqueueHotLoop\.for: invalid duration "5x"/,
    );
    expect(failure({ file: 'queues:\n  - name: a\n    label: b\n' })).toMatch(
      /^config\.yaml: queues\[0\]\.label: unknown key/,
    );
    expect(failure({ file: 'queues: { name: a }\n' })).toMatch(/^config\.yaml: queues: expected a list/);
  });
});

describe('overrides from the file', () => {
  it('reads rule-wide and per-queue overrides and silencing', () => {
    const config = resolve({
      file: [
        'rules:',
        '  WorkqueueBacklog:',
        '    thresholds: { minDepth: 50 }',
        '    for: 15m',
        'queues:',
        '  - name: pod',
        '    controller: pod',
        '    rules:',
        '      WorkqueueBacklog: { thresholds: { minDepth: 1000 } }',
        '  - controller: legacy',
        '    silenced: true',
      ].join('\n'),
    });
    expect(config.overrides).toEqual({
      rules: { WorkqueueBacklog: { thresholds: { minDepth: 50 }, forMs: 900_000 } },
      queues: [
        { name: 'pod', controller: 'pod', rules: { WorkqueueBacklog: { thresholds: { minDepth: 1000 } } } },
        { controller: 'legacy', silenced: true },
      ],
    });
  });
});

describe('loadServiceConfig', () => {
  it('reads the file named by --config or WQD_CONFIG, and names an unreadable one', async () => {
    const file = join(dir, 'wqd.yaml');
    writeFileSync(file, 'scrape:\n  interval: 30s\n');
    expect((await loadServiceConfig({ config: file }, {})).scrape.intervalMs).toBe(30_000);
    expect((await loadServiceConfig({}, { WQD_CONFIG: file })).configFile).toBe(file);
    await expect(loadServiceConfig({ config: join(dir, 'missing.yaml') }, {})).rejects.toThrow(
      /^--config: cannot read ".*missing\.yaml": no such file$/,
    );
    await expect(loadServiceConfig({}, { WQD_CONFIG: join(dir, 'missing.yaml') })).rejects.toThrow(
      /^WQD_CONFIG: cannot read/,
    );
  });

  it('makes serve exit 2 with the key named', async () => {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'scrape:\n  interval: 5x\n');
    let stderr = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      stderr += String(chunk);
      return true;
    });
    try {
      const code = await main(['node', 'workqueue-doctor', 'serve', '--config', file]);
      expect(code).toBe(EXIT.usage);
    } finally {
      spy.mockRestore();
    }
    expect(stderr).toContain(`workqueue-doctor: ${file}: scrape.interval: invalid duration "5x"`);
  });
});

describe('the settings a limit error names', () => {
  it('are settings of the table, with their variables', () => {
    for (const [name, text] of Object.entries(SCRAPE_LIMIT_SETTINGS)) {
      const setting = SETTINGS.find((s) => s.key === `scrape.${name}`);
      expect(text, name).toBe(`${setting?.key} or ${setting?.env}`);
    }
  });
});

describe('deploy/config-example.yaml', () => {
  const text = readFileSync(new URL('../../deploy/config-example.yaml', import.meta.url), 'utf8');

  it('is a valid configuration', () => {
    const config = resolveServiceConfig({ flags: {}, env: {}, file: { path: 'config-example.yaml', text } });
    expect(config.source).toEqual({ kind: 'targets', urls: ['http://127.0.0.1:8080/metrics'] });
    expect(config.overrides.queues).toHaveLength(2);
  });

  it('documents every setting, its flag and its environment variable', () => {
    for (const setting of SETTINGS) {
      if (setting.flagOnly === true) continue;
      const leaf = setting.key.split('.').at(-1) as string;
      expect(text, setting.key).toMatch(new RegExp(`^\\s*#?\\s*${leaf}:`, 'm'));
      if (setting.env !== undefined) expect(text, setting.key).toContain(setting.env);
      if (setting.flag !== undefined) expect(text, setting.key).toContain(flagName(setting.flag));
    }
  });
});
