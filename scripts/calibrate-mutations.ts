/**
 * `npm run calibrate:mutations [-- --grid FILE[,FILE…]] [--rules A,B] [--part I/N] [--out FILE] [--report FILE] [--reasons FILE] [--keep]`: every threshold of every rule halved
 * and doubled, and every clause of every condition dropped, each run through the calibration (the cases of the
 * grids, default the held-out grid and the boundary cases, judged at every step), and whether the calibration catches it (some verdict
 * turns wrong, or, for a mutation every case leaves right, the gradual backlog is found later than the product promises:
 * src/calibrate/gradual-backlog-promise.ts). Writes the results as JSON (default calibration/mutations.json) and as a Markdown report (default
 * docs/mutations.md, `--report FILE`), and prints the report's table.
 * Thresholds only the texts read are listed, not run. With `--keep`, the results of rules not run this time are kept
 * from the existing output file (run over the same grid), so the rules can be run apart and reported together.
 * With `--join FILE,FILE…`, nothing is run: the results of runs made apart over the same grid (each `--rules … --out
 * FILE`, e.g. one process per core) are joined into `--out` and the report, in the order of a run of every rule.
 * The report gives each green mutation its reason from `--reasons` (default calibration/uncaught-mutations.json);
 * a reason for a mutation that was caught or not run is an error (exit code 2), so none outlives its mutation.
 *
 * Exit code: 0 when every mutation is caught, 1 when some stay green (each is a missing boundary case), 2 for bad
 * arguments or a calibration that fails without any mutation.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { GRADUAL_BACKLOG_PROMISE_MS, gradualBacklogRuns } from '../src/calibrate/gradual-backlog-promise.js';
import { parseCalibrationGrid } from '../src/calibrate/grid.js';
import {
  describeMutation,
  type GreenReason,
  greenSummary,
  type MutationResult,
  mutations,
  mutationsMarkdown,
  parseGreenReasons,
  runMutations,
  thresholdsByUse,
} from '../src/calibrate/mutations.js';
import { RULE_IDS, type RuleId } from '../src/diagnosis/rule.js';
import { scriptOptions, usageError } from './command-line.js';

/** The calibration: the held-out grid and the boundary cases, together. */
const DEFAULT_GRID = 'calibration/held-out.json,calibration/boundaries.json';
const DEFAULT_OUT = 'calibration/mutations.json';
const DEFAULT_REPORT = 'docs/mutations.md';
/** Why each green mutation stays green (see `parseGreenReasons`). */
const DEFAULT_REASONS = 'calibration/uncaught-mutations.json';
const REPORT_INTRO =
  'Mutations of every rule over the held-out grid and the boundary grid, written by `npm run calibrate:mutations` ' +
  '(every result in `calibration/mutations.json`). Each mutation halves or doubles one threshold, or drops one clause ' +
  'of a condition; it is caught when some verdict of the calibration turns wrong, or, where every verdict stays ' +
  `right, when the gradual backlog is found later than the product promises (${GRADUAL_BACKLOG_PROMISE_MS / 60_000} minutes ` +
  'after its queue last drained, both flavours, ten seeds: `test/calibrate/gradual-backlog.test.ts`). A mutation that is not caught is a ' +
  'boundary case the calibration lacks, or a clause the others imply. Why each green one stays green is in ' +
  '`calibration/uncaught-mutations.json`: `implied` (another clause holds wherever it decides, by how the queues count), ' +
  '`allowed` (wherever it changes the answer, the truth allows either) or `missing` (a controller that would catch it is ' +
  'not simulated yet). Results of rules run apart (`--rules … --keep`) are joined in one report.';

const USAGE =
  'npm run calibrate:mutations -- [--grid FILE[,FILE…]] [--rules A,B] [--part I/N] [--out FILE] [--report FILE] [--reasons FILE] [--keep] [--join FILE,FILE…]';

function usage(message: string): never {
  usageError('calibrate:mutations', USAGE, message);
}

async function main(): Promise<void> {
  const values = parse();
  const grid = values.grid ?? DEFAULT_GRID;
  const out = values.out ?? DEFAULT_OUT;
  if (values.join !== undefined) {
    const joined = joinRuns(values.join.split(','), grid);
    writeResults(out, values, grid, joined.cases, joined.results);
    return;
  }
  const rules = values.rules?.split(',').map((r) => r.trim()) as RuleId[] | undefined;
  for (const r of rules ?? []) if (!RULE_IDS.includes(r)) usage(`unknown rule ${r} (rules: ${RULE_IDS.join(', ')})`);
  let cases: ReturnType<typeof parseCalibrationGrid>;
  try {
    cases = grid.split(',').flatMap((file) => parseCalibrationGrid(readFileSync(file, 'utf8'), file));
  } catch (error) {
    usage((error as Error).message);
  }
  const list = inPart(mutations(rules), values.part);
  process.stderr.write(
    `${list.length} mutations over ${cases.length} cases of ${grid}, then the gradual backlog's promise\n`,
  );
  const started = performance.now();
  let results: MutationResult[];
  const promise = await gradualBacklogRuns();
  try {
    results = await runMutations(
      cases,
      list,
      (result, index) => {
        const verdict = result.caught
          ? `caught by ${result.by?.case} at ${result.by?.minute}m (missed [${result.by?.missed.join(',')}] unexpected [${result.by?.unexpected.join(',')}])`
          : `NOT caught (${result.casesRun} cases)`;
        process.stderr.write(`[${index + 1}/${list.length}] ${describeMutation(result.mutation)}: ${verdict}\n`);
      },
      promise,
    );
  } catch (error) {
    usage((error as Error).message);
  } finally {
    for (const run of promise) await run.close();
  }
  if (values.keep === true && rules !== undefined) results = [...kept(out, grid, rules), ...results];
  const summary = writeResults(out, values, grid, cases.length, results);
  process.stdout.write(`in ${Math.round((performance.now() - started) / 1000)} s; ${summary}\n`);
}

/**
 * Writes `results` as JSON to `out`, then checks the green ones' reasons and writes the Markdown report, prints the
 * table; returns the summary line. The results are written first: a stale reason stops the report, never loses the run.
 */
function writeResults(
  out: string,
  files: {
    readonly report?: string | undefined;
    readonly reasons?: string | undefined;
    readonly part?: string | undefined;
  },
  grid: string,
  cases: number,
  results: readonly MutationResult[],
): string {
  const reported = new Set(results.map((r) => r.mutation.rule));
  const textOnly = thresholdsByUse()
    .filter((u) => reported.has(u.rule))
    .flatMap((u) => u.textOnly.map((threshold) => ({ rule: u.rule, threshold })));
  const caught = results.filter((r) => r.caught).length;
  writeFileSync(
    out,
    `${JSON.stringify({ grid, cases, mutations: results.length, caught, textOnly, results }, null, 2)}\n`,
  );
  const reasons = greenReasons(files.reasons ?? DEFAULT_REASONS, results, files.part !== undefined);
  const table = mutationsMarkdown(results, textOnly, reasons);
  const green = caught === results.length ? '' : ` (green: ${greenSummary(results, reasons)})`;
  const summary = `${caught} of ${results.length} mutations caught over ${cases} cases of ${grid}${green}`;
  writeFileSync(files.report ?? DEFAULT_REPORT, `${REPORT_INTRO}\n\n${table}\n${summary}\n`);
  process.stdout.write(`${table}\n${summary}\n`);
  process.exitCode = caught === results.length ? 0 : 1;
  return `results in ${out}`;
}

/** The reasons in `file` for the green `results` (none when the file does not exist); bad or stale ones stop the run. */
function greenReasons(file: string, results: readonly MutationResult[], part: boolean): Map<string, GreenReason> {
  if (!existsSync(file)) return new Map();
  try {
    return parseGreenReasons(readFileSync(file, 'utf8'), file, results, part);
  } catch (error) {
    usage((error as Error).message);
  }
}

/** The results of runs made apart over `grid`, in the order of a run of every rule; each mutation once. */
function joinRuns(files: readonly string[], grid: string): { cases: number; results: MutationResult[] } {
  const order = mutations().map(describeMutation);
  const byMutation = new Map<string, MutationResult>();
  let cases: number | undefined;
  for (const file of files) {
    const run = JSON.parse(readFileSync(file, 'utf8')) as { grid?: string; cases?: number; results?: MutationResult[] };
    if (run.grid !== grid) usage(`--join: ${file} holds a run over ${run.grid}, not ${grid}`);
    if (cases !== undefined && run.cases !== cases) usage(`--join: ${file} ran ${run.cases} cases, not ${cases}`);
    cases = run.cases;
    for (const result of run.results ?? []) {
      const name = describeMutation(result.mutation);
      if (byMutation.has(name)) usage(`--join: ${name} is in more than one file`);
      byMutation.set(name, result);
    }
  }
  const results = [...byMutation.values()].sort(
    (a, b) => order.indexOf(describeMutation(a.mutation)) - order.indexOf(describeMutation(b.mutation)),
  );
  return { cases: cases ?? 0, results };
}

function parse() {
  return scriptOptions('calibrate:mutations', USAGE, {
    grid: { type: 'string' },
    rules: { type: 'string' },
    out: { type: 'string' },
    report: { type: 'string' },
    reasons: { type: 'string' },
    keep: { type: 'boolean' },
    join: { type: 'string' },
    part: { type: 'string' },
  });
}

/**
 * `--part I/N`: every Nth mutation of `list` from the Ith (1 ≤ I ≤ N), so that N processes share one rule's
 * mutations (each `--out` apart, joined with `--join`); interleaved, since green mutations, which run every case,
 * tend to sit together. All of them without `--part`.
 */
function inPart<T>(list: readonly T[], part: string | undefined): readonly T[] {
  if (part === undefined) return list;
  const match = /^(\d+)\/(\d+)$/.exec(part);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (match === null || count < 1 || index < 1 || index > count) usage(`--part ${part}: expected I/N with 1 ≤ I ≤ N`);
  return list.filter((_, i) => i % count === index - 1);
}

/** The results in `out` of rules other than `rules`, when `out` holds a run over `grid`. */
function kept(out: string, grid: string, rules: readonly RuleId[]): MutationResult[] {
  if (!existsSync(out)) return [];
  const previous = JSON.parse(readFileSync(out, 'utf8')) as { grid?: string; results?: MutationResult[] };
  if (previous.grid !== grid) usage(`--keep: ${out} holds a run over ${previous.grid}, not ${grid}`);
  return (previous.results ?? []).filter((r) => !rules.includes(r.mutation.rule));
}

await main();
