/**
 * A recording (OpenMetrics text) as a process that does not expose some metric families would have written it:
 * every sample line of those families removed (a family named with or without its `_total` suffix). Metadata
 * lines stay; a family without samples is absent to every reader.
 */
export function withoutFamilies(recording: string, families: readonly string[]): string {
  return recording
    .split('\n')
    .filter((line) => !families.some((f) => line.startsWith(`${f}{`) || line.startsWith(`${f}_total{`)))
    .join('\n');
}
