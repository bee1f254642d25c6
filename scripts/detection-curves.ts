/**
 * `npm run calibrate:curves [-- --seeds N] [--only TEXT]`: detection curves. For each rule, the strength of its
 * planted cause is swept across its threshold on fresh seeds (9001 on), on each queue kind and metric flavour where
 * it applies (a line per variant), and at each point the share of seeds on which the rule fired (at any step judged,
 * every minute from the fifth) and the median time from the start to its first firing step are measured.
 *
 * Results are kept in docs/detection-curves.json; `--only` reruns the sweeps whose title contains TEXT and keeps
 * the others' results, so one sweep can be redone without the rest. docs/detection-curves.svg (one panel per sweep)
 * and docs/detection-curves.md (the tables) are drawn from the whole file.
 *
 * The truth of each point is the scenario's own; this script measures, it judges nothing.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { memoizedBackend } from '../src/diagnosis/backend.js';
import { isFiring } from '../src/diagnosis/report.js';
import type { RuleId } from '../src/diagnosis/rule.js';
import { DEFAULT_RUNBOOK_BASE_URL } from '../src/diagnosis/runbook.js';
import { CLIENT_GO } from '../src/metrics/names.js';
import { escapeHtml } from '../src/server/page/render.js';
import { diagnoseSource } from '../src/service/diagnose-source.js';
import { meanMs } from '../src/simulate/distributions.js';
import { runVirtual, type SimulationParams } from '../src/simulate/index.js';
import { BACKLOG_SYNC, SATURATION_SYNC } from '../src/simulate/scenarios/capacity.js';
import { capacity, withSyncMs } from '../src/simulate/scenarios/common.js';
import { recordingSourceFromText } from '../src/sources/recording-source.js';
import { withoutFamilies } from '../src/store/recording-families.js';
import { scriptOptions, usageError } from './command-line.js';

const MINUTE = 60_000;
const FIRST_SEED = 9001;
const STEP_MS = MINUTE;
const RESULTS = 'docs/detection-curves.json';
const NAME = 'calibrate:curves';
const USAGE = 'npm run calibrate:curves -- [--seeds N] [--only TEXT]';

type Point = { readonly x: number; readonly label: string; readonly params: Partial<SimulationParams> };
/** One line of a panel: the same sweep on one queue kind, flavour or set of metric families. */
type Variant = {
  readonly label: string;
  readonly params: Partial<SimulationParams>;
  /** Metric families removed from the recording before it is diagnosed (a process that does not expose them). */
  readonly drop?: readonly string[];
};
type Sweep = {
  readonly rule: RuleId;
  readonly title: string;
  readonly axis: string;
  readonly scenario: string;
  readonly points: readonly Point[];
  readonly variants: readonly Variant[];
};

const PRIORITY: Variant = {
  label: 'controller-runtime, priority queue',
  params: { flavor: 'controller-runtime', queue: 'priority' },
};
const CLASSIC: Variant = {
  label: 'controller-runtime, classic queue',
  params: { flavor: 'controller-runtime', queue: 'classic' },
};
const COMPONENT_BASE: Variant = {
  label: 'component-base (classic queue, no reconcile or max-workers metrics)',
  params: { flavor: 'component-base' },
};
const ALL_KINDS = [PRIORITY, CLASSIC, COMPONENT_BASE] as const;
const REST_CLIENT = CLIENT_GO.restClientRequests.replace(/_total$/, '');

const BACKLOG_CAPACITY = capacity(4, BACKLOG_SYNC);
/** 8 workers of the backlog scenario's syncs moved to a median of a second: its standing queues wait seconds. */
const SLOW_BACKLOG_CAPACITY = capacity(8, withSyncMs(BACKLOG_SYNC, { syncMs: 1000 }));
const SATURATION_SYNC_S = meanMs(SATURATION_SYNC) / 1000;
const rate3 = (r: number) => Math.round(r * 1000) / 1000;

const SWEEPS: readonly Sweep[] = [
  {
    rule: 'WorkqueueBacklog',
    title: 'Backlog: offered load (4 workers, 200,000 keys)',
    axis: 'arrivals / capacity',
    scenario: 'backlog',
    points: [0.9, 0.95, 1.0, 1.02, 1.05, 1.1, 1.2, 1.3].map((load) => ({
      x: load,
      label: `${load}`,
      params: { rate: rate3(load * BACKLOG_CAPACITY) },
    })),
    variants: ALL_KINDS,
  },
  {
    rule: 'WorkqueueBacklog',
    title: 'Backlog: keys at 1.2× capacity, sudden',
    axis: 'keys',
    scenario: 'backlog',
    points: [20, 200, 2_000, 20_000, 100_000].map((keys) => ({
      x: keys,
      label: keys.toLocaleString('en-US'),
      params: { keys, rate: rate3(1.2 * BACKLOG_CAPACITY) },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueBacklog',
    title: 'Backlog: keys at 1.5× capacity behind 8 workers of 1.2 s syncs (a key waits 0.05 s per object)',
    axis: 'keys',
    scenario: 'backlog',
    points: [60, 90, 120, 180, 240, 480].map((keys) => ({
      x: keys,
      label: keys.toLocaleString('en-US'),
      params: { keys, workers: 8, syncMs: 1000, rate: rate3(1.5 * SLOW_BACKLOG_CAPACITY) },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueBacklog',
    title: 'Backlog: keys, load rising 0.5× to 1.3× over 30 minutes',
    axis: 'keys',
    scenario: 'gradual-backlog',
    points: [20, 200, 2_000, 20_000, 100_000].map((keys) => ({
      x: keys,
      label: keys.toLocaleString('en-US'),
      params: { keys, durationMs: 45 * MINUTE },
    })),
    variants: [PRIORITY, CLASSIC],
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
        params: { workers, rate: rate3((u * workers) / SATURATION_SYNC_S) },
      })),
      variants: [PRIORITY, COMPONENT_BASE],
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
    variants: [
      { ...PRIORITY, label: 'priority queue, with REST client metrics' },
      { ...PRIORITY, label: 'priority queue, without REST client metrics', drop: [REST_CLIENT] },
      { ...CLASSIC, label: 'classic queue, with REST client metrics' },
    ],
  },
  {
    rule: 'WorkqueuePersistentFailures',
    title: 'PersistentFailures: broken objects of 200',
    axis: 'failing objects',
    scenario: 'persistent-failure',
    points: [1, 5, 10, 20, 50].map((n) => ({
      x: n,
      label: `${n}`,
      params: { keys: 200, failingKeys: n, durationMs: 45 * MINUTE },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  ...(
    [
      ['hot-loop-status-write', 'writing status each sync'],
      ['hot-loop-no-backoff', 'failing each sync, re-added without backoff'],
      ['self-requeue-loop', 'requeueing itself, no writes or errors'],
    ] as const
  ).map(
    ([scenario, what]): Sweep => ({
      rule: 'WorkqueueHotLoop',
      title: `HotLoop: keys ${what}`,
      axis: 'looping keys',
      scenario,
      points: [1, 2, 3, 5].map((n) => ({ x: n, label: `${n}`, params: { loopKeys: n } })),
      variants: [PRIORITY, CLASSIC],
    }),
  ),
  {
    rule: 'WorkqueueHotLoop',
    title: 'HotLoop: one key writing status after a sync of N s (its adds a second: 1/N)',
    axis: 'looping sync, seconds',
    scenario: 'hot-loop-status-write',
    points: [0.25, 0.5, 0.7, 1, 1.5, 2.5].map((seconds) => ({
      x: seconds,
      label: `${seconds}`,
      params: { loopKeys: 1, syncMs: seconds * 1000 },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueHotLoop',
    title: 'HotLoop: two keys failing after N s behind a zero-delay limiter, beside the polls (errors a second: 2/N)',
    axis: 'failing sync, seconds',
    scenario: 'persistent-failure',
    points: [0.2, 0.5, 0.8, 1.2, 2, 4].map((seconds) => ({
      x: seconds,
      label: `${seconds}`,
      params: { workers: 4, failingKeys: 2, backoffBaseMs: 0, syncMs: seconds * 1000, durationMs: 45 * MINUTE },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueSlowWork',
    title: 'SlowWork: share of syncs blocking 24–36 s (2 syncs/s)',
    axis: 'blocking share',
    scenario: 'blocking-call',
    points: [0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01].map((share) => ({
      x: share,
      label: `${share * 100}%`,
      params: { blockingShare: share, blockingSeconds: 30 },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueSlowWork',
    title: 'SlowWork: length of blocking syncs (0.8% of 2 syncs/s)',
    axis: 'blocking sync, seconds (±20%)',
    scenario: 'blocking-call',
    points: [2, 5, 8, 10, 12.5, 20, 40].map((seconds) => ({
      x: seconds,
      label: `${seconds}`,
      params: { blockingSeconds: seconds },
    })),
    variants: [PRIORITY, CLASSIC],
  },
  {
    rule: 'WorkqueueStuckWorker',
    title: 'StuckWorker: one stuck of N workers',
    axis: 'workers',
    scenario: 'stuck-worker',
    points: [1, 2, 4, 8, 16].map((n) => ({ x: n, label: `${n}`, params: { workers: n } })),
    variants: [PRIORITY, COMPONENT_BASE],
  },
  {
    rule: 'WorkqueueStuckWorker',
    title: 'StuckWorker: long syncs that return (one in a thousand of 2 syncs/s)',
    axis: 'long sync, minutes (±20%)',
    scenario: 'blocking-call',
    points: [1, 2, 3, 4, 5, 6, 8].map((minutes) => ({
      x: minutes,
      label: `${minutes}`,
      params: { blockingShare: 0.001, blockingSeconds: minutes * 60 },
    })),
    variants: [PRIORITY, COMPONENT_BASE],
  },
];

type Measured = { readonly detected: number; readonly seeds: number; readonly medianMinutes: number | null };
/** Measurements by sweep title, then variant label, one per point in order. */
type Results = Record<string, Record<string, Measured[]>>;

/** Whether the rule fired at any judged step, and the first minute at which it fired, for one run. */
async function measureRun(
  sweep: Sweep,
  variant: Variant,
  point: Point,
  seed: number,
): Promise<{ firing: boolean; firstMinute: number | null }> {
  const run = await runVirtual(sweep.scenario, { seed, ...variant.params, ...point.params });
  const text = variant.drop === undefined ? run.recording.text() : withoutFamilies(run.recording.text(), variant.drop);
  const source = recordingSourceFromText(text, `${sweep.scenario}-${seed}.om`);
  try {
    const range = source.dataRange();
    if (range === undefined) throw new Error(`${sweep.scenario}: empty recording`);
    const backend = memoizedBackend(source.backend);
    let firstMinute: number | null = null;
    for (let at = range.startMs + 5 * MINUTE; at <= range.endMs && firstMinute === null; at += STEP_MS) {
      const report = await diagnoseSource(source, { atMs: at, runbookBaseUrl: DEFAULT_RUNBOOK_BASE_URL, backend });
      if (report.queues.some((q) => q.findings.some((f) => f.rule === sweep.rule && isFiring(f))))
        firstMinute = (at - range.startMs) / MINUTE;
    }
    return { firing: firstMinute !== null, firstMinute };
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
  const values = scriptOptions(NAME, USAGE, { seeds: { type: 'string' }, only: { type: 'string' } });
  const seeds = Number(values.seeds ?? '4');
  if (!Number.isInteger(seeds) || seeds < 1) usageError(NAME, USAGE, '--seeds must be a positive integer');
  const chosen = SWEEPS.filter((s) => values.only === undefined || s.title.includes(values.only));
  if (chosen.length === 0) usageError(NAME, USAGE, `no sweep title contains "${values.only}"`);
  const results: Results = existsSync(RESULTS) ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Results) : {};
  for (const sweep of chosen) {
    const byVariant: Record<string, Measured[]> = {};
    for (const variant of sweep.variants) {
      const measured: Measured[] = [];
      for (const point of sweep.points) {
        const runs = [];
        for (let s = 0; s < seeds; s++) runs.push(await measureRun(sweep, variant, point, FIRST_SEED + s));
        const detected = runs.filter((r) => r.firing).length;
        const times = runs.filter((r) => r.firing && r.firstMinute !== null).map((r) => r.firstMinute as number);
        measured.push({ detected, seeds, medianMinutes: median(times) });
        process.stderr.write(
          `${sweep.title} [${variant.label}] @ ${point.label}: ${detected}/${seeds}, median ${median(times) ?? '-'} min\n`,
        );
      }
      byVariant[variant.label] = measured;
    }
    results[sweep.title] = byVariant;
    writeFileSync(RESULTS, `${JSON.stringify(results, null, 1)}\n`);
  }
  const drawn = SWEEPS.filter((s) => results[s.title] !== undefined).map((sweep) => ({
    sweep,
    lines: sweep.variants
      .map((variant) => ({ variant, measured: results[sweep.title]?.[variant.label] }))
      .filter((l): l is { variant: Variant; measured: Measured[] } => l.measured?.length === sweep.points.length),
  }));
  writeFileSync('docs/detection-curves.svg', svg(drawn));
  writeFileSync('docs/detection-curves.md', table(drawn));
  process.stdout.write(table(drawn));
}

type Drawn = ReadonlyArray<{
  sweep: Sweep;
  lines: ReadonlyArray<{ variant: Variant; measured: readonly Measured[] }>;
}>;

function table(results: Drawn): string {
  const lines = [
    `Detection curves: the share of fresh seeds (${FIRST_SEED} on) on which the rule fired (judged every minute from the fifth), and the median minute of its first firing, per queue kind and metric flavour. Regenerate with \`npm run calibrate:curves\` (results kept in \`${RESULTS}\`).`,
    '',
  ];
  for (const { sweep, lines: variants } of results) {
    lines.push(`**${sweep.title}** (\`${sweep.scenario}\`)`, '');
    lines.push(`| ${sweep.axis} | ${sweep.points.map((p) => p.label).join(' | ')} |`);
    lines.push(`|---|${sweep.points.map(() => '---').join('|')}|`);
    for (const { variant, measured } of variants) {
      lines.push(`| ${variant.label}: detected | ${measured.map((m) => `${m.detected}/${m.seeds}`).join(' | ')} |`);
      lines.push(
        `| median minutes | ${measured.map((m) => (m.medianMinutes === null ? '–' : `${m.medianMinutes}`)).join(' | ')} |`,
      );
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

const COLOURS = ['#1f77b4', '#d62728', '#2ca02c'] as const;
const DASHES = ['', '6 3', '2 3'] as const;

/** One small panel per sweep: the detected share of each variant (line and points), a legend below the title. */
function svg(results: Drawn): string {
  const W = 380;
  const H = 250;
  const cols = 2;
  const pad = { left: 44, right: 14, top: 30 + 11 * 3, bottom: 40 };
  const rows = Math.ceil(results.length / cols);
  const parts: string[] = [];
  results.forEach(({ sweep, lines }, index) => {
    const ox = (index % cols) * W;
    const oy = Math.floor(index / cols) * H;
    const plotW = W - pad.left - pad.right;
    const plotH = H - pad.top - pad.bottom;
    const xAt = (i: number) =>
      ox + pad.left + (sweep.points.length === 1 ? plotW / 2 : (i * plotW) / (sweep.points.length - 1));
    const yAt = (share: number) => oy + pad.top + (1 - share) * plotH;
    parts.push(
      `<text x="${ox + 8}" y="${oy + 16}" font-size="12" font-weight="bold">${escapeHtml(sweep.title)}</text>`,
      `<line x1="${ox + pad.left}" y1="${yAt(0)}" x2="${ox + pad.left + plotW}" y2="${yAt(0)}" stroke="#888"/>`,
      `<line x1="${ox + pad.left}" y1="${yAt(0)}" x2="${ox + pad.left}" y2="${yAt(1)}" stroke="#888"/>`,
      `<text x="${ox + pad.left - 6}" y="${yAt(1) + 4}" font-size="10" text-anchor="end">100%</text>`,
      `<text x="${ox + pad.left - 6}" y="${yAt(0) + 4}" font-size="10" text-anchor="end">0%</text>`,
      `<text x="${ox + pad.left + plotW / 2}" y="${oy + H - 6}" font-size="10" text-anchor="middle">${escapeHtml(sweep.axis)}</text>`,
    );
    sweep.points.forEach((p, i) => {
      parts.push(
        `<text x="${xAt(i).toFixed(1)}" y="${yAt(0) + 13}" font-size="9" text-anchor="middle">${escapeHtml(p.label)}</text>`,
      );
    });
    lines.forEach(({ variant, measured }, v) => {
      const colour = COLOURS[v % COLOURS.length];
      const dash = DASHES[v % DASHES.length];
      const legendY = oy + 30 + v * 11;
      parts.push(
        `<line x1="${ox + 10}" y1="${legendY - 3}" x2="${ox + 30}" y2="${legendY - 3}" stroke="${colour}" stroke-width="2"${dash === '' ? '' : ` stroke-dasharray="${dash}"`}/>`,
        `<text x="${ox + 34}" y="${legendY}" font-size="9">${escapeHtml(variant.label)}</text>`,
      );
      // Lines that coincide stay visible: each is nudged by a pixel.
      const nudge = v - (lines.length - 1) / 2;
      const path = measured.map(
        (m, i) => `${i === 0 ? 'M' : 'L'}${xAt(i).toFixed(1)},${(yAt(m.detected / m.seeds) + nudge * 2).toFixed(1)}`,
      );
      parts.push(
        `<path d="${path.join(' ')}" fill="none" stroke="${colour}" stroke-width="2"${dash === '' ? '' : ` stroke-dasharray="${dash}"`}/>`,
      );
      measured.forEach((m, i) => {
        const x = xAt(i);
        const y = yAt(m.detected / m.seeds) + nudge * 2;
        parts.push(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="2.5" fill="${colour}"/>`);
        if (v === 0 && m.medianMinutes !== null) {
          parts.push(
            `<text x="${x.toFixed(1)}" y="${(y - 7).toFixed(1)}" font-size="9" text-anchor="middle" fill="#555">${m.medianMinutes}m</text>`,
          );
        }
      });
    });
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${cols * W}" height="${rows * H}" font-family="sans-serif">\n<rect width="100%" height="100%" fill="white"/>\n${parts.join('\n')}\n</svg>\n`;
}

await main();
