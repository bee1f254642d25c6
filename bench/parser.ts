/**
 * Parser throughput on generated controller-manager pages (50,000 and 200,000 lines), against
 * parse-prometheus-text-format in the same run. Run: `npx tsx bench/parser.ts`.
 *
 * Each page is decoded from bytes first, as an HTTP body would be (a flat string). Runs of the
 * parsers are interleaved so that load from other processes hits them alike; the table gives the
 * fastest and the median run.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { keepFamilies, parseExposition } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../src/metrics/names.js';
import { controllerManagerPage } from './controller-manager-page.js';

const parsePeer = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => { metrics: unknown[] }[];

const keep = keepFamilies(DIAGNOSTIC_FAMILIES);

interface Contender {
  readonly name: string;
  readonly run: (text: string) => unknown;
  readonly times: number[];
}

function stats(times: readonly number[]): { min: number; median: number } {
  const s = [...times].sort((a, b) => a - b);
  return { min: s[0] as number, median: s[Math.floor(s.length / 2)] as number };
}

const lines: string[] = [];
lines.push(
  '| page | parser | fastest ms | median ms | MB/s (fastest) | samples/s (fastest) | samples/s (median) | speed-up vs peer (fastest / median) |',
);
lines.push('|---|---|---:|---:|---:|---:|---:|---:|');

for (const target of [50_000, 200_000]) {
  const page = controllerManagerPage(target);
  const text = Buffer.from(page.text, 'utf8').toString('utf8');
  const skipped = parseExposition(text, { keep }).skippedLines;
  const contenders: Contender[] = [
    { name: 'workqueue-doctor `parseExposition`', run: (t) => parseExposition(t), times: [] },
    {
      name: `workqueue-doctor, \`keep\` = diagnostic families (${skipped} lines skipped)`,
      run: (t) => parseExposition(t, { keep }),
      times: [],
    },
    { name: 'parse-prometheus-text-format 1.1.1', run: (t) => parsePeer(t), times: [] },
  ];
  const ours = parseExposition(text);
  if (ours.samples.count !== page.samples) throw new Error(`parsed ${ours.samples.count} of ${page.samples} samples`);
  const rounds = target > 100_000 ? 12 : 25;
  for (let round = -3; round < rounds; round++) {
    for (const c of contenders) {
      const t0 = performance.now();
      c.run(text);
      const ms = performance.now() - t0;
      if (round >= 0) c.times.push(ms);
    }
  }
  const peer = stats((contenders[2] as Contender).times);
  const label = `${page.lines.toLocaleString('en')} lines, ${(page.bytes / 1e6).toFixed(1)} MB, ${page.samples.toLocaleString('en')} samples`;
  for (const c of contenders) {
    const s = stats(c.times);
    const speedup =
      c === contenders[2] ? '1.0 / 1.0' : `${(peer.min / s.min).toFixed(1)} / ${(peer.median / s.median).toFixed(1)}`;
    lines.push(
      `| ${label} | ${c.name} | ${s.min.toFixed(1)} | ${s.median.toFixed(1)} | ${(page.bytes / 1e6 / (s.min / 1000)).toFixed(0)} | ${(page.samples / (s.min / 1000) / 1e6).toFixed(2)} M | ${(page.samples / (s.median / 1000) / 1e6).toFixed(2)} M | ${speedup} |`,
    );
  }
}

console.log(`Node ${process.version} on ${process.arch}; interleaved runs after 3 warm-up rounds.\n`);
console.log(lines.join('\n'));
