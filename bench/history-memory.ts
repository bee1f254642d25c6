/**
 * Memory of the history: 50 work queues scraped every 15 s for 30 minutes (121 scrapes), the
 * diagnostic families kept. Run: `node --expose-gc --import tsx bench/history-memory.ts`.
 */

import { keepFamilies, parseExposition } from '../src/exposition/parser.js';
import { DIAGNOSTIC_FAMILIES } from '../src/metrics/names.js';
import { History } from '../src/store/history.js';
import { pageWithQueues } from './controller-manager-page.js';

const gc = (globalThis as { gc?: () => void }).gc;
const mib = (n: number): string => (n / 2 ** 20).toFixed(1);
const keep = keepFamilies(DIAGNOSTIC_FAMILIES);
const QUEUES = 50;
const SCRAPES = 121;

gc?.();
const before = process.memoryUsage();
const history = new History();
const T0 = Date.UTC(2025, 0, 1);
let lines = 0;
for (let i = 0; i < SCRAPES; i++) {
  // A fresh page per scrape (different values), as a scraper would get.
  const page = pageWithQueues(QUEUES, i + 1);
  lines = page.lines;
  history.append(
    { id: 'cm', labels: { job: 'kube-controller-manager', instance: '10.0.0.1:10257' } },
    parseExposition(page.text, { keep }),
    T0 + i * 15_000,
  );
}
gc?.();
const after = process.memoryUsage();
const stats = history.stats();
console.log(`| queues | scrapes | page lines | series | samples held | sample arrays | heap used Δ | RSS | RSS Δ |`);
console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
console.log(
  `| ${QUEUES} | ${SCRAPES} | ${lines} | ${stats.series} | ${stats.samples} | ${mib(stats.bytes)} MiB | ${mib(after.heapUsed - before.heapUsed)} MiB | ${mib(after.rss)} MiB | ${mib(after.rss - before.rss)} MiB |`,
);
if (gc === undefined) console.log('\n(run with --expose-gc for exact heap figures)');
