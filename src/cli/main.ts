/**
 * The `workqueue-doctor` binary. Each subcommand lives in its own module under `src/cli/` and
 * registers itself on the program; this file only assembles them and maps failures to exit codes.
 */
import { Command } from 'commander';
import { packageVersion } from '../util/version.js';
import { registerCalibrateCommand } from './calibrate.js';
import { registerDiagnoseCommand } from './diagnose.js';
import { registerGenerateCommand } from './generate.js';
import { configureErrorOutput, runProgram } from './run-program.js';
import { registerServeCommand } from './serve.js';
import { registerSimulateCommand } from './simulate.js';

export function buildProgram(): Command {
  const program = new Command('workqueue-doctor')
    .description(
      'Diagnoses Kubernetes controller work queues from their client-go metrics, and generates the Grafana ' +
        'dashboards, Prometheus alert rules and runbooks that show the same diagnoses.',
    )
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride();
  registerSimulateCommand(program);
  registerDiagnoseCommand(program);
  registerCalibrateCommand(program);
  registerGenerateCommand(program);
  registerServeCommand(program);
  configureErrorOutput(program);
  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  return runProgram(buildProgram(), argv);
}
