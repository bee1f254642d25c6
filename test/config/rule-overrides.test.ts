/** The `rules:` configuration: what it accepts, and that every error names the bad key. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { parseRuleOverrides, parseRuleOverridesFile } from '../../src/config/rule-overrides.js';
import { RULES, ruleSettings } from '../../src/diagnosis/catalog.js';
import { OBSERVATIONS } from '../../src/diagnosis/observations/index.js';
import { NON_NEGATIVE, RULE_IDS, type ThresholdSpec } from '../../src/diagnosis/rule.js';

describe('parseRuleOverrides', () => {
  it('reads thresholds, for and disabled into the catalog overrides', () => {
    const overrides = parseRuleOverrides(
      {
        WorkqueueBacklog: { thresholds: { minDepth: 50, minGrowth: 0.5 }, for: '15m' },
        WorkqueueSaturated: { disabled: true },
        WorkqueueHotLoop: null,
      },
      'rules',
    );
    expect(overrides).toEqual({
      rules: {
        WorkqueueBacklog: { thresholds: { minDepth: 50, minGrowth: 0.5 }, forMs: 900_000 },
        WorkqueueSaturated: { disabled: true },
        WorkqueueHotLoop: {},
      },
    });
    const settings = ruleSettings(overrides);
    const backlog = settings.find((s) => s.rule.id === 'WorkqueueBacklog');
    expect(backlog?.thresholds.minDepth).toBe(50);
    expect(backlog?.thresholds.minWait).toBe(5);
    expect(backlog?.forMs).toBe(900_000);
    expect(settings.find((s) => s.rule.id === 'WorkqueueSaturated')?.enabled).toBe(false);
  });

  it('has every default inside its threshold range, and accepts the ends of it', () => {
    for (const definition of [...RULES, ...OBSERVATIONS]) {
      for (const [name, spec] of Object.entries(definition.thresholds) as Array<[string, ThresholdSpec]>) {
        const range = spec.range ?? NON_NEGATIVE;
        expect(spec.default, `${definition.id}.${name}`).toBeGreaterThanOrEqual(range.min);
        expect(spec.default, `${definition.id}.${name}`).toBeLessThanOrEqual(range.max);
      }
    }
    expect(
      parseRuleOverrides({ WorkqueueSaturated: { thresholds: { minUtilization: 1, minInferredWorkers: 0 } } }, 'rules'),
    ).toEqual({ rules: { WorkqueueSaturated: { thresholds: { minUtilization: 1, minInferredWorkers: 0 } } } });
  });

  it('treats an absent section as no overrides', () => {
    expect(parseRuleOverrides(undefined, 'rules')).toEqual({});
    expect(parseRuleOverrides(null, 'rules')).toEqual({});
  });

  it.each([
    [{ WorkqueueBaclog: {} }, `cfg: rules.WorkqueueBaclog: unknown rule; known rules: ${RULE_IDS.join(', ')}`],
    [{ WorkqueueBacklog: { threshold: {} } }, 'cfg: rules.WorkqueueBacklog.threshold: unknown key; expected one of'],
    [
      { WorkqueueBacklog: { thresholds: { minDepht: 3 } } },
      'cfg: rules.WorkqueueBacklog.thresholds.minDepht: unknown threshold; WorkqueueBacklog has minDepth, minGrowth',
    ],
    [
      { WorkqueueBacklog: { thresholds: { minDepth: '3' } } },
      'cfg: rules.WorkqueueBacklog.thresholds.minDepth: expected a finite number, got "3"',
    ],
    [
      { WorkqueueNotObservable: { thresholds: { x: 1 } } },
      'cfg: rules.WorkqueueNotObservable.thresholds.x: unknown threshold; WorkqueueNotObservable has no thresholds',
    ],
    [
      { WorkqueueBacklog: { thresholds: { minDepth: -5 } } },
      'cfg: rules.WorkqueueBacklog.thresholds.minDepth: -5 is outside the values that make sense for it, 0 or more (items)',
    ],
    [
      { WorkqueueSaturated: { thresholds: { minUtilization: 1.5 } } },
      'cfg: rules.WorkqueueSaturated.thresholds.minUtilization: 1.5 is outside the values that make sense for it, 0 to 1 (ratio)',
    ],
    [
      { WorkqueueBacklog: { thresholds: { targetUtilization: 0 } } },
      'cfg: rules.WorkqueueBacklog.thresholds.targetUtilization: 0 is outside the values that make sense for it, 0.05 to 1 (ratio)',
    ],
    [{ WorkqueueBacklog: { for: '10 minutes' } }, 'cfg: rules.WorkqueueBacklog.for: invalid duration "10 minutes"'],
    [{ WorkqueueBacklog: { for: 600 } }, 'cfg: rules.WorkqueueBacklog.for: expected a Prometheus duration'],
    [
      { WorkqueueBacklog: { disabled: 'yes' } },
      'cfg: rules.WorkqueueBacklog.disabled: expected true or false, got "yes"',
    ],
    [{ WorkqueueBacklog: [] }, 'cfg: rules.WorkqueueBacklog: expected a mapping, got a list'],
    [['WorkqueueBacklog'], 'cfg: rules: expected a mapping, got a list'],
  ])('rejects %j naming the key', (value, message) => {
    expect(() => parseRuleOverrides(value, 'cfg: rules')).toThrow(ConfigError);
    expect(() => parseRuleOverrides(value, 'cfg: rules')).toThrow(message);
  });
});

describe('parseRuleOverridesFile', () => {
  it('parses YAML with a rules section', () => {
    const text = 'rules:\n  WorkqueueStuckWorker:\n    thresholds:\n      minAge: 600\n';
    expect(parseRuleOverridesFile(text, 'f.yaml')).toEqual({
      rules: { WorkqueueStuckWorker: { thresholds: { minAge: 600 } } },
    });
    expect(parseRuleOverridesFile('', 'f.yaml')).toEqual({});
  });

  it('names the file and the key on errors', () => {
    expect(() => parseRuleOverridesFile('rule:\n  WorkqueueBacklog: {}\n', 'f.yaml')).toThrow(
      'f.yaml: rule: unknown key; expected rules',
    );
    expect(() => parseRuleOverridesFile('rules: [\n', 'f.yaml')).toThrow(/^f\.yaml: not valid YAML/);
    expect(() => parseRuleOverridesFile('- a\n', 'f.yaml')).toThrow('f.yaml: expected a mapping, got a list');
    expect(() =>
      parseRuleOverridesFile('rules:\n  WorkqueueBacklog:\n    thresholds:\n      minDepth: .inf\n', 'f.yaml'),
    ).toThrow('f.yaml: rules.WorkqueueBacklog.thresholds.minDepth: expected a finite number, got Infinity');
  });
});

describe('retired thresholds', () => {
  it('are named with what replaced them, not reported as unknown', () => {
    expect(() =>
      parseRuleOverrides({ WorkqueuePersistentFailures: { thresholds: { minRetryRate: 0.1 } } }, 'rules'),
    ).toThrow(/rules\.WorkqueuePersistentFailures\.thresholds\.minRetryRate: no longer a threshold: retries alone/);
  });

  it("name the stuck worker's growth thresholds, now evidence, with the age that decides", () => {
    for (const name of ['minAgeGrowth', 'minUnfinishedGrowth'])
      expect(() => parseRuleOverrides({ WorkqueueStuckWorker: { thresholds: { [name]: 0.5 } } }, 'rules')).toThrow(
        new RegExp(`rules\\.WorkqueueStuckWorker\\.thresholds\\.${name}: no longer a threshold: .*minAge`),
      );
  });

  it("name the hot loop's error ratio with the rate of requeued errors that decides", () => {
    expect(() => parseRuleOverrides({ WorkqueueHotLoop: { thresholds: { minErrorRatio: 0.5 } } }, 'rules')).toThrow(
      /rules\.WorkqueueHotLoop\.thresholds\.minErrorRatio: no longer a threshold: .*minAddRate/,
    );
  });

  it("name the persistent failures' error-rate floor with the short-window ratio that always exceeded it", () => {
    expect(() =>
      parseRuleOverrides({ WorkqueuePersistentFailures: { thresholds: { minErrorRate: 0.01 } } }, 'rules'),
    ).toThrow(
      /rules\.WorkqueuePersistentFailures\.thresholds\.minErrorRate: no longer a threshold: .*minRecentErrorRatio/,
    );
  });

  it("name saturation's waiting thresholds, now evidence, with the utilization that decides", () => {
    for (const name of ['minDepth', 'minWaitRatio'])
      expect(() => parseRuleOverrides({ WorkqueueSaturated: { thresholds: { [name]: 1 } } }, 'rules')).toThrow(
        new RegExp(
          `rules\\.WorkqueueSaturated\\.thresholds\\.${name}: no longer a threshold: utilization alone decides`,
        ),
      );
  });

  it("name the backlog's arrival ratio with the growing depth that already proves it", () => {
    expect(() => parseRuleOverrides({ WorkqueueBacklog: { thresholds: { arrivalRatio: 1.2 } } }, 'rules')).toThrow(
      /rules\.WorkqueueBacklog\.thresholds\.arrivalRatio: no longer a threshold: a growing depth already proves/,
    );
  });

  it("name the backlog's wait in syncs with the wait in seconds that replaced it", () => {
    expect(() => parseRuleOverrides({ WorkqueueBacklog: { thresholds: { minWaitRatio: 10 } } }, 'rules')).toThrow(
      /rules\.WorkqueueBacklog\.thresholds\.minWaitRatio: no longer a threshold: a change is late by the seconds it waits, not by the syncs \(minWait\)/,
    );
  });

  it("name slow work's share of slow syncs with the rate that decides", () => {
    expect(() => parseRuleOverrides({ WorkqueueSlowWork: { thresholds: { minSlowShare: 0.01 } } }, 'rules')).toThrow(
      /rules\.WorkqueueSlowWork\.thresholds\.minSlowShare: no longer a threshold: the rate of syncs over 10 s alone decides/,
    );
  });

  it("name saturation's busy drift with the depth floor that decides", () => {
    expect(() => parseRuleOverrides({ WorkqueueSaturated: { thresholds: { maxBusyDrift: 0.5 } } }, 'rules')).toThrow(
      /rules\.WorkqueueSaturated\.thresholds\.maxBusyDrift: no longer a threshold: .*never fell to zero/,
    );
  });

  it("name slow work's longest-running line with the bucket it shares", () => {
    expect(() => parseRuleOverrides({ WorkqueueSlowWork: { thresholds: { minLongestRunning: 30 } } }, 'rules')).toThrow(
      /rules\.WorkqueueSlowWork\.thresholds\.minLongestRunning: no longer a threshold: .*10 s bucket/,
    );
  });

  it("name saturation's short window with the long window that ends a finding", () => {
    expect(() =>
      parseRuleOverrides({ WorkqueueSaturated: { thresholds: { minRecentUtilization: 0.5 } } }, 'rules'),
    ).toThrow(
      /rules\.WorkqueueSaturated\.thresholds\.minRecentUtilization: no longer a threshold: the long window ends/,
    );
  });
});
