/**
 * `npm run calibrate:curves [-- --seeds N]`: detection curves. For each rule, the strength of its planted cause is
 * swept across its threshold on fresh seeds (9001 on), and at each point the share of seeds on which the rule is
 * firing at the end of the run and the median time from the start to its first firing step (judged every minute)
 * are measured. Writes docs/detection-curves.svg (one panel per sweep) and docs/detection-curves.md (the table).
 *
 * The sweeps: Backlog over offered load (0.9–1.3 of capacity, 4 workers, 200,000 keys); Saturated over
 * utilization (0.8–1.0) at 1, 2 and 8 workers; PersistentFailures over the share of objects failing forever
 * (0.5–20% of 1,000, 45 minutes); HotLoop over the keys in a status-write loop; StuckWorker over the worker
 * count (one stuck of 1–16). The truth of each point is the scenario's own; this script measures, it judges
 * nothing.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { memoizedBackend } from '../src/diagnosis/backend.js';
import { isFiring } from '../src/diagnosis/report.js';
import type { RuleId } from '../src/diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../src/diagnosis/runbook.js';
import { escapeHtml } from '../src/server/page/render.js';
import { diagnoseSource } from '../src/service/diagnose-source.js';
import { lognormal, meanMs } from '../src/simulate/distributions.js';
import { runVirtual, type SimulationParams } from '../src/simulate/index.js';
import { recordingSourceFromText } from '../src/sources/recording-source.js';

const MINUTE = 60_000;
const FIRST_SEED = 9001;
const STEP_MS = MINUTE;

type Point = { readonly x: number; readonly label: string; readonly params: Partial<SimulationParams> };
type Sweep = {
  readonly rule: RuleId;
  readonly title: string;
  readonly axis: string;
  readonly scenario: string;
  readonly points: readonly Point[];
};

const BACKLOG_CAPACITY = 4 / (meanMs(lognormal(80, 0.6)) / 1000);
const SATURATION_SYNC_S = meanMs(lognormal(400, 0.5)) / 1000;

const SWEEPS: readonly Sweep[] = [
  {
    rule: 'WorkqueueBacklog',
    title: 'Backlog: offered load (4 workers)',
    axis: 'arrivals / capacity',
    scenario: 'backlog',
    points: [0.9, 0.95, 1.0, 1.02, 1.05, 1.1, 1.2, 1.3].map((load) => ({
      x: load,
      label: `${load}`,
      params: { rate: Math.round(load * BACKLOG_CAPACITY * 1000) / 1000 },
    })),
  },
  ...[1, 2, 8].map(
    (workers): Sweep => ({
      rule: 'WorkqueueSaturated',
      title: `Saturated: utilization (${workers} worker${workers === 1 ? '' : 's'})`,
      axis: 'utilization',
      scenario: 'saturation',
      points: [0.8, 0.85, 0.88, 0.9, 0.93, 0.96, 1.0].map((u) => ({
        x: u,
        label: `${u}`,
        params: { workers, rate: Math.round(((u * workers) / SATURATION_SYNC_S) * 1000) / 1000 },
      })),
    }),
  ),
  {
    rule: 'WorkqueuePersistentFailures',
    title: 'PersistentFailures: objects failing forever (of 1,000)',
    axis: 'failing objects',
    scenario: 'persistent-failure',
    points: [5, 10, 20, 40, 60, 80, 100, 200].map((n) => ({
      x: n / 1000,
      label: `${n / 10}%`,
      params: { keys: 1000, failingKeys: n, durationMs: 45 * MINUTE },
    })),
  },
  {
    rule: 'WorkqueueHotLoop',
    title: 'HotLoop: keys in a status-write loop',
    axis: 'looping keys',
    scenario: 'hot-loop-status-write',
    points: [1, 2, 3, 5].map((n) => ({ x: n, label: `${n}`, params: { loopKeys: n } })),
  },
  {
    rule: 'WorkqueueStuckWorker',
    title: 'StuckWorker: one stuck of N workers',
    axis: 'workers',
    scenario: 'stuck-worker',
    points: [1, 2, 4, 8, 16].map((n) => ({ x: n, label: `${n}`, params: { workers: n } })),
  },
];

type Measured = { readonly detected: number; readonly seeds: number; readonly medianMinutes: number | null };

/** Whether the rule fires at the end, and the first minute at which it fired, for one run. */
async function measureRun(
  sweep: Sweep,
  point: Point,
  seed: number,
): Promise<{ firing: boolean; firstMinute: number | null }> {
  const run = await runVirtual(sweep.scenario, { seed, ...point.params });
  const source = recordingSourceFromText(run.recording.text(), `${sweep.scenario}-${seed}.om`);
  try {
    const range = source.dataRange();
    if (range === undefined) throw new Error(`${sweep.scenario}: empty recording`);
    const backend = memoizedBackend(source.backend);
    let firstMinute: number | null = null;
    let firing = false;
    for (let at = range.startMs + 5 * MINUTE; at <= range.endMs; at += STEP_MS) {
      const report = await diagnoseSource(source, { atMs: at, runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL, backend });
      firing = report.queues.some((q) => q.findings.some((f) => f.rule === sweep.rule && isFiring(f)));
      if (firing && firstMinute === null) firstMinute = (at - range.startMs) / MINUTE;
    }
    return { firing, firstMinute };
  } finally {
    await source.close();
  }
}

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seeds: { type: 'string' } }, strict: true });
  const seeds = Number(values.seeds ?? '5');
  if (!Number.isInteger(seeds) || seeds < 1) {
    process.stderr.write('calibrate:curves: --seeds must be a positive integer\n');
    process.exit(2);
  }
  const results: Array<{ sweep: Sweep; measured: Measured[] }> = [];
  for (const sweep of SWEEPS) {
    const measured: Measured[] = [];
    for (const point of sweep.points) {
      const runs = [];
      for (let s = 0; s < seeds; s++) runs.push(await measureRun(sweep, point, FIRST_SEED + s));
      const detected = runs.filter((r) => r.firing).length;
      const times = runs.filter((r) => r.firing && r.firstMinute !== null).map((r) => r.firstMinute as number);
      measured.push({ detected, seeds, medianMinutes: median(times) });
      process.stderr.write(
        `${sweep.title} @ ${point.label}: ${detected}/${seeds}, median ${median(times) ?? '-'} min\n`,
      );
    }
    results.push({ sweep, measured });
  }
  writeFileSync('docs/detection-curves.svg', svg(results));
  writeFileSync('docs/detection-curves.md', table(results, seeds));
  process.stdout.write(table(results, seeds));
}

function table(results: ReadonlyArray<{ sweep: Sweep; measured: Measured[] }>, seeds: number): string {
  const lines = [
    `Detection curves: share of ${seeds} fresh seeds (${FIRST_SEED} on) with the rule firing at the end of the run, and the median minute of its first firing (judged every minute). Regenerate with \`npm run calibrate:curves\`.`,
    '',
  ];
  for (const { sweep, measured } of results) {
    lines.push(`**${sweep.title}** (\`${sweep.scenario}\`)`, '');
    lines.push(`| ${sweep.axis} | ${sweep.points.map((p) => p.label).join(' | ')} |`);
    lines.push(`|---|${sweep.points.map(() => '---').join('|')}|`);
    lines.push(`| detected | ${measured.map((m) => `${m.detected}/${m.seeds}`).join(' | ')} |`);
    lines.push(
      `| median minutes | ${measured.map((m) => (m.medianMinutes === null ? '–' : `${m.medianMinutes}`)).join(' | ')} |`,
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** One small panel per sweep: the detected share (line and points), the median minutes above each point. */
function svg(results: ReadonlyArray<{ sweep: Sweep; measured: Measured[] }>): string {
  const W = 360;
  const H = 220;
  const cols = 2;
  const pad = { left: 44, right: 14, top: 34, bottom: 40 };
  const rows = Math.ceil(results.length / cols);
  const parts: string[] = [];
  results.forEach(({ sweep, measured }, index) => {
    const ox = (index % cols) * W;
    const oy = Math.floor(index / cols) * H;
    const plotW = W - pad.left - pad.right;
    const plotH = H - pad.top - pad.bottom;
    const xAt = (i: number) =>
      ox + pad.left + (sweep.points.length === 1 ? plotW / 2 : (i * plotW) / (sweep.points.length - 1));
    const yAt = (share: number) => oy + pad.top + (1 - share) * plotH;
    parts.push(
      `<text x="${ox + 8}" y="${oy + 18}" font-size="12" font-weight="bold">${escapeHtml(sweep.title)}</text>`,
    );
    parts.push(
      `<line x1="${ox + pad.left}" y1="${yAt(0)}" x2="${ox + pad.left + plotW}" y2="${yAt(0)}" stroke="#888"/>`,
      `<line x1="${ox + pad.left}" y1="${yAt(0)}" x2="${ox + pad.left}" y2="${yAt(1)}" stroke="#888"/>`,
      `<text x="${ox + pad.left - 6}" y="${yAt(1) + 4}" font-size="10" text-anchor="end">100%</text>`,
      `<text x="${ox + pad.left - 6}" y="${yAt(0) + 4}" font-size="10" text-anchor="end">0%</text>`,
      `<text x="${ox + pad.left + plotW / 2}" y="${oy + H - 6}" font-size="10" text-anchor="middle">${escapeHtml(sweep.axis)}</text>`,
    );
    const path = measured.map(
      (m, i) => `${i === 0 ? 'M' : 'L'}${xAt(i).toFixed(1)},${yAt(m.detected / m.seeds).toFixed(1)}`,
    );
    parts.push(`<path d="${path.join(' ')}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
    measured.forEach((m, i) => {
      const x = xAt(i);
      const y = yAt(m.detected / m.seeds);
      parts.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="3" fill="#1f77b4"/>`);
      parts.push(
        `<text x="${x.toFixed(1)}" y="${yAt(0) + 13}" font-size="9" text-anchor="middle">${escapeHtml(sweep.points[i]?.label ?? '')}</text>`,
      );
      if (m.medianMinutes !== null) {
        parts.push(
          `<text x="${x.toFixed(1)}" y="${(y - 7).toFixed(1)}" font-size="9" text-anchor="middle" fill="#555">${m.medianMinutes}m</text>`,
        );
      }
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * W}" height="${rows * H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

await main();
