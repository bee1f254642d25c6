/**
 * The promtool unit tests `generate` writes (alerts/tests/), and the alert texts they pin:
 * - `promtool test rules alerts/tests/*.yaml` passes from the repository root on the committed files, and
 *   on the files generated for a fleet scope (selector, cluster and namespace labels);
 * - each alert has a scenario where it fires, with labels and every annotation expected, and one where it
 *   must not;
 * - no alert text prints a milli-prefixed count or rate: the templates format counts and rates only through
 *   the readable-number action, and the annotations rendered for the tests have no such prefix;
 * - the port of Go's `%g` and Prometheus's template functions prints what Prometheus prints, value for value
 *   (promtool renders a spread of values from 1e-7 to 1e7, ties and negatives included).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { generateAllArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import {
  goFormatG,
  humanize,
  humanizeDuration,
  humanizePercentage,
  readableNumber,
  readableNumberAction,
} from '../../src/generate/go-format.js';
import type { PromtoolTestFile } from '../../src/generate/promtool-tests.js';
import { parseSelector } from '../../src/promql/selector.js';
import { tempDir } from '../simulate/helpers.js';
import { requireTool } from '../support/prometheus.js';
import { alertRulesOf, filesByPath, ruleFileOf, runTool } from './helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const work = tempDir('wqd-alert-tests-');
afterAll(() => work.remove());

const testFiles = (): string[] =>
  readdirSync(join(ROOT, OUTPUT.alertTestsDir))
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => `${OUTPUT.alertTestsDir}/${name}`);

/** A milli- (or smaller) prefix after a number, before a count or rate unit. */
const MILLI_COUNT_OR_RATE = /\d[munpfazy](\/s| items?| workers?)/;

describe('generated promtool tests', () => {
  it('pass under promtool from the repository root', async () => {
    const promtool = requireTool('promtool');
    const result = await runTool(promtool, ['test', 'rules', ...testFiles().map((f) => join(ROOT, f))]);
    expect(result.code, result.output).toBe(0);
    expect(result.output.match(/SUCCESS/g)).toHaveLength(testFiles().length);
  }, 120_000);

  it('have, per alert, a scenario where it fires with labels and annotations, and one where it must not', () => {
    const alerts = alertRulesOf(ruleFileOf(filesByPath())).map((r) => r.alert);
    expect(testFiles()).toEqual([...new Set(alerts)].sort().map((id) => OUTPUT.alertTest(id)));
    for (const path of testFiles()) {
      const file = parse(readFileSync(join(ROOT, path), 'utf8')) as PromtoolTestFile;
      expect(file.rule_files).toEqual(['../workqueue-doctor.rules.yaml']);
      const [fires, quiet] = file.tests;
      const firing = fires?.alert_rule_test?.[0]?.exp_alerts ?? [];
      expect(firing.length, path).toBeGreaterThan(0);
      for (const alert of firing) {
        expect(Object.keys(alert.exp_annotations ?? {}).sort()).toEqual(['description', 'runbook_url', 'summary']);
        for (const text of Object.values(alert.exp_annotations ?? {})) expect(text).not.toMatch(MILLI_COUNT_OR_RATE);
      }
      expect(quiet?.alert_rule_test?.[0]?.exp_alerts).toEqual([]);
      // Only the series the alert reads: far fewer than a scenario's hundreds.
      expect(fires?.input_series.length ?? 0).toBeLessThan(40);
    }
  });

  it('pass for a fleet scope, annotations placed with cluster and namespace', async () => {
    const files = await generateAllArtifacts({
      scope: {
        selector: parseSelector('job=~"workqueue-doctor-sim|other"'),
        clusterLabel: 'cluster',
        namespaceLabel: 'namespace',
      },
    });
    for (const f of files.filter((f) => f.path === OUTPUT.alertRules || f.path.startsWith(OUTPUT.alertTestsDir))) {
      const path = join(work.path, f.path);
      mkdirFor(path);
      writeFileSync(path, f.content);
    }
    const paths = files
      .filter((f) => f.path.startsWith(`${OUTPUT.alertTestsDir}/`))
      .map((f) => join(work.path, f.path));
    const result = await runTool(requireTool('promtool'), ['test', 'rules', ...paths]);
    expect(result.code, result.output).toBe(0);
  }, 120_000);
});

describe('alert texts', () => {
  it('format counts and rates only through the readable-number action (no humanize below 1)', () => {
    const rules = alertRulesOf(ruleFileOf(filesByPath()));
    for (const rule of rules) {
      for (const text of Object.values(rule.annotations)) {
        const withoutReadable = text.split(readableNumberAction('$v')).join('');
        expect(withoutReadable, rule.alert).not.toMatch(/humanize[^DP]|humanize }}|\$value/);
      }
    }
  });

  it('print no milli-prefix on counts and rates from 0.001 to 1e6', () => {
    for (const v of [0.001, 0.0031, 0.2222, 0.8214, 0.999, 1, 222.2, 1234.5, 999_999]) {
      expect(readableNumber(v)).not.toMatch(/[munpfazy]$/);
    }
    expect(readableNumber(0.2222)).toBe('0.22');
    expect(readableNumber(0.8214)).toBe('0.82');
    expect(readableNumber(222.2)).toBe('222.2');
    expect(readableNumber(1_234_567)).toBe('1.235M');
    expect(readableNumber(-13.1)).toBe('-13.1');
  });
});

/** Values that exercise every branch: zero, ties for half-even rounding, exponents, prefixes, negatives. */
const VALUES = [
  0, 1e-7, 2.5e-7, 0.00001, 0.0001234, 0.001, 0.0031, 0.125, 0.135, 0.2222, 0.5, 0.8214, 0.995, 0.999, 1, 1.5, 2.5,
  9.9995, 12.345, 59.99, 61, 100, 222.25, 999.95, 1000, 1234.5, 3600.5, 90061, 999_999, 1_234_567, 1e7, -0.5, -13.1,
  -1234, -0.0042, -90061,
];

describe('the template functions port', () => {
  it('prints what Prometheus prints', async () => {
    const annotations = {
      readable: readableNumberAction('$value'),
      g2: '{{ printf "%.2g" $value }}',
      g4: '{{ printf "%.4g" $value }}',
      humanize: '{{ humanize $value }}',
      duration: '{{ humanizeDuration $value }}',
      percentage: '{{ humanizePercentage $value }}',
    };
    const rules = { groups: [{ name: 'port', rules: [{ alert: 'Value', expr: 'value', annotations }] }] };
    writeFileSync(join(work.path, 'port.rules.yaml'), stringify(rules));
    const test: PromtoolTestFile = {
      rule_files: ['port.rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          name: 'port',
          interval: '1m',
          input_series: VALUES.map((v, i) => ({ series: `value{i="${i}"}`, values: String(v) })),
          alert_rule_test: [
            {
              eval_time: '0m',
              alertname: 'Value',
              exp_alerts: VALUES.map((v, i) => ({
                exp_labels: { i: String(i) },
                exp_annotations: {
                  readable: readableNumber(v),
                  g2: goFormatG(v, 2),
                  g4: goFormatG(v, 4),
                  humanize: humanize(v),
                  duration: humanizeDuration(v),
                  percentage: humanizePercentage(v),
                },
              })),
            },
          ],
        },
      ],
    };
    const path = join(work.path, 'port.test.yaml');
    writeFileSync(path, stringify(test));
    const result = await runTool(requireTool('promtool'), ['test', 'rules', path]);
    expect(result.code, result.output).toBe(0);
  }, 60_000);
});

function mkdirFor(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
}
