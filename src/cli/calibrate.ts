/**
 * `workqueue-doctor calibrate`: runs every scenario over N seeds (and an optional grid of parameters),
 * diagnoses each recording at its end, and prints the confusion matrix with precision and recall per rule.
 * Exit code 1 when a queue misses an expected diagnosis or shows one outside expected ∪ allowed.
 */
import { type Command, Option } from 'commander';
import { confusionMatrix, failability, type QueueVerdict, scoreRules } from '../calibrate/compare.js';
import { GridError, parseCalibrationGrid } from '../calibrate/grid.js';
import { type CalibrationCase, describeCase, runCase } from '../calibrate/run.js';
import type { RuleOverrides } from '../diagnosis/catalog.js';
import {
  DEFAULT_FLAVOR,
  FLAVORS,
  type Flavor,
  QUEUE_KINDS,
  type QueueKind,
  queueKindsOf,
  SCENARIO_NAMES,
} from '../simulate/index.js';
import { loadCommandConfig } from './config-file.js';
import { EXIT, UsageError } from './exit-codes.js';
import { readTextFile } from './input-files.js';

type CalibrateFlags = {
  seeds: string;
  grid?: string;
  scenario?: string[];
  everyStep?: boolean;
  flavor?: Flavor[];
  queue?: QueueKind[];
  output: 'text' | 'json';
  config?: string;
};

export function registerCalibrateCommand(program: Command): void {
  program
    .command('calibrate')
    .description(
      'Run every scenario on virtual time, diagnose it, and score the findings against its ground truth: confusion matrix, precision and recall per rule. Exit code 1 when any queue misses an expected diagnosis or shows an unexpected one.',
    )
    .option('--seeds <n>', 'seeds per scenario (1..n)', '5')
    .option(
      '--grid <file>',
      'a JSON list of cases ({scenario, seed, workers, keys, rate, durationMs, flavor, queue, background}) to run instead',
    )
    .option('--scenario <name...>', 'only these scenarios')
    .addOption(
      new Option(
        '--flavor <flavor...>',
        'run each seed in these metrics flavors (default: the scenario default)',
      ).choices(FLAVORS),
    )
    .addOption(
      new Option(
        '--queue <kind...>',
        "run each controller-runtime seed with these queues (default: the flavor's, the priority queue for controller-runtime); component-base runs only the classic queue",
      ).choices(QUEUE_KINDS),
    )
    .option(
      '--every-step',
      'judge at every 30-second evaluation step after the first `for`, not only at the end (the truth in force at each time)',
    )
    .addOption(new Option('-o, --output <format>', 'report format').choices(['text', 'json']).default('text'))
    .option(
      '--config <file>',
      'the configuration file every command reads (see deploy/config-example.yaml): calibrate diagnoses with its rules: and queues: overrides',
    )
    .action(async (flags: CalibrateFlags) => {
      process.exitCode = await runCalibrate(flags);
    });
}

async function runCalibrate(flags: CalibrateFlags): Promise<number> {
  const overrides = await loadOverrides(flags.config);
  const cases = await casesFor(flags);
  const verdicts: Array<QueueVerdict & { case: string }> = [];
  for (const c of cases) {
    const results = await runCase(c, overrides, { everyStep: flags.everyStep === true });
    verdicts.push(...results.map((v) => ({ ...v, case: describeCase(c) })));
    if (flags.output === 'text') {
      const failed = results.filter((v) => !v.pass);
      process.stderr.write(`${failed.length === 0 ? 'ok  ' : 'FAIL'} ${describeCase(c)}\n`);
    }
  }
  const failures = verdicts.filter((v) => !v.pass);
  const scores = scoreRules(verdicts);
  if (flags.output === 'json') {
    process.stdout.write(
      `${JSON.stringify({ cases: cases.length, verdicts, scores, failability: failability(verdicts), failures: failures.length }, null, 2)}\n`,
    );
  } else {
    const lines = [confusionMatrix(verdicts), '', 'rule                          precision  recall   TP  FP  FN'];
    for (const s of scores) {
      lines.push(
        `${s.rule.padEnd(30)}${fmt(s.precision).padStart(9)}${fmt(s.recall).padStart(8)}${String(s.truePositives).padStart(5)}${String(s.falsePositives).padStart(4)}${String(s.falseNegatives).padStart(4)}`,
      );
    }
    lines.push('');
    for (const f of failures) {
      lines.push(
        `FAIL ${f.case} queue=${f.name ?? '-'}: missed [${f.missed.join(', ')}] unexpected [${f.unexpected.join(', ')}]${f.problems.length > 0 ? ` ${f.problems.join('; ')}` : ''}`,
      );
    }
    const could = failability(verdicts);
    lines.push(
      `${cases.length} runs, ${verdicts.length} queue verdicts (${could.canMiss} could miss an expected diagnosis, ${could.canFalseAlarm} could raise a false alarm), ${failures.length} failing`,
    );
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  return failures.length === 0 ? EXIT.ok : EXIT.findings;
}

async function casesFor(flags: CalibrateFlags): Promise<CalibrationCase[]> {
  const scenarios = flags.scenario ?? SCENARIO_NAMES;
  for (const s of scenarios) {
    if (!SCENARIO_NAMES.includes(s))
      throw new UsageError(`unknown scenario "${s}"; known: ${SCENARIO_NAMES.join(', ')}`);
  }
  if (flags.grid !== undefined) {
    const text = await readTextFile(flags.grid, '--grid');
    try {
      return parseCalibrationGrid(text, flags.grid).filter((c) => scenarios.includes(c.scenario));
    } catch (error) {
      if (error instanceof GridError) throw new UsageError(error.message);
      throw error;
    }
  }
  const seeds = Number(flags.seeds);
  if (!Number.isInteger(seeds) || seeds < 1 || seeds > 1000)
    throw new UsageError(`--seeds must be an integer from 1 to 1000, got ${flags.seeds}`);
  const cases: CalibrationCase[] = [];
  const flavors: readonly (Flavor | undefined)[] = flags.flavor ?? [undefined];
  const queues: readonly (QueueKind | undefined)[] = flags.queue ?? [undefined];
  for (const scenario of scenarios) {
    for (let seed = 1; seed <= seeds; seed++) {
      for (const flavor of flavors) {
        for (const queue of queues) {
          if (queue !== undefined && !queueKindsOf(flavor ?? DEFAULT_FLAVOR).includes(queue)) continue;
          cases.push({
            scenario,
            seed,
            ...(flavor === undefined ? {} : { flavor }),
            ...(queue === undefined ? {} : { queue }),
          });
        }
      }
    }
  }
  return cases;
}

/** The `rules:` and `queues:` of `--config`, read by the one loader (the file's other sections are accepted). */
async function loadOverrides(file: string | undefined): Promise<RuleOverrides> {
  return file === undefined ? {} : (await loadCommandConfig({ config: file })).overrides;
}

function fmt(n: number | null): string {
  return n === null ? 'n/a' : n.toFixed(3);
}
