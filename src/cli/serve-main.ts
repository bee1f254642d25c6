/**
 * The lean entry for `workqueue-doctor serve`: a program with only the `serve` command, so that a running
 * service does not load what other commands need (the dashboard SDK, the generators, the simulator).
 * Help, errors and exit codes are the full CLI's (`runProgram`). The process's heap grows by at most 30% between
 * full collections (heap-growth.ts): this entry is the service's own process, which nothing else shares.
 */
import { Command } from 'commander';
import { limitHeapGrowth } from '../service/heap-growth.js';
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
  limitHeapGrowth();
  return runProgram(buildServeProgram(), argv);
}
