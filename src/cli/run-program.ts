/**
 * Runs a commander program over `argv` and maps the outcome to an exit code: 0 for --help and --version,
 * the command's own `process.exitCode`, 2 for usage errors (printed without a stack trace). Shared by the
 * full CLI (`main`) and the lean `serve` entry.
 */
import { type Command, CommanderError } from 'commander';
import { EXIT, UsageError } from './exit-codes.js';

export async function runProgram(program: Command, argv: readonly string[]): Promise<number> {
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
