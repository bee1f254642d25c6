/**
 * `queues:` in the configuration changes the generated alert rules: a queue with its own thresholds gets its
 * own alert expression (the rule's condition with its thresholds, restricted to the queue by matchers), the
 * rule-wide alert excludes it by negative matchers, and a silenced queue is excluded from every alert.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { rule } from '../../src/diagnosis/catalog.js';
import type { RuleId } from '../../src/diagnosis/rule.js';
import { generateArtifacts } from '../../src/generate/artifacts.js';
import { parseGenerateConfig } from '../../src/generate/generate-config.js';
import { queueCells } from '../../src/generate/queue-cells.js';

type Rule = { alert?: string; record?: string; expr: string };

function alertRules(yaml: string): Rule[] {
  const config = parseGenerateConfig(yaml, 'config.yaml');
  const file = generateArtifacts(config).find((f) => f.path === 'alerts/workqueue-doctor.rules.yaml');
  const doc = parse(file?.content ?? '') as { groups: Array<{ rules: Rule[] }> };
  return doc.groups.flatMap((g) => g.rules);
}

describe('generate applies queues:', () => {
  const yaml = [
    'queues:',
    '  - name: pod',
    '    rules:',
    '      WorkqueueBacklog: { thresholds: { minDepth: 200 }, for: 20m }',
    '  - controller: legacy-sync',
    '    silenced: true',
    '',
  ].join('\n');

  it('gives the override queue its own Backlog alert and excludes it and the silenced one from the default', () => {
    const backlog = alertRules(yaml).filter((r) => r.alert === 'WorkqueueBacklog');
    const plain = alertRules('').filter((r) => r.alert === 'WorkqueueBacklog');
    expect(plain).toHaveLength(1);
    expect(backlog).toHaveLength(2);
    const own = backlog.find((r) => r.expr.includes('name="pod"'));
    const rest = backlog.find((r) => r.expr.includes('name!="pod"'));
    expect(own?.expr).toMatch(/>= 200\b/);
    expect(own?.expr).toContain('controller!="legacy-sync"');
    expect(rest?.expr).toContain('controller!="legacy-sync"');
    expect(rest?.expr).not.toMatch(/>= 200\b/);
  });

  it('excludes the silenced queue from every other queue-level alert', () => {
    const queueLevel = (r: Rule) => r.alert !== undefined && rule(r.alert as RuleId).scope === 'queue';
    for (const r of alertRules(yaml).filter((r) => queueLevel(r) && r.alert !== 'WorkqueueBacklog')) {
      expect(r.expr, r.alert).toContain('controller!="legacy-sync"');
    }
  });

  it('splits the queues into disjoint cells', () => {
    const config = parseGenerateConfig(
      'queues:\n  - { name: a, controller: c, rules: { WorkqueueBacklog: { thresholds: { minDepth: 5 } } } }\n',
      'c.yaml',
    );
    const cells = queueCells('WorkqueueBacklog', config.overrides);
    expect(cells.map((c) => c.matchers.map((m) => `${m.label}${m.op}${m.value}`).join(','))).toEqual([
      'name=a,controller=c',
      'name!=a',
      'name=a,controller!=c',
    ]);
    expect(cells.map((c) => c.isDefault)).toEqual([false, true, true]);
  });
});
