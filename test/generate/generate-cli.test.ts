/**
 * `workqueue-doctor generate`: writes every file under --out, `--check` tells fresh output (0) from stale,
 * missing or leftover files (1, naming them), and `--config` overrides reach the alert expressions and the
 * dashboard threshold lines; a bad config names the key and exits 2.
 */

import { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { ruleSettings } from '../../src/diagnosis/catalog.js';
import { conditionWith } from '../../src/diagnosis/rule.js';
import { SIGNALS } from '../../src/diagnosis/signals.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { OUTPUT } from '../../src/generate/defaults.js';
import { renderPromQL } from '../../src/promql/render.js';
import { type CliResult, runCli } from '../support/cli.js';
import {
  alertRulesOf,
  expandRecordings,
  expectedLines,
  filesByPath,
  type PanelJson,
  recordingRulesOf,
  ruleFileOf,
  tokensOf,
} from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-generate-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function generate(...args: string[]): Promise<CliResult> {
  return runCli('generate', ...args);
}

function readOut(dir: string, path: string): string {
  return readFileSync(join(dir, path), 'utf8');
}

describe('generate --out and --check', () => {
  const out = join(work, 'fresh');

  it('writes every generated file, deterministically', async () => {
    const first = await generate('--out', out);
    expect(first.code).toBe(EXIT.ok);
    const files = generateArtifacts();
    for (const file of files) expect(readOut(out, file.path)).toBe(file.content);
    for (const file of files) expect(file.content.endsWith('\n')).toBe(true);
    expect(generateArtifacts()).toEqual(files);
  });

  it('--check exits 0 on fresh output', async () => {
    const result = await generate('--out', out, '--check');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(EXIT.ok);
  });

  it('--check exits 1 naming a modified, a missing and a leftover file; generate repairs them', async () => {
    appendFileSync(join(out, OUTPUT.runbook('WorkqueueBacklog')), '\nlocal edit\n');
    unlinkSync(join(out, OUTPUT.dashboard('detail')));
    writeFileSync(join(out, OUTPUT.runbooksDir, 'WorkqueueRemoved.md'), '# gone\n');
    const stale = await generate('--out', out, '--check');
    expect(stale.code).toBe(EXIT.findings);
    expect(stale.stderr).toContain(`stale: ${OUTPUT.runbook('WorkqueueBacklog')}`);
    expect(stale.stderr).toContain(`missing: ${OUTPUT.dashboard('detail')}`);
    expect(stale.stderr).toContain(`not generated (remove it): ${OUTPUT.runbooksDir}/WorkqueueRemoved.md`);
    expect(stale.stderr).not.toContain(OUTPUT.alertRules);

    const repaired = await generate('--out', out);
    expect(repaired.code).toBe(EXIT.ok);
    expect(repaired.stdout).toContain(`removed ${OUTPUT.runbooksDir}/WorkqueueRemoved.md`);
    expect((await generate('--out', out, '--check')).code).toBe(EXIT.ok);
  });

  it('--runbook-base-url changes the links in alerts and dashboards', async () => {
    const dir = join(work, 'runbook-base');
    expect((await generate('--out', dir, '--runbook-base-url', 'https://runbooks.example/wq/')).code).toBe(EXIT.ok);
    expect(readOut(dir, OUTPUT.alertRules)).toContain('runbook_url: https://runbooks.example/wq/WorkqueueBacklog.md');
    expect(readOut(dir, OUTPUT.dashboard('diagnoses'))).toContain('https://runbooks.example/wq/WorkqueueBacklog.md');
    // Output generated with another base is stale against the default.
    expect((await generate('--out', dir, '--check')).code).toBe(EXIT.findings);
  });
});

describe('generate --config', () => {
  it('applies threshold, for and disabled overrides to the alerts and the dashboard threshold lines', async () => {
    const config = join(work, 'overrides.yaml');
    writeFileSync(
      config,
      [
        'rules:',
        '  WorkqueueBacklog:',
        '    thresholds: { minDepth: 50 }',
        '    for: 15m',
        '  WorkqueueSaturated:',
        '    disabled: true',
        '',
      ].join('\n'),
    );
    const dir = join(work, 'overridden');
    expect((await generate('--out', dir, '--config', config)).code).toBe(EXIT.ok);

    const overrides = {
      rules: {
        WorkqueueBacklog: { thresholds: { minDepth: 50 }, forMs: 900_000 },
        WorkqueueSaturated: { disabled: true },
      },
    };
    const files = new Map([[OUTPUT.alertRules, readOut(dir, OUTPUT.alertRules)]]);
    const rules = alertRulesOf(ruleFileOf(files));
    const backlog = rules.find((r) => r.alert === 'WorkqueueBacklog')!;
    const backlogSettings = ruleSettings(overrides).find((s) => s.rule.id === 'WorkqueueBacklog')!;
    expect(backlogSettings.thresholds.minDepth).toBe(50);
    const recordings = recordingRulesOf(ruleFileOf(files));
    expect(tokensOf(expandRecordings(backlog.expr, recordings))).toBe(
      tokensOf(renderPromQL(conditionWith(backlogSettings.rule, backlogSettings.thresholds))),
    );
    const defaults = ruleFileOf(filesByPath());
    const defaultBacklog = alertRulesOf(defaults).find((r) => r.alert === 'WorkqueueBacklog')!;
    expect(expandRecordings(backlog.expr, recordings)).not.toBe(
      expandRecordings(defaultBacklog.expr, recordingRulesOf(defaults)),
    );
    expect(backlog.for).toBe('15m');
    expect(rules.map((r) => r.alert)).not.toContain('WorkqueueSaturated');

    // Every threshold line follows the overrides: the moved value, and none from the disabled rule.
    const detail = JSON.parse(readOut(dir, OUTPUT.dashboard('detail'))) as { panels: PanelJson[] };
    const expected = expectedLines(overrides);
    const linesAt = (title: string) =>
      detail.panels
        .find((p) => p.title === title)
        ?.fieldConfig?.defaults?.thresholds?.steps.slice(1)
        .map((step) => step.value);
    for (const s of SIGNALS) {
      expect(linesAt(s.title), s.title).toEqual([...(expected.get(s.id)?.keys() ?? [])].sort((x, y) => x - y));
    }
    const moved = [...expected].filter(([, byValue]) => byValue.get(50)?.has('WorkqueueBacklog'));
    // minDepth bounds the whole queue's floor and, for a priority queue, its priority-0 floor; under it, the trend
    // window's lowest depth shows a burst that landed on a queue keeping up.
    expect(moved.map(([id]) => id).sort()).toEqual(['depthFloor', 'normalPriorityDepthFloor', 'trendDepthMin']);
    for (const [id] of moved) {
      const movedSignal = SIGNALS.find((s) => s.id === id)!;
      expect(detail.panels.find((p) => p.title === movedSignal.title)?.description).toContain('50 items (minDepth)');
    }
    for (const byValue of expected.values()) {
      for (const rulesAtValue of byValue.values()) expect(rulesAtValue.has('WorkqueueSaturated')).toBe(false);
    }
    expect(readOut(dir, OUTPUT.runbook('WorkqueueBacklog'))).toContain('| `minDepth` | 50 items |');

    // The same config passes --check against its own output, and the defaults do not.
    expect((await generate('--out', dir, '--config', config, '--check')).code).toBe(EXIT.ok);
    const check = await generate('--out', dir, '--check');
    expect(check.code).toBe(EXIT.findings);
    expect(check.stderr).toContain(`stale: ${OUTPUT.alertRules}`);
  });

  it('rejects a bad config with exit 2, naming the file and the key, and writes nothing', async () => {
    const config = join(work, 'bad.yaml');
    writeFileSync(config, 'rules:\n  WorkqueueBacklog:\n    thresholds:\n      minDepht: 50\n');
    const dir = join(work, 'not-written');
    const result = await generate('--out', dir, '--config', config);
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toContain(`${config}: rules.WorkqueueBacklog.thresholds.minDepht: unknown threshold`);
    expect(() => readOut(dir, OUTPUT.alertRules)).toThrow();
  });

  it('reports a config file it cannot read as a usage error', async () => {
    const result = await generate('--out', join(work, 'x'), '--config', join(work, 'absent.yaml'));
    expect(result.code).toBe(EXIT.usage);
    expect(result.stderr).toMatch(/--config: cannot read ".*absent\.yaml": no such file/);
  });
});
