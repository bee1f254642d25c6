/**
 * One runbook per diagnosis, in Markdown: what fired (severity, duration, the condition and its thresholds
 * in force), what it means, how to confirm (the PromQL of each confirming signal and the alert expression),
 * the likely cause and the fix. Everything comes from the rule definition.
 *
 * The rule's cause and fix texts adapt to measured values; a runbook has none, so it renders them with every
 * signal missing and says "measured per queue" where a value would go.
 */

import { stringify } from 'yaml';
import { formatValue } from '../diagnosis/format.js';
import { withPlacementLabels } from '../diagnosis/identity.js';
import { UNITS } from '../diagnosis/report-schema.js';
import type { TextContext } from '../diagnosis/rule.js';
import { ruleIdentityScope } from '../diagnosis/rule.js';
import { signal } from '../diagnosis/signals.js';
import { formatDuration, renderPromQL } from '../promql/render.js';
import type { RuleAnalysis } from './condition-analysis.js';
import { formatThreshold } from './condition-analysis.js';
import { DASHBOARD_UID, OUTPUT } from './defaults.js';
import { identityOptions, type QueryScope, scopedIdentityLabels } from './query-scope.js';

/** What the rule texts print for a value a runbook cannot know. */
const MISSING_TEXTS: readonly string[] = UNITS.map((unit) =>
  formatValue({ value: null, unit, missing: 'insufficient_data' }),
);
const MEASURED = '*(measured per queue)*';

function withoutValues(text: string): string {
  let out = text;
  for (const missing of MISSING_TEXTS) out = out.split(missing).join(MEASURED);
  return out;
}

/** The alert's label values, as placeholders a reader replaces. */
function placeholder(label: string): string {
  return `<${label}>`;
}

function promqlBlock(promql: string): string[] {
  return ['```promql', promql, '```'];
}

function tableCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function runbook(analysis: RuleAnalysis, scope: QueryScope = {}): string {
  const { rule, thresholds, forMs, keepFiringForMs } = analysis.settings;
  const context: TextContext = { signals: {}, thresholds };
  const alertLabels = scopedIdentityLabels(ruleIdentityScope(rule.scope), scope);
  const selector = scope.selector ?? [];
  const subject = rule.scope === 'queue' ? 'queue' : 'target';
  const narrowed = (id: Parameters<typeof signal>[0]): string => {
    const s = signal(id);
    const labels = scopedIdentityLabels(s.scope, scope).filter((l) => alertLabels.includes(l));
    return renderPromQL(s.expr, {
      extraMatchers: [...selector, ...labels.map((label) => ({ label, op: '=' as const, value: placeholder(label) }))],
    });
  };
  const condition = renderPromQL(withPlacementLabels(analysis.condition, identityOptions(scope)), {
    extraMatchers: selector,
  });

  const lines: string[] = [
    `# ${rule.id}: ${rule.title}`,
    '',
    `- **Severity:** ${rule.severity}`,
    ...(analysis.settings.enabled ? [] : ['- **Disabled** by the configuration: no alert is generated for it.']),
    `- **Fires when** the condition below has held for **${formatDuration(forMs)}** (checked at every rule evaluation)${keepFiringForMs > 0 ? `, and **stays firing ${formatDuration(keepFiringForMs)}** after it last held (\`keep_firing_for\`: a condition holding again within it resumes the alert)` : ''}.`,
    `- **One alert per** ${rule.scope === 'queue' ? 'work queue' : 'scraped target'}, labelled ${alertLabels.map((l) => `\`${l}\``).join(', ')}${rule.scope === 'queue' ? ' (`controller` only with controller-runtime)' : ''}.`,
    '',
    '## What fired',
    '',
    'The condition, every part of which must hold:',
    '',
    ...analysis.clauses.map((c) => `- ${c.text}`),
    '',
  ];

  const specs = Object.entries(rule.thresholds);
  if (specs.length > 0) {
    lines.push('| threshold | value | meaning |', '|---|---|---|');
    for (const [name, spec] of specs) {
      const value = thresholds[name] ?? spec.default;
      lines.push(`| \`${name}\` | ${tableCell(formatThreshold(value, spec))} | ${tableCell(spec.description)} |`);
    }
    lines.push('');
  }

  lines.push('## What it means', '', rule.text.meaning, '', '## How to confirm', '');
  lines.push(
    `Open the *Workqueue detail* dashboard (uid \`${DASHBOARD_UID.detail}\`) for the ${subject}, or run these queries in Prometheus with ${alertLabels.map((l) => `\`${placeholder(l)}\``).join(', ')} replaced by the alert's labels (an absent label is the empty string).`,
    '',
  );
  rule.text.confirm.forEach((step, index) => {
    lines.push(`${index + 1}. ${step.text}`, '');
    for (const id of step.signals) {
      const s = signal(id);
      lines.push(`   **${s.title}**: ${s.description}`, '');
      lines.push(...promqlBlock(narrowed(id)).map((l) => `   ${l}`), '');
    }
  });
  lines.push(
    `The alert expression written out in full (all ${subject}s; the generated alert reads the same through the recording rules of \`${OUTPUT.alertRules}\`):`,
    '',
    ...promqlBlock(condition),
    '',
  );

  const cases = rule.text.cases;
  if (cases !== undefined && cases.length > 0) {
    lines.push(
      '## Likely cause and fix',
      '',
      'The service and `workqueue-doctor diagnose` tell these cases apart from the measured values:',
      '',
    );
    for (const c of cases) {
      lines.push(`### When ${c.when}`, '', c.cause, '', `**Fix:** ${c.fix}`, '');
    }
  } else {
    lines.push(
      '## Likely cause',
      '',
      "*The service and `workqueue-doctor diagnose` adapt the cause and the fix to the queue's measured values; this is what they say without them.*",
      '',
      withoutValues(rule.text.cause(context)),
      '',
    );
    lines.push('## How to fix', '', withoutValues(rule.text.fix(context)), '');
  }

  const example = {
    rules: {
      [rule.id]: {
        ...(specs.length > 0
          ? { thresholds: Object.fromEntries(specs.map(([name]) => [name, thresholds[name]])) }
          : {}),
        for: formatDuration(forMs),
      },
    },
  };
  lines.push(
    '## Tuning',
    '',
    'Thresholds and the duration come from the diagnosis definition. To change them for your fleet, put the new values in a configuration file and regenerate the alerts, dashboards and runbooks with `workqueue-doctor generate --config FILE` (`disabled: true` drops the alert). The values in force here:',
    '',
    '```yaml',
    stringify(example, { lineWidth: 0 }).trimEnd(),
    '```',
    '',
  );
  return `${lines.join('\n').trimEnd()}\n`;
}
