/**
 * controller-runtime's priority-queue depth past its cardinality cap, applied to a recording: once a queue has
 * seen more than 25 distinct priorities, every later increment and decrement of its depth, at any priority,
 * goes to `priority="exceeded_cardinality_limit"`, and the series it had keep their last values. The whole
 * depth (the sum over `priority`) is unchanged; the depth per priority is lost from the cap on.
 */

/** The label value controller-runtime writes past the cap. */
export const EXCEEDED_PRIORITY = 'exceeded_cardinality_limit';

const DEPTH_LINE = /^workqueue_depth\{(.*)\} (\S+) (\S+)$/;
const PRIORITY_LABEL = /,?priority="([^"]*)"/;

type DepthSample = { readonly queue: string; readonly priority: string; readonly value: number; readonly ts: string };

/**
 * `recording` (OpenMetrics text, a timestamp on every sample) with the depth of every priority queue rewritten as
 * if its cap had been reached at `capAtSeconds`: each priority series frozen at its last value before then, and a
 * `placeholder` series (by default `exceeded_cardinality_limit`) carrying the difference, from the first scrape at
 * or after the cap.
 */
export function capPriorities(recording: string, capAtSeconds: number, placeholder = EXCEEDED_PRIORITY): string {
  const lines = recording.split('\n');
  const samples: DepthSample[] = [];
  const firstDepthLine = lines.findIndex((line) => DEPTH_LINE.test(line));
  const kept = lines.filter((line) => {
    const m = DEPTH_LINE.exec(line);
    if (m === null) return true;
    const labels = m[1] as string;
    const priority = PRIORITY_LABEL.exec(labels)?.[1];
    if (priority === undefined || priority === '') return true;
    samples.push({ queue: labels.replace(PRIORITY_LABEL, ''), priority, value: Number(m[2]), ts: m[3] as string });
    return false;
  });
  if (samples.length === 0) throw new Error('the recording has no per-priority depth to cap');
  const rewritten: string[] = [];
  const frozen = new Map<string, Map<string, number>>();
  const byQueueAndTime = new Map<string, DepthSample[]>();
  for (const s of samples) {
    const key = `${s.queue}\u0000${s.ts}`;
    byQueueAndTime.set(key, [...(byQueueAndTime.get(key) ?? []), s]);
  }
  for (const group of byQueueAndTime.values()) {
    const { queue, ts } = group[0] as DepthSample;
    const values = frozen.get(queue) ?? new Map<string, number>();
    frozen.set(queue, values);
    if (Number(ts) < capAtSeconds) {
      for (const s of group) values.set(s.priority, s.value);
      rewritten.push(...group.map((s) => depthLine(queue, s.priority, s.value, ts)));
      continue;
    }
    const total = group.reduce((sum, s) => sum + s.value, 0);
    const frozenTotal = [...values.values()].reduce((sum, v) => sum + v, 0);
    for (const [priority, value] of values) rewritten.push(depthLine(queue, priority, value, ts));
    rewritten.push(depthLine(queue, placeholder, total - frozenTotal, ts));
  }
  kept.splice(firstDepthLine, 0, ...sortBySeries(rewritten));
  return kept.join('\n');
}

function depthLine(queue: string, priority: string, value: number, ts: string): string {
  return `workqueue_depth{${queue},priority="${priority}"} ${value} ${ts}`;
}

/** The lines of one series together, in time order (the recording's order within a family). */
function sortBySeries(lines: readonly string[]): string[] {
  const series = (line: string) => line.slice(0, line.indexOf('}') + 1);
  const time = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1));
  return [...lines].sort((a, b) => (series(a) < series(b) ? -1 : series(a) > series(b) ? 1 : time(a) - time(b)));
}
