/**
 * The `workqueue-doctor` binary. Each subcommand lives in its own module under `src/cli/` and
 * registers itself on the program; this file only assembles them and maps failures to exit codes.
 */
import { Command, CommanderError } from 'commander';
import { registerCalibrateCommand } from './calibrate.js';
import { registerDiagnoseCommand } from './diagnose.js';
import { EXIT, UsageError } from './exit-codes.js';
import { registerGenerateCommand } from './generate.js';
import { registerServeCommand } from './serve.js';
import { registerSimulateCommand } from './simulate.js';
import { packageVersion } from './version.js';

export function buildProgram(): Command {
  const program = new Command('workqueue-doctor')
    .description(
      'Diagnoses Kubernetes controller work queues from their client-go metrics, and generates the Grafana ' +
        'dashboards, Prometheus alert rules and runbooks that show the same diagnoses.',
    )
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .showHelpAfterError()
    .exitOverride();
  registerSimulateCommand(program);
  registerDiagnoseCommand(program);
  registerCalibrateCommand(program);
  registerGenerateCommand(program);
  registerServeCommand(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return EXIT.ok;
    }
    // Commands report their exit code through process.exitCode; it is read and restored here so that
    // main() can run several times in one process (tests) without one command's code leaking into the next.
    const previous = process.exitCode;
    process.exitCode = undefined;
    try {
      await program.parseAsync([...argv]);
      return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
    } finally {
      process.exitCode = previous;
    }
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here with exit code 0; parse errors were already printed.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof UsageError) {
      process.stderr.write(`workqueue-doctor: ${error.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`workqueue-doctor: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT.usage;
  }
}
