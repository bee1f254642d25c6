/**
 * The Helm chart's generated parts (src/generate/helm/): its files/ are byte for byte the generated rule file and
 * dashboards (with overrides too), Chart.yaml carries the package's version, values.yaml holds the defaults of the
 * one values definition and values.schema.json accepts them, the README documents every value, and `generate
 * --check` finds a stray file under files/. The configuration schema agrees with the configuration loader: the
 * documented example files pass both, and each sample is accepted by both or refused by both.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { EXIT } from '../../src/cli/exit-codes.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import { SETTINGS } from '../../src/config/service-settings.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { DASHBOARD_UID, type DashboardKey, OUTPUT } from '../../src/generate/defaults.js';
import { CHART_OWNED_CONFIG_KEYS, CHART_VALUES } from '../../src/generate/helm/chart-values.js';
import { configFileSchema } from '../../src/generate/helm/config-schema.js';
import { defaultsOf, type JsonSchema, valuesOf } from '../../src/generate/helm/values-tree.js';
import { runCli } from '../support/cli.js';

const ROOT = new URL('../../', import.meta.url);
const VERSION = (JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { version: string }).version;
const KEYS = Object.keys(DASHBOARD_UID) as DashboardKey[];
// Strict, but `anyOf: [{ required: [name] }, ...]` names properties its parent defines, which strictRequired refuses.
const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, strictRequired: false });

function filesOf(options: Parameters<typeof generateArtifacts>[0] = {}): Map<string, string> {
  return new Map(generateArtifacts(options).map((f) => [f.path, f.content]));
}

/** Whether the loader accepts a configuration file's text (as `serve --config` and `generate --config` read it). */
function loaderAccepts(config: unknown): boolean {
  try {
    resolveServiceConfig({ flags: {}, env: {}, file: { path: 'config.yaml', text: stringify(config) } });
    return true;
  } catch {
    return false;
  }
}

describe("the Helm chart's generated files", () => {
  const files = filesOf();

  it('files/: the generated rule file and dashboards, byte for byte, with overrides too', () => {
    const overrides = { rules: { WorkqueueBacklog: { thresholds: { minDepth: 77 } } } };
    for (const set of [files, filesOf({ overrides })]) {
      expect(set.get(OUTPUT.helmAlertRules)).toBe(set.get(OUTPUT.alertRules));
      for (const key of KEYS) expect(set.get(OUTPUT.helmDashboard(key))).toBe(set.get(OUTPUT.dashboard(key)));
    }
    expect(filesOf({ overrides }).get(OUTPUT.helmAlertRules)).not.toBe(files.get(OUTPUT.helmAlertRules));
  });

  it("Chart.yaml: apiVersion v2, version and appVersion the package's", () => {
    expect(parse(files.get(OUTPUT.helmChart) ?? '')).toMatchObject({
      apiVersion: 'v2',
      name: 'workqueue-doctor',
      type: 'application',
      version: VERSION,
      appVersion: VERSION,
    });
  });

  it('values.yaml: the defaults of the values definition, which values.schema.json accepts', () => {
    const values = parse(files.get(OUTPUT.helmValues) ?? '') as unknown;
    expect(values).toEqual(defaultsOf(CHART_VALUES));
    const validate = ajv.compile(JSON.parse(files.get(OUTPUT.helmValuesSchema) ?? '{}') as object);
    expect(validate(values), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...(values as object), mode: 'sidecar' })).toBe(false);
    expect(validate({ ...(values as object), replicaCount: 2 })).toBe(false);
  });

  it('README.md: a row for every value, with its type and default', () => {
    const readme = files.get(OUTPUT.helmReadme) ?? '';
    const rows = valuesOf(CHART_VALUES);
    expect(rows.length).toBeGreaterThan(30);
    for (const { key, value } of rows) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${key}\` |`));
      expect(row, key).toBeDefined();
      expect(row).toContain(`\`${JSON.stringify(value.default).replaceAll('|', '\\|')}\``);
    }
  });
});

describe('generate --check and the chart', () => {
  const out = mkdtempSync(join(tmpdir(), 'wqd-helm-generate-'));
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('names a stray file under files/ and a stale values.yaml', async () => {
    expect((await runCli('generate', '--out', out)).code).toBe(EXIT.ok);
    writeFileSync(join(out, OUTPUT.helmDashboardsDir, 'removed-dashboard.json'), '{}\n');
    writeFileSync(join(out, OUTPUT.helmValues), 'mode: standalone\n');
    const stale = await runCli('generate', '--out', out, '--check');
    expect(stale.code).toBe(EXIT.findings);
    expect(stale.stderr).toContain(`not generated (remove it): ${OUTPUT.helmDashboardsDir}/removed-dashboard.json`);
    expect(stale.stderr).toContain(`stale: ${OUTPUT.helmValues}`);
  });
});

describe('the configuration schema', () => {
  const full = ajv.compile(configFileSchema() as object);

  it('accepts the documented example files', () => {
    for (const path of ['deploy/config-example.yaml', 'deploy/standalone/config.yaml']) {
      const config = parse(readFileSync(new URL(path, ROOT), 'utf8')) as unknown;
      expect(full(config), `${path}: ${JSON.stringify(full.errors)}`).toBe(true);
      expect(loaderAccepts(config), path).toBe(true);
    }
  });

  it('has every file setting at its dotted path, and leaves out the keys asked', () => {
    const at = (schema: JsonSchema, key: string): JsonSchema | undefined =>
      key
        .split('.')
        .reduce<JsonSchema | undefined>(
          (node, part) => (node?.['properties'] as Record<string, JsonSchema> | undefined)?.[part],
          schema,
        );
    const schema = configFileSchema();
    for (const setting of SETTINGS.filter((s) => s.flagOnly !== true))
      expect(at(schema, setting.key), setting.key).toBeDefined();
    expect(at(schema, 'demo')).toBeUndefined();
    const chart = configFileSchema(CHART_OWNED_CONFIG_KEYS);
    for (const key of CHART_OWNED_CONFIG_KEYS) expect(at(chart, key), key).toBeUndefined();
    expect(at(chart, 'kubernetes.namespaces')).toBeDefined();
  });

  it.each<[string, unknown]>([
    ['durations', { scrape: { interval: '1m30s', retention: '1h' }, evaluation: { interval: '15s' } }],
    ['a namespace list as one string', { kubernetes: { namespaces: 'a, b' } }],
    ['header mappings', { prometheus: { headers: { 'X-Scope-OrgID': 'team-a' } } }],
    ['header lists', { prometheus: { headers: ['X-Scope-OrgID: team-a'] } }],
    ['memory sizes', { memory: { limit: '192Mi' } }],
    ['an unlimited memory', { memory: { limit: 'max' } }],
    ['placement labels', { clusterLabel: 'cluster', namespaceLabel: 'namespace' }],
    ['rule overrides', { rules: { WorkqueueBacklog: { thresholds: { minDepth: 5 }, for: '10m' } } }],
    [
      'queue overrides',
      {
        queues: [
          { controller: 'legacy', silenced: true },
          { name: 'pod', rules: {} },
        ],
      },
    ],
    ['sections and settings left empty', { api: null, scrape: { interval: null }, rules: { WorkqueueBacklog: null } }],
  ])('accepts %s, as the loader does', (_what, config) => {
    expect(full(config), JSON.stringify(full.errors)).toBe(true);
    expect(loaderAccepts(config)).toBe(true);
  });

  it.each<[string, unknown]>([
    ['a duration without a unit', { scrape: { interval: 15 } }],
    ['a malformed duration', { scrape: { interval: '5x' } }],
    ['an unknown log level', { logLevel: 'loud' }],
    ['an unknown scheme', { kubernetes: { scheme: 'ftp' } }],
    ['a port out of range', { kubernetes: { port: 70_000 } }],
    ['a label name with a dash', { clusterLabel: 'k8s-cluster' }],
    ['a URL that is not http', { prometheus: { url: 'ftp://prometheus' } }],
    ['a memory size in apples', { memory: { limit: '12 apples' } }],
    ['a negative integer limit', { scrape: { concurrency: -1 } }],
    ['an unknown key', { scrap: { interval: '15s' } }],
    ['an unknown rule', { rules: { WorkqueueBackog: {} } }],
    ['an unknown threshold', { rules: { WorkqueueBacklog: { thresholds: { minDept: 1 } } } }],
    ['a threshold below its range', { rules: { WorkqueueBacklog: { thresholds: { minDepth: -1 } } } }],
    ['a non-boolean disabled', { rules: { WorkqueueBacklog: { disabled: 'yes' } } }],
    ['a queue entry without a name or controller', { queues: [{ silenced: true }] }],
    ['an unknown queue entry key', { queues: [{ name: 'pod', silence: true }] }],
    ['a queue entry whose name and controller are null', { queues: [{ name: null, controller: null }] }],
    ['a null rule duration', { rules: { WorkqueueBacklog: { for: null } } }],
  ])('refuses %s, as the loader does', (_what, config) => {
    expect(full(config)).toBe(false);
    expect(loaderAccepts(config)).toBe(false);
  });
});
