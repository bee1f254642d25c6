/**
 * End to end through real components: a live simulated hot loop serves /metrics, a real Prometheus scrapes it
 * every second and evaluates the generated alert rules, and the alert reaches a real Alertmanager running the
 * generated example configuration (routes on `severity`; receivers without webhooks, so nothing leaves the
 * machine). The alert carries the queue's identity from the ground truth, its severity, its annotations
 * rendered for the queue (summary naming it, description with the evidence measured on its series) and its
 * runbook link, and is routed to the receiver of its severity; no alert the truth does not
 * expect or allow arrives.
 *
 * Test-only changes to the generated rules, so that it happens in seconds: every rule's `for` is shortened
 * with the user-facing overrides format, and the group is evaluated every second instead of every 30 s.
 * Thresholds and expressions are the generated ones; the 5-minute rate windows work over a few 1 s samples
 * because rate() extrapolates, and the medians of two-minute rates from the first whole minute after two scrapes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseRuleOverrides } from '../../src/config/rule-overrides.js';
import { RULES, rule } from '../../src/diagnosis/catalog.js';
import { DEFAULT_RUNBOOK_BASE_URL, runbookUrl } from '../../src/diagnosis/runbook.js';
import { signal } from '../../src/diagnosis/signals.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { type LiveSimulation, startLiveSimulation } from '../../src/simulate/index.js';
import { tempDir } from '../simulate/helpers.js';
import { type AlertmanagerAlert, type AlertmanagerHandle, startAlertmanager } from '../support/alertmanager.js';
import { type PrometheusHandle, removeTempDirs, requireTool, startPrometheus } from '../support/prometheus.js';
import { alertRulesOf, filesByPath, type RuleFileYaml, ruleFileOf, runTool } from './helpers.js';

const SCENARIO = 'hot-loop-status-write';
const ALERT = 'WorkqueueHotLoop';
/** The shortened `for` of every rule, in the overrides format a user writes. */
const SHORT_FOR = '5s';
/**
 * The hot loop's rates are medians of two-minute slices ending on whole minutes: the first is read at the first whole
 * minute after two scrapes, up to a minute after the loop is first scraped; then the shortened `for`.
 */
const WAIT_FOR_ALERT_MS = 110_000;

const work = tempDir('wqd-alertmanager-e2e-');
let live: LiveSimulation | undefined;
let alertmanager: AlertmanagerHandle | undefined;
let prometheus: PrometheusHandle | undefined;

/**
 * Starts Alertmanager, the live simulation and Prometheus. Called from the test itself, so a missing tool
 * fails the test with what to install.
 */
async function start(): Promise<void> {
  requireTool('prometheus-alertmanager');
  const amtool = requireTool('amtool');
  requireTool('prometheus');

  // The generated Alertmanager example, its webhook receivers replaced by receivers that notify nobody.
  const example = parse(filesByPath().get(OUTPUT.alertmanagerExample) ?? '') as {
    receivers: Array<{ name: string }>;
  };
  const amConfig = stringify({ ...example, receivers: example.receivers.map((r) => ({ name: r.name })) });
  const amConfigFile = join(work.path, 'alertmanager.yml');
  writeFileSync(amConfigFile, amConfig);
  const check = await runTool(amtool, ['check-config', amConfigFile]);
  expect(check.code, check.output).toBe(0);
  alertmanager = await startAlertmanager({ configYaml: amConfig });

  live = await startLiveSimulation({ scenario: SCENARIO, listen: '127.0.0.1:0' });
  const target = new URL(live.url);

  const overrides = parseRuleOverrides(
    Object.fromEntries(RULES.map((r) => [r.id, { for: SHORT_FOR }])),
    'test overrides: rules',
  );
  const rules = parse(filesByPath(overrides).get(OUTPUT.alertRules) ?? '') as RuleFileYaml;
  // Only the durations differ from what `generate` writes: same alerts, same expressions (thresholds).
  const generated = ruleFileOf(filesByPath());
  const exprs = (file: RuleFileYaml) =>
    file.groups.flatMap((g) => g.rules.map((r) => ['record' in r ? r.record : r.alert, r.expr]));
  expect(exprs(rules)).toEqual(exprs(generated));
  expect(new Set(alertRulesOf(rules).map((r) => r.for))).toEqual(new Set([SHORT_FOR]));
  for (const group of rules.groups) group.interval = '1s';
  const rulesFile = join(work.path, 'rules.yaml');
  writeFileSync(rulesFile, stringify(rules, { lineWidth: 0 }));

  prometheus = await startPrometheus({
    configYaml: stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      rule_files: [rulesFile],
      alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanager.address] }] }] },
      scrape_configs: [
        {
          // The target named as the truth names it, so the alert's identity is the truth's.
          job_name: live.truth.job,
          metrics_path: target.pathname,
          static_configs: [{ targets: [target.host] }],
          relabel_configs: [{ target_label: 'instance', replacement: live.truth.instance }],
        },
      ],
    }),
    extraArgs: ['--rules.alert.resend-delay=1s'],
  });
}

afterAll(async () => {
  await prometheus?.stop();
  await alertmanager?.stop();
  await live?.stop();
  removeTempDirs();
  work.remove();
});

describe('generated alert rules through Prometheus to Alertmanager', () => {
  it(
    `deliver ${ALERT} for the live hot loop, labelled, annotated and routed by severity`,
    async () => {
      await start();
      const am = alertmanager!;
      const truth = live!.truth;
      const seen = new Map<string, AlertmanagerAlert>();
      let arrived: AlertmanagerAlert[] = [];
      const deadline = Date.now() + WAIT_FOR_ALERT_MS;
      while (arrived.length === 0) {
        for (const a of await am.alerts()) seen.set(a.fingerprint, a);
        arrived = await am.alerts([`alertname="${ALERT}"`]);
        if (arrived.length > 0) break;
        if (Date.now() > deadline) {
          const names = [...seen.values()].map((a) => a.labels.alertname);
          throw new Error(
            `${ALERT} did not reach Alertmanager in ${WAIT_FOR_ALERT_MS} ms; arrived: [${names.join(', ')}]`,
          );
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      for (const a of await am.alerts()) seen.set(a.fingerprint, a);

      const queue = truth.queues.find((q) => q.expected.includes(ALERT));
      expect(queue?.name).toBe('ingress-status');
      expect(arrived).toHaveLength(1);
      const alert = arrived[0]!;
      expect(alert.labels).toEqual({
        alertname: ALERT,
        severity: 'warning',
        job: truth.job,
        instance: truth.instance,
        name: queue?.name,
        controller: queue?.controller,
      });
      expect(alert.status.state).toBe('active');
      expect(alert.receivers.map((r) => r.name)).toEqual(['workqueue-ticket']);
      expect(alert.annotations.summary).toContain(`queue ${queue?.name} (controller ${queue?.controller})`);
      // The description is rendered for this alert: the rule's meaning, the shortened duration, and the
      // evidence measured on this queue's own series (the signals of the status-write loop have values).
      const description = alert.annotations.description ?? '';
      expect(description).toContain(rule(ALERT).text.meaning);
      expect(description).toContain(`Held for ${SHORT_FOR}:`);
      for (const id of ['addRateMedian', 'depthAvg', 'writeRateMedian'] as const) {
        expect(rule(ALERT).evidence).toContain(id);
        expect(description).toMatch(new RegExp(`^- ${escapeRegExp(signal(id).title)}: \\d`, 'm'));
      }
      expect(alert.annotations.runbook_url).toBe(runbookUrl(DEFAULT_RUNBOOK_BASE_URL, ALERT));
      expect(alert.annotations.runbook_url?.endsWith(`/${ALERT}.md`)).toBe(true);

      // The unfiltered listing (which the check below reads) holds the alert too.
      expect(seen.get(alert.fingerprint)?.labels).toEqual(alert.labels);
      const acceptable = new Set<string>(truth.queues.flatMap((q) => [...q.expected, ...q.allowed]));
      const unexpected = [...seen.values()].filter((a) => !acceptable.has(a.labels.alertname ?? ''));
      expect(unexpected.map((a) => a.labels)).toEqual([]);
    },
    WAIT_FOR_ALERT_MS + 60_000,
  );
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
