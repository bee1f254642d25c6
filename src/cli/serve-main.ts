/**
 * The lean entry for `workqueue-doctor serve`: a program with only the `serve` command, so that a running
 * service does not load what other commands need (the dashboard SDK, the generators, the simulator).
 * Help, errors and exit codes are the full CLI's (`runProgram`).
 */
import { Command } from 'commander';
import { packageVersion } from '../util/version.js';
import { configureErrorOutput, runProgram } from './run-program.js';
import { registerServeCommand } from './serve.js';

export function buildServeProgram(): Command {
  const program = new Command('workqueue-doctor')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    .exitOverride();
  registerServeCommand(program);
  configureErrorOutput(program);
  return program;
}

export function serveMain(argv: readonly string[]): Promise<number> {
  return runProgram(buildServeProgram(), argv);
}
