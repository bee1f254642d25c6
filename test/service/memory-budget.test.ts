/**
 * One memory budget: the container's limit read from its cgroup files (here under a fake root), or `memory.limit`,
 * sizes every limit not given, within the budget by the module's own arithmetic, and never the less for more memory.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/config-error.js';
import { resolveServiceConfig } from '../../src/config/service-config.js';
import { DEFAULT_SCRAPE_SETTINGS } from '../../src/scrape/scrape-settings.js';
import { DEFAULT_ANSWER_CACHE } from '../../src/service/answer-budget.js';
import {
  CGROUP_V1_MEMORY_LIMIT,
  CGROUP_V2_MEMORY_MAX,
  readContainerMemoryLimit,
} from '../../src/service/container-memory.js';
import {
  applyMemoryBudget,
  type BudgetShape,
  chargedBytes,
  type DerivedLimits,
  deriveLimits,
  MEMORY_COSTS,
} from '../../src/service/memory-budget.js';

const MiB = 1024 * 1024;
const roots: string[] = [];

afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A directory standing for `/`, with the given files (paths as absolute in the container). */
function fakeRoot(files: Readonly<Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'wqd-cgroup-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const SIDECAR: BudgetShape = { targets: 1, concurrency: 8, intervalMs: 15_000, retentionMs: 30 * 60_000 };
const STANDALONE: BudgetShape = { targets: undefined, concurrency: 8, intervalMs: 15_000, retentionMs: 30 * 60_000 };

describe('the container memory limit', () => {
  it('reads cgroup v2 memory.max', async () => {
    const root = fakeRoot({ [CGROUP_V2_MEMORY_MAX]: '201326592\n' });
    expect(await readContainerMemoryLimit(root)).toEqual({ bytes: 192 * MiB, from: CGROUP_V2_MEMORY_MAX });
  });

  it('finds none in a cgroup v2 memory.max of max, and does not fall back to v1', async () => {
    const root = fakeRoot({ [CGROUP_V2_MEMORY_MAX]: 'max\n', [CGROUP_V1_MEMORY_LIMIT]: '201326592\n' });
    expect(await readContainerMemoryLimit(root)).toBeUndefined();
  });

  it('falls back to cgroup v1 memory.limit_in_bytes', async () => {
    const root = fakeRoot({ [CGROUP_V1_MEMORY_LIMIT]: '402653184\n' });
    expect(await readContainerMemoryLimit(root)).toEqual({ bytes: 384 * MiB, from: CGROUP_V1_MEMORY_LIMIT });
  });

  it('ignores the absurd number of an unlimited cgroup v1', async () => {
    const root = fakeRoot({ [CGROUP_V1_MEMORY_LIMIT]: '9223372036854771712\n' });
    expect(await readContainerMemoryLimit(root)).toBeUndefined();
  });

  it('finds none without cgroup files, or in files that say something else', async () => {
    expect(await readContainerMemoryLimit(fakeRoot({}))).toBeUndefined();
    expect(await readContainerMemoryLimit(fakeRoot({ [CGROUP_V2_MEMORY_MAX]: 'lots' }))).toBeUndefined();
    expect(await readContainerMemoryLimit(fakeRoot({ [CGROUP_V1_MEMORY_LIMIT]: '0\n' }))).toBeUndefined();
    expect(
      await readContainerMemoryLimit(fakeRoot({ [CGROUP_V2_MEMORY_MAX]: `${'1'.repeat(100)}\n` })),
    ).toBeUndefined();
  });
});

describe('the budget', () => {
  const budgets = [128, 160, 192, 256, 384, 512, 1024, 4096].map((m) => m * MiB);

  it.each([
    ['one target', SIDECAR],
    ['three static targets', { ...SIDECAR, targets: 3 }],
    ['discovered targets', STANDALONE],
    ['a 5 s interval, 1 h retention', { ...SIDECAR, intervalMs: 5_000, retentionMs: 3_600_000 }],
  ])('%s: the worst input inside the derived limits fits the budget', (_name, shape) => {
    for (const limit of budgets) {
      let derived: ReturnType<typeof deriveLimits>;
      try {
        derived = deriveLimits(limit, shape);
      } catch (error) {
        // Too little memory is said, not sized into nothing.
        expect(error).toBeInstanceOf(RangeError);
        continue;
      }
      expect(chargedBytes(derived.limits, shape)).toBeLessThanOrEqual(limit);
      const { limits } = derived;
      for (const value of [
        limits.maxBytes,
        limits.seriesLimit,
        limits.heldSeriesLimit,
        limits.queueLimit,
        limits.totalSeriesLimit,
        limits.totalQueueLimit,
        limits.labelValueLimit,
        limits.labelSetLengthLimit,
      ]) {
        expect(Number.isInteger(value) && value > 0).toBe(true);
      }
      // A target's limits never pass the fixed defaults, nor the totals.
      expect(limits.seriesLimit).toBeLessThanOrEqual(
        Math.min(DEFAULT_SCRAPE_SETTINGS.seriesLimit, limits.heldSeriesLimit),
      );
      expect(limits.heldSeriesLimit).toBeLessThanOrEqual(limits.totalSeriesLimit);
      expect(limits.queueLimit).toBeLessThanOrEqual(
        Math.min(DEFAULT_SCRAPE_SETTINGS.queueLimit, limits.totalQueueLimit),
      );
      expect(limits.maxBytes).toBeLessThanOrEqual(DEFAULT_SCRAPE_SETTINGS.maxBytes);
      expect(limits.answerCache.reports.maxBytes).toBeLessThanOrEqual(DEFAULT_ANSWER_CACHE.reports.maxBytes);
    }
  });

  it.each([
    ['one target', SIDECAR],
    ['discovered targets', STANDALONE],
  ])('%s: every limit is non-decreasing in the budget', (_name, shape) => {
    const fitting = budgets.flatMap((limit) => {
      try {
        return [deriveLimits(limit, shape).limits];
      } catch {
        return [];
      }
    });
    expect(fitting.length).toBeGreaterThan(4);
    for (let i = 1; i < fitting.length; i++) {
      const less = fitting[i - 1] as DerivedLimits;
      const more = fitting[i] as DerivedLimits;
      // Every numeric limit, whichever the budget sizes now or later.
      const numeric = Object.keys(more).filter((key) => typeof more[key as keyof DerivedLimits] === 'number');
      expect(numeric.length).toBeGreaterThanOrEqual(8);
      for (const key of numeric as (keyof DerivedLimits)[]) {
        expect(more[key], key).toBeGreaterThanOrEqual(less[key] as number);
      }
      expect(more.answerCache.reports.maxBytes).toBeGreaterThanOrEqual(less.answerCache.reports.maxBytes);
    }
  });

  it('says what is too little memory, naming what the service needs', () => {
    expect(() => deriveLimits(64 * MiB, SIDECAR)).toThrow(
      /64 MiB is too little memory: the service needs \d+ MiB itself/,
    );
  });

  it('charges the service, the page, the history and the caches as the module states', () => {
    const { limits, parts } = deriveLimits(192 * MiB, SIDECAR);
    expect(parts.service).toBe(MEMORY_COSTS.serviceBytes);
    expect(parts.service + parts.pages + parts.answers + parts.queues + parts.series).toBeCloseTo(192 * MiB);
    expect(limits.totalSeriesLimit * parts.perSeries).toBeLessThanOrEqual(parts.series);
    expect(limits.totalQueueLimit * MEMORY_COSTS.queueBytes).toBeLessThanOrEqual(parts.queues);
  });
});

describe('docs/deployment.md (Resources)', () => {
  const doc = readFileSync(new URL('../../docs/deployment.md', import.meta.url), 'utf8');
  const count = (n: number) => n.toLocaleString('en-US');
  const mib = (bytes: number) => `${Number.isInteger(bytes / MiB) ? bytes / MiB : (bytes / MiB).toFixed(1)} MiB`;

  it.each([
    ['192 MiB (the sidecar: one target)', 192, SIDECAR],
    ['384 MiB (the standalone Deployment: discovery)', 384, STANDALONE],
  ])('states what the budget gives: %s', (row, limit, shape) => {
    const { limits } = deriveLimits(limit * MiB, shape);
    const cache = limits.answerCache;
    const cells = [
      row,
      mib(limits.maxBytes),
      `${count(limits.seriesLimit)} / ${count(limits.heldSeriesLimit)}`,
      count(limits.totalSeriesLimit),
      `${count(limits.queueLimit)} / ${count(limits.totalQueueLimit)}`,
      `${limits.labelValueLimit} / ${limits.labelSetLengthLimit}`,
      mib(cache.reports.maxBytes + cache.queues.maxBytes + cache.series.maxBytes),
      `${Math.round(chargedBytes(limits, shape) / MiB)} MiB`,
    ];
    expect(doc).toContain(`| ${cells.join(' | ')} |`);
  });
});

describe('applying the budget to the configuration', () => {
  const resolve = (flags: Record<string, unknown>, env: Record<string, string> = {}) =>
    resolveServiceConfig({ flags: { target: ['http://127.0.0.1:8080/metrics'], ...flags }, env });

  it('sizes every limit not given from the container, and logs where the budget came from', () => {
    const container = { bytes: 192 * MiB, from: CGROUP_V2_MEMORY_MAX };
    const { config, budget } = applyMemoryBudget(resolve({}), container);
    const derived = deriveLimits(192 * MiB, SIDECAR).limits;
    expect(budget?.from).toBe(CGROUP_V2_MEMORY_MAX);
    expect(config.scrape).toMatchObject({
      maxBytes: derived.maxBytes,
      seriesLimit: derived.seriesLimit,
      heldSeriesLimit: derived.heldSeriesLimit,
      queueLimit: derived.queueLimit,
      totalSeriesLimit: derived.totalSeriesLimit,
      labelSetLengthLimit: derived.labelSetLengthLimit,
    });
  });

  it('lets memory.limit win over the container, and max mean the fixed limits', () => {
    const container = { bytes: 4096 * MiB, from: CGROUP_V2_MEMORY_MAX };
    const given = applyMemoryBudget(resolve({}, { WQD_MEMORY_LIMIT: '192Mi' }), container);
    expect(given.budget).toMatchObject({ limitBytes: 192 * MiB, from: 'WQD_MEMORY_LIMIT' });
    expect(given.config.scrape.seriesLimit).toBe(deriveLimits(192 * MiB, SIDECAR).limits.seriesLimit);
    const max = applyMemoryBudget(resolve({ memoryLimit: 'max' }), container);
    expect(max.budget).toBeUndefined();
    expect(max.config.scrape).toEqual(resolve({}).scrape);
  });

  it('keeps the fixed limits without any memory limit', () => {
    const { config, budget } = applyMemoryBudget(resolve({}), undefined);
    expect(budget).toBeUndefined();
    expect(config.scrape).toMatchObject({
      seriesLimit: DEFAULT_SCRAPE_SETTINGS.seriesLimit,
      queueLimit: DEFAULT_SCRAPE_SETTINGS.queueLimit,
      maxBytes: DEFAULT_SCRAPE_SETTINGS.maxBytes,
      heldSeriesLimit: DEFAULT_SCRAPE_SETTINGS.heldSeriesLimit,
    });
  });

  it('keeps every explicit setting, and a derived limit follows the explicit one it depends on', () => {
    const { config } = applyMemoryBudget(
      resolve({ memoryLimit: '192Mi', scrapeSeriesLimit: '9000', scrapeQueueLimit: '300', scrapeMaxBytes: '8388608' }),
      undefined,
    );
    expect(config.scrape.seriesLimit).toBe(9000);
    expect(config.scrape.queueLimit).toBe(300);
    expect(config.scrape.maxBytes).toBe(8 * MiB);
    expect(config.scrape.heldSeriesLimit).toBeGreaterThanOrEqual(9000);
    expect(config.scrape.totalSeriesLimit).toBeGreaterThanOrEqual(config.scrape.heldSeriesLimit);
    expect(config.scrape.totalQueueLimit).toBeGreaterThanOrEqual(300);
  });

  it('names the setting of a budget too small', () => {
    expect(() => applyMemoryBudget(resolve({ memoryLimit: '64Mi' }), undefined)).toThrow(ConfigError);
    expect(() => applyMemoryBudget(resolve({ memoryLimit: '64Mi' }), undefined)).toThrow(/^--memory-limit: /);
  });

  it('reads memory.limit as a size, or max', () => {
    expect(resolve({ memoryLimit: '1.5Gi' }).memoryLimit).toBe(1.5 * 1024 * MiB);
    expect(resolve({}, { WQD_MEMORY_LIMIT: '201326592' }).memoryLimit).toBe(192 * MiB);
    expect(resolve({ memoryLimit: 'max' }).memoryLimit).toBe(Number.POSITIVE_INFINITY);
    expect(() => resolve({ memoryLimit: '192 MB' })).toThrow(/^--memory-limit: invalid memory size "192 MB"/);
  });
});
