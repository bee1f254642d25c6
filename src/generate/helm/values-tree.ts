/**
 * A Helm chart's values, defined once: each value with its default, the JSON Schema of what it may be, and what it
 * does. From that one definition come the chart's values.yaml (defaults, each preceded by its description as a
 * comment), its values.schema.json (what `helm install` and `helm template` check the values against) and the
 * values table of its README.
 *
 * Contract:
 * - A section is a mapping of named entries; its schema refuses keys it does not name, so a typo in a values file
 *   fails the install instead of being ignored.
 * - Output is deterministic: entries in their order of definition.
 */
import { stringify } from 'yaml';

/** A JSON Schema (draft-07, which every Helm version checks values with), as plain data. */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** One value: its default, what it may be, and what it does. */
export type ChartValue = {
  readonly kind: 'value';
  readonly schema: JsonSchema;
  readonly default: unknown;
  readonly description: string;
};

/** A mapping of values; its description documents the mapping as a whole. */
export type ChartSection = {
  readonly kind: 'section';
  readonly description: string;
  readonly entries: Readonly<Record<string, ChartNode>>;
};

export type ChartNode = ChartValue | ChartSection;

export function value(schema: JsonSchema, defaultValue: unknown, description: string): ChartValue {
  return { kind: 'value', schema, default: defaultValue, description };
}

export function section(description: string, entries: Readonly<Record<string, ChartNode>>): ChartSection {
  return { kind: 'section', description, entries };
}

/** The default values, as values.yaml holds them. */
export function defaultsOf(node: ChartNode): unknown {
  if (node.kind === 'value') return node.default;
  return Object.fromEntries(Object.entries(node.entries).map(([key, child]) => [key, defaultsOf(child)]));
}

/** The JSON Schema of a node: a value's own, a section's as an object of its entries and nothing else. */
export function schemaOf(node: ChartNode): JsonSchema {
  if (node.kind === 'value') return { description: node.description, ...node.schema };
  return {
    type: 'object',
    description: node.description,
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(node.entries).map(([key, child]) => [key, schemaOf(child)])),
  };
}

/** Every value with its dotted key (`image.tag`), in order. */
export function valuesOf(node: ChartSection, prefix = ''): Array<{ readonly key: string; readonly value: ChartValue }> {
  return Object.entries(node.entries).flatMap(([key, child]) =>
    child.kind === 'value' ? [{ key: `${prefix}${key}`, value: child }] : valuesOf(child, `${prefix}${key}.`),
  );
}

/** A value's type as the README names it: its schema's `type` (several joined with `/`), `string` for an enum. */
export function typeName(schema: JsonSchema): string {
  const type = schema['type'];
  if (Array.isArray(type)) return type.join('/');
  if (typeof type === 'string') return type;
  if (Array.isArray(schema['enum'])) return 'string';
  return 'any';
}

/** Lines of at most `width` characters (a longer single word stays whole). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

const LINE_WIDTH = 118;

/**
 * values.yaml: `header` (comment lines), then every entry preceded by its description as `#` comments, top-level
 * entries separated by a blank line.
 */
export function valuesYaml(root: ChartSection, header: readonly string[]): string {
  const lines = header.map((line) => (line === '' ? '#' : `# ${line}`));
  const write = (node: ChartSection, indent: string): void => {
    for (const [key, child] of Object.entries(node.entries)) {
      if (indent === '') lines.push('');
      for (const line of wrap(child.description, LINE_WIDTH - indent.length - 2)) lines.push(`${indent}# ${line}`);
      if (child.kind === 'section') {
        lines.push(`${indent}${stringify(key).trimEnd()}:`);
        write(child, `${indent}  `);
      } else {
        const text = stringify({ [key]: child.default }, { lineWidth: 0 }).trimEnd();
        for (const line of text.split('\n')) lines.push(`${indent}${line}`);
      }
    }
  };
  write(root, '');
  return `${lines.join('\n')}\n`;
}
