/**
 * A fresh service fires a rule no earlier than a Prometheus evaluating the generated rule over the same target.
 * Side by side: a live simulated hot loop, a real Prometheus scraping it every 2 s with the rules `generate`
 * writes from a configuration file, and, once Prometheus has scraped the target, a fresh `serve` with the same
 * file scraping it every 2 s. The file shortens the rule's `for` to 45 s (as a user may), so the test takes a
 * minute; the only test-only change is the rule group's interval, 5 s instead of 30 s, so that Prometheus fires
 * close to what its data allows.
 *
 * Compared is when each may fire on its data: the service's firing time against Prometheus's earliest pending
 * start (`ALERTS_FOR_STATE`) plus the `for`. The two onsets differ by how each saw the first seconds of data:
 * Prometheus starts pending at its first evaluation tick after the condition holds on the samples it had then,
 * never revised; the service judges `for` on its 30-second grid with every sample of each step, including a
 * scrape stamped before the step that was stored after it, and its scrapes fall at other moments than
 * Prometheus's over windows of a few samples. So the service's onset may precede Prometheus's by up to one of
 * its grid steps: that is the slack. A service that shortened `for` to its history (the fault this guards
 * against) fires within seconds of its start, a whole `for` early, and fails both this and the check that it
 * fires no sooner than one `for` after its start.
 *
 * Before firing, the service shows the condition as pending, with the time it fires if it keeps holding; its
 * `since` is never before its first scrape, nor its firing within one `for` of its start.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { Finding, Report } from '../../src/diagnosis/report.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { type LiveSimulation, startLiveSimulation } from '../../src/simulate/index.js';
import { type RuleFileYaml, runTool } from '../generate/helpers.js';
import { tempDir } from '../simulate/helpers.js';
import { type CliProcess, cliEntry, spawnCli } from '../support/cli-process.js';
import { type PrometheusHandle, removeTempDirs, requireTool, startPrometheus } from '../support/prometheus.js';

const SCENARIO = 'hot-loop-status-write';
const ALERT = 'WorkqueueHotLoop';
/** The rule's `for` in the shared configuration file: long enough that firing at once would show. */
const FOR = '45s';
const FOR_MS = 45_000;
/** Prometheus's rule group interval in this test. */
const GROUP_INTERVAL = '5s';
/** One step of the service's 30-second grid (see above), written here rather than read from the engine. */
const ONSET_SLACK_MS = 30_000;
const WAIT_MS = 150_000;

const work = tempDir('wqd-fires-after-prometheus-');
let live: LiveSimulation | undefined;
let prometheus: PrometheusHandle | undefined;
let serve: CliProcess | undefined;

afterAll(async () => {
  await serve?.stop();
  await prometheus?.stop();
  await live?.stop();
  removeTempDirs();
  work.remove();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The service's finding of the alert's rule, if any. */
async function serviceFinding(origin: string): Promise<Finding | undefined> {
  const res = await fetch(`${origin}/api/v1/diagnosis`);
  if (res.status !== 200) return undefined;
  const report = (await res.json()) as Report;
  return report.queues.flatMap((q) => q.findings).find((f) => f.rule === ALERT);
}

/**
 * When Prometheus's alert first became active (its earliest pending start, `ALERTS_FOR_STATE`'s value), once it
 * fires; undefined before. Its firing time is that plus the `for`: what its data allows, whenever a loaded
 * machine let it run.
 */
async function prometheusActiveAt(prom: PrometheusHandle): Promise<number | undefined> {
  const now = Date.now() / 1000;
  const firing = await prom.query(`ALERTS{alertname="${ALERT}",alertstate="firing"}`, now);
  if (firing.length === 0) return undefined;
  // The earliest pending start: a scrape lost to a loaded machine may have reset it since.
  const state = await prom.query(`min_over_time(ALERTS_FOR_STATE{alertname="${ALERT}"}[10m])`, now);
  const activeAtSec = state[0]?.value;
  return activeAtSec === undefined ? undefined : activeAtSec * 1000;
}

describe('a fresh service beside Prometheus', () => {
  it(`fires ${ALERT} no earlier than Prometheus with the generated rule`, { timeout: WAIT_MS + 60_000 }, async () => {
    requireTool('prometheus');
    const configFile = join(work.path, 'config.yaml');
    writeFileSync(configFile, stringify({ rules: { [ALERT]: { for: FOR } } }));
    const out = join(work.path, 'generated');
    const generated = await runTool(process.execPath, [
      ...cliEntry(),
      'generate',
      '--config',
      configFile,
      '--out',
      out,
    ]);
    expect(generated.code, generated.output).toBe(0);
    const rules = parse(readFileSync(join(out, OUTPUT.alertRules), 'utf8')) as RuleFileYaml;
    const alert = rules.groups.flatMap((g) => g.rules).find((r) => 'alert' in r && r.alert === ALERT);
    expect(alert && 'for' in alert ? alert.for : undefined).toBe(FOR);
    for (const group of rules.groups) group.interval = GROUP_INTERVAL;
    const rulesFile = join(work.path, 'rules.yaml');
    writeFileSync(rulesFile, stringify(rules, { lineWidth: 0 }));

    live = await startLiveSimulation({ scenario: SCENARIO, listen: '127.0.0.1:0' });
    const target = new URL(live.url);
    const startedWaitingMs = Date.now();
    prometheus = await startPrometheus({
      configYaml: stringify({
        global: { scrape_interval: '2s', scrape_timeout: '1900ms', evaluation_interval: GROUP_INTERVAL },
        rule_files: [rulesFile],
        scrape_configs: [
          { job_name: 'fires-after', metrics_path: target.pathname, static_configs: [{ targets: [target.host] }] },
        ],
      }),
    });
    // Prometheus has the target's data first: the service is the fresh one, and may fire no earlier.
    const prom = prometheus;
    while ((await prom.query('up{job="fires-after"} == 1', Date.now() / 1000)).length === 0) {
      expect(Date.now() - startedWaitingMs, `Prometheus never scraped the target: ${prom.output()}`).toBeLessThan(
        WAIT_MS,
      );
      await sleep(200);
    }
    const startedMs = Date.now();
    serve = spawnCli([
      'serve',
      '--config',
      configFile,
      '--target',
      live.url,
      '--listen',
      '127.0.0.1:0',
      '--scrape-interval',
      '2s',
      '--evaluation-interval',
      '1s',
    ]);
    const [, address] = await serve.output('stdout', /"page":"(http:\/\/127\.0\.0\.1:\d+)\/"/);
    const origin = address as string;

    let promActiveAtMs: number | undefined;
    let serviceFiredMs: number | undefined;
    let pendingSeen: Finding | undefined;
    while ((promActiveAtMs === undefined || serviceFiredMs === undefined) && Date.now() - startedWaitingMs < WAIT_MS) {
      const now = Date.now();
      const finding = await serviceFinding(origin);
      if (finding?.state === 'pending') pendingSeen ??= finding;
      if (finding?.state === 'firing') serviceFiredMs ??= now;
      promActiveAtMs ??= await prometheusActiveAt(prometheus);
      await sleep(500);
    }
    expect(promActiveAtMs, `Prometheus never fired ${ALERT}: ${prometheus.output()}`).toBeDefined();
    expect(serviceFiredMs, `the service never fired ${ALERT}: ${serve.stderr()}`).toBeDefined();
    // Never before Prometheus could fire on the same data, and never before the `for` elapsed since the start.
    expect(serviceFiredMs as number).toBeGreaterThanOrEqual((promActiveAtMs as number) + FOR_MS - ONSET_SLACK_MS);
    expect((serviceFiredMs as number) - startedMs).toBeGreaterThanOrEqual(FOR_MS);
    // Pending first, with since no earlier than the start and firesAt one `for` after it.
    expect(pendingSeen).toBeDefined();
    const since = Date.parse(pendingSeen?.since ?? '');
    expect(since).toBeGreaterThanOrEqual(startedMs);
    expect(Date.parse(pendingSeen?.firesAt ?? '')).toBe(since + FOR_MS);
  });
});
