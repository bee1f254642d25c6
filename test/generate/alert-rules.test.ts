/**
 * The generated alert rules and Alertmanager example: accepted by the real promtool and amtool, one alert
 * per diagnosis carrying the definition's condition, duration and severity, annotations that measure the
 * alert's own series, and runbooks derived from the definitions.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { conditionWith, EVALUATION_INTERVAL_MS } from '../../src/diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL, runbookUrl } from '../../src/diagnosis/runbook.js';
import { signal } from '../../src/diagnosis/signals.js';
import { descriptionSignals, summarySignals } from '../../src/generate/alert-evidence.js';
import { INHIBITIONS } from '../../src/generate/alertmanager.js';
import { analyseRule } from '../../src/generate/condition-analysis.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { metricsOf } from '../../src/promql/expr.js';
import { formatDuration, renderPromQL } from '../../src/promql/render.js';
import { requireTool } from '../support/prometheus.js';
import {
  alertRulesOf,
  annotationQueries,
  expandRecordings,
  filesByPath,
  recordingRulesOf,
  ruleFileOf,
  runTool as run,
  tokensOf,
} from './helpers.js';

const files = filesByPath();
const work = mkdtempSync(join(tmpdir(), 'wqd-generate-rules-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function writeGenerated(path: string): string {
  const file = join(work, path.replace(/\//g, '_'));
  writeFileSync(file, files.get(path) ?? '');
  return file;
}

describe('alert rules', () => {
  it('pass `promtool check rules` (the generated file and the committed one)', async () => {
    const promtool = requireTool('promtool');
    const generated = await run(promtool, ['check', 'rules', writeGenerated(OUTPUT.alertRules)]);
    const ruleCount = ruleSettings().length + recordingRulesOf(ruleFileOf(files)).length;
    expect(generated.output).toContain(`SUCCESS: ${ruleCount} rules found`);
    expect(generated.code).toBe(0);
    const committed = await run(promtool, ['check', 'rules', OUTPUT.alertRules]);
    expect(committed.output).toContain('SUCCESS');
    expect(committed.code).toBe(0);
  });

  it('hold the recording rules, then one alert per diagnosis with its condition, duration, severity and runbook', () => {
    const file = ruleFileOf(files);
    expect(file.groups).toHaveLength(1);
    const group = file.groups[0]!;
    expect(group.name).toBe('workqueue-doctor');
    expect(group.interval).toBe(formatDuration(EVALUATION_INTERVAL_MS));
    const settings = ruleSettings();
    const alerts = alertRulesOf(file);
    const recordings = recordingRulesOf(file);
    // Recordings first, so each alert reads the recordings of its own evaluation.
    expect(group.rules.map((r) => ('record' in r ? 'record' : 'alert'))).toEqual([
      ...recordings.map(() => 'record'),
      ...alerts.map(() => 'alert'),
    ]);
    expect(alerts.map((r) => r.alert)).toEqual(settings.map((s) => s.rule.id));
    for (const s of settings) {
      const alert = alerts.find((r) => r.alert === s.rule.id)!;
      // Written out, the alert reads the rule's condition: the same operands and operators in the same order.
      expect(tokensOf(expandRecordings(alert.expr, recordings))).toBe(
        tokensOf(renderPromQL(conditionWith(s.rule, s.thresholds))),
      );
      expect(alert.for).toBe(formatDuration(s.forMs));
      expect(alert.labels).toEqual({ severity: s.rule.severity });
      expect(alert.annotations.runbook_url).toBe(runbookUrl(DEFAULT_RUNBOOK_BASE_URL, s.rule.id));
      expect(Object.keys(alert.annotations)).toEqual(['summary', 'description', 'runbook_url']);
      expect(alert.annotations.description).toContain(s.rule.text.meaning);
    }
  });

  it('describe each alert with queries of its evidence narrowed to the alert series', () => {
    const backlog = alertRulesOf(ruleFileOf(files)).find((r) => r.alert === 'WorkqueueBacklog')!;
    expect(backlog.annotations.summary).toContain('{{ $labels.name }}');
    // The decisive evidence first, measured for the alert's series; never `$value` (the condition's output).
    expect(backlog.annotations.summary).toContain(
      'printf `queue:workqueue_depth:min_over_time1m{job=%q, instance=%q, controller=%q, name=%q}` $labels.job $labels.instance $labels.controller $labels.name | query }}: depth (floor of the last minute) ',
    );
    expect(backlog.annotations.summary).toContain(
      'printf `queue:workqueue_depth:deriv10m{job=%q, instance=%q, controller=%q, name=%q}` $labels.job $labels.instance $labels.controller $labels.name | query }}, depth growth ',
    );
    expect(backlog.annotations.summary).not.toContain('$value');
    const queries = annotationQueries(backlog.annotations.description ?? '', (i) => ['j', 'i', 'c', 'n'][i % 4] ?? '');
    expect(queries).toHaveLength(signalCount('WorkqueueBacklog'));
    // A recorded signal is read from its recorded series.
    expect(queries[0]).toBe('queue:workqueue_depth:min_over_time1m{job="j", instance="i", controller="c", name="n"}');
    // Controller-level evidence is narrowed by the labels controller-level series carry (no `name`).
    expect(backlog.annotations.description).toContain(
      'printf `controller_runtime_max_concurrent_reconciles{job=%q, instance=%q, controller=%q}` $labels.job $labels.instance $labels.controller | query',
    );
  });

  it('keep the Alertmanager example valid for `amtool check-config`, routing on severity and inhibiting', async () => {
    const amtool = requireTool('amtool');
    const file = writeGenerated(OUTPUT.alertmanagerExample);
    const result = await run(amtool, ['check-config', file]);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
    const config = parse(files.get(OUTPUT.alertmanagerExample) ?? '') as {
      route: { routes: Array<{ matchers: string[] }> };
      inhibit_rules: Array<{ source_matchers: string[]; target_matchers: string[]; equal: string[] }>;
    };
    expect(config.route.routes.map((r) => r.matchers)).toEqual([['severity="critical"'], ['severity="warning"']]);
    expect(config.inhibit_rules).toEqual(
      INHIBITIONS.map((i) => ({
        source_matchers: [`alertname="${i.source}"`],
        target_matchers: [`alertname="${i.target}"`],
        equal: ['job', 'instance', 'controller', 'name'],
      })),
    );
    expect(INHIBITIONS.map((i) => [i.source, i.target])).toEqual([
      ['WorkqueueStuckWorker', 'WorkqueueSlowWork'],
      ['WorkqueueBacklog', 'WorkqueueSaturated'],
    ]);
  });
});

describe('alert annotations, rendered by `promtool test rules`', () => {
  it('measure the alert series of either label schema with the query function', async () => {
    const promtool = requireTool('promtool');
    const stuck = ruleSettings().find((s) => s.rule.id === 'WorkqueueStuckWorker')!;
    const analysis = analyseRule(stuck);
    const rulesFile = writeGenerated(OUTPUT.alertRules);
    // A sync that never returns: both ages grow one second per second.
    const runtime = 'job="j", instance="i", controller="c", name="n"';
    const componentBase = 'job="j", instance="k", name="m"';
    const series = [
      { series: `workqueue_longest_running_processor_seconds{${runtime}}`, values: '0+60x30' },
      { series: `workqueue_unfinished_work_seconds{${runtime}}`, values: '0+60x30' },
      { series: 'controller_runtime_max_concurrent_reconciles{job="j", instance="i", controller="c"}', values: '4x30' },
      { series: `workqueue_longest_running_processor_seconds{${componentBase}}`, values: '0+60x30' },
      { series: `workqueue_unfinished_work_seconds{${componentBase}}`, values: '0+120x30' },
    ];
    // What the annotation must print for each evidence signal, per queue, given these series.
    const measured = (schema: 'runtime' | 'componentBase'): Record<string, string> => ({
      longestRunning: '20m 0s',
      longestRunningGrowth: '100%',
      unfinishedWork: schema === 'runtime' ? '20m 0s' : '40m 0s',
      unfinishedWorkGrowth: schema === 'runtime' ? '1 workers' : '2 workers',
      maxWorkers: schema === 'runtime' ? '4 workers' : 'no data',
    });
    const present = new Set(series.map((s) => s.series.slice(0, s.series.indexOf('{'))));
    const description = (schema: 'runtime' | 'componentBase'): string =>
      [
        stuck.rule.text.meaning,
        '',
        `Held for ${formatDuration(stuck.forMs)}: ${analysis.clauses.map((c) => c.text).join('; ')}.`,
        '',
        'Measured now:',
        ...descriptionSignals(analysis).map((id) => {
          const value = measured(schema)[id];
          if (value === undefined && metricsOf(signal(id).expr).every((m) => present.has(m))) {
            throw new Error(`evidence ${id} has input series: add its expected value`);
          }
          return `- ${signal(id).title}: ${value ?? 'no data'}`;
        }),
      ].join('\n');
    // The summary: the decisive evidence, decisive signals in the order of the rule's evidence.
    // The summary: the decisive evidence (the age alone decides); the growths are in the description.
    expect(summarySignals(analysis)).toEqual(['longestRunning']);
    const valueText = 'longest-running sync 20m 0s';
    const runbook = runbookUrl(DEFAULT_RUNBOOK_BASE_URL, stuck.rule.id);
    const test = {
      rule_files: [rulesFile],
      evaluation_interval: formatDuration(EVALUATION_INTERVAL_MS),
      tests: [
        {
          interval: '1m',
          input_series: series,
          alert_rule_test: [
            {
              eval_time: '20m',
              alertname: stuck.rule.id,
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', job: 'j', instance: 'i', controller: 'c', name: 'n' },
                  exp_annotations: {
                    summary: `${stuck.rule.title} for queue n (controller c) on j/i: ${valueText}.`,
                    description: description('runtime'),
                    runbook_url: runbook,
                  },
                },
                {
                  exp_labels: { severity: 'critical', job: 'j', instance: 'k', name: 'm' },
                  exp_annotations: {
                    summary: `${stuck.rule.title} for queue m on j/k: ${valueText}.`,
                    description: description('componentBase'),
                    runbook_url: runbook,
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    const testFile = join(work, 'stuck-worker.test.yaml');
    writeFileSync(testFile, stringify(test));
    const result = await run(promtool, ['test', 'rules', testFile]);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
  });
});

describe('runbooks', () => {
  it('exist for every diagnosis and carry its thresholds, confirm queries, alert expression and texts', () => {
    for (const s of ruleSettings()) {
      const text = files.get(OUTPUT.runbook(s.rule.id)) ?? '';
      expect(text.startsWith(`# ${s.rule.id}: ${s.rule.title}\n`)).toBe(true);
      expect(text).toContain(`**Severity:** ${s.rule.severity}`);
      expect(text).toContain(`**${formatDuration(s.forMs)}**`);
      for (const name of Object.keys(s.rule.thresholds)) expect(text).toContain(`| \`${name}\` |`);
      expect(text).toContain(s.rule.text.meaning);
      expect(text).toContain(`\`\`\`promql\n${renderPromQL(conditionWith(s.rule, s.thresholds))}\n\`\`\``);
      for (const step of s.rule.text.confirm) {
        expect(text).toContain(step.text);
        for (const id of step.signals) expect(text).toContain(`**${signal(id).title}**`);
      }
      expect(text).not.toContain('n/a (');
      expect(text.endsWith('\n')).toBe(true);
    }
  });
});

describe('runbook conditions in words', () => {
  it('put a signal held to a floor in words, not in PromQL', () => {
    const text = files.get(OUTPUT.runbook('WorkqueueHotLoop')) ?? '';
    expect(text).toContain('Depth (median, served first) ≤ max(Busy workers, 1) × 10 items (maxWaitingPerWorker)');
    expect(text).not.toMatch(/- .*`clamp_min\(/);
  });
});

function signalCount(id: string): number {
  return ruleSettings().find((s) => s.rule.id === id)?.rule.evidence.length ?? 0;
}
