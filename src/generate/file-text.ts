/** The text of a generated file: JSON pretty-printed, YAML after the generated notice; both end with a newline. */
import { stringify } from 'yaml';
import { GENERATED_NOTICE } from './defaults.js';

export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export function yamlText(value: unknown): string {
  return `# ${GENERATED_NOTICE}\n${stringify(value, { lineWidth: 0 })}`;
}
