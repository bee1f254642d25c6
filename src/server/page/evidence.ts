/**
 * A finding's evidence as a table that reads: the signals its rule's condition relies on first (with the
 * thresholds they are compared with), then the rest in the rule's order of importance. Rows without a value
 * are folded away under "n more without data", and zero values of signals the condition does not read under
 * "n more at zero": both still there, one click away.
 */
import { formatValue } from '../../diagnosis/format.js';
import { evidenceTitle } from '../../diagnosis/text-report.js';
import type { SignalValue } from '../../diagnosis/units.js';
import type { RuleExplanation } from './finding-charts.js';
import { escapeHtml } from './html.js';

export function renderEvidence(
  evidence: Readonly<Record<string, SignalValue>>,
  explanation: RuleExplanation | undefined,
): string {
  const entries = Object.entries(evidence);
  if (entries.length === 0) return '';
  const decisive = (id: string): boolean => explanation?.decisive.has(id) === true;
  const shown: [string, SignalValue][] = [];
  const noData: [string, SignalValue][] = [];
  const atZero: [string, SignalValue][] = [];
  for (const entry of [...entries.filter(([id]) => decisive(id)), ...entries.filter(([id]) => !decisive(id))]) {
    const [id, value] = entry;
    if (value.value === null) noData.push(entry);
    else if (value.value === 0 && !decisive(id)) atZero.push(entry);
    else shown.push(entry);
  }
  const row = ([id, value]: [string, SignalValue]): string => {
    const compared = explanation?.thresholdsBySignal.get(id) ?? [];
    return `<tr${decisive(id) ? ' class="decisive"' : ''}><th scope="row">${escapeHtml(evidenceTitle(id))}</th><td>${escapeHtml(
      formatValue(value),
    )}</td><td class="compared">${compared.length === 0 ? '' : `rule: ${escapeHtml(compared.join('; '))}`}</td></tr>`;
  };
  const folded = (rows: [string, SignalValue][], what: string): string =>
    rows.length === 0
      ? ''
      : `<details class="more"><summary>${rows.length} more ${what}</summary><table class="evidence"><tbody>${rows
          .map(row)
          .join('')}</tbody></table></details>`;
  return `<div class="evidence"><table class="evidence"><caption>Evidence <small>what the rule reads first</small></caption><tbody>
${shown.map(row).join('\n')}
</tbody></table>${folded(noData, 'without data')}${folded(atZero, 'at zero')}</div>`;
}
