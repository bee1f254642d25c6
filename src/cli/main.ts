/**
 * The `workqueue-doctor` binary. Each subcommand lives in its own module under `src/cli/` and
 * registers itself on the program; this file only assembles them and maps failures to exit codes.
 *
 * Contract: a command line that names a command loads that command's module only (a `diagnose` does not load the
 * dashboard SDK, the generators or the HTTP server); any other (help, a version, an unknown command) loads every
 * command, so that help lists them all and an unknown command is told what there is. Either program parses the
 * named command's flags identically: it is the same registration.
 */
import { Command } from 'commander';
import { packageVersion } from '../util/version.js';
import { configureErrorOutput, runProgram } from './run-program.js';

type Register = (program: Command) => void;

/** Every command, in the order help lists them, with the module that registers it. */
const COMMANDS: ReadonlyArray<readonly [name: string, load: () => Promise<Register>]> = [
  ['simulate', async () => (await import('./simulate.js')).registerSimulateCommand],
  ['diagnose', async () => (await import('./diagnose.js')).registerDiagnoseCommand],
  ['calibrate', async () => (await import('./calibrate.js')).registerCalibrateCommand],
  ['generate', async () => (await import('./generate.js')).registerGenerateCommand],
  ['serve', async () => (await import('./serve.js')).registerServeCommand],
];

/** The program with the command `only` (every command when absent or not a command's name). */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('workqueue-doctor')
    .description(
      'Diagnoses Kubernetes controller work queues from their client-go metrics, and generates the Grafana ' +
        'dashboards, Prometheus alert rules and runbooks that show the same diagnoses.',
    )
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride();
  const named = COMMANDS.filter(([name]) => name === only);
  for (const [, load] of named.length > 0 ? named : COMMANDS) (await load())(program);
  configureErrorOutput(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  return runProgram(await buildProgram(argv[2]), argv);
}
