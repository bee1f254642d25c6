/**
 * Runs a commander program over `argv` and maps the outcome to an exit code: 0 for --help and --version,
 * the command's own `process.exitCode`, 2 for usage errors. Shared by the full CLI (`main`) and the lean
 * `serve` entry.
 *
 * Every usage error prints the same two lines on stderr, never the help text:
 *   workqueue-doctor: <what was wrong>
 *   see 'workqueue-doctor <command> --help'
 * commander's own errors (unknown option, bad choice, missing argument) as well as a command's
 * `UsageError`. Unreadable input (a target that cannot be scraped, a Prometheus error) prints one line.
 */
import { type Command, CommanderError } from 'commander';
import { EXIT, UsageError } from './exit-codes.js';

const PROGRAM = 'workqueue-doctor';

/**
 * The longest usage error line: a usage error's message is the program's own, and may list every value a flag
 * accepts (the scenarios of `simulate --scenario`); the bound only keeps a pasted value from flooding the terminal.
 * Other errors are cut at `oneLine`'s default.
 */
const USAGE_LINE_MAX = 1000;

/** The help hint for a command (`workqueue-doctor diagnose --help`), or the program's for the top level. */
export function helpHint(command: string | undefined): string {
  return `see '${PROGRAM}${command === undefined ? '' : ` ${command}`} --help'`;
}

/** One line: whitespace runs (newlines included) collapsed, cut at `max` characters. */
export function oneLine(text: string, max = 400): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * Makes commander report errors as `workqueue-doctor: <message>` plus the command's help hint, without the
 * help text. Call after every command is registered (each command gets its own hint).
 */
export function configureErrorOutput(program: Command): void {
  program.showHelpAfterError(false);
  const configure = (command: Command, name: string | undefined): void => {
    command.showHelpAfterError(false);
    command.configureOutput({
      outputError: (message, write) => {
        write(`${PROGRAM}: ${oneLine(message.replace(/^error: /, ''))}\n${helpHint(name)}\n`);
      },
    });
    for (const sub of command.commands) configure(sub, name === undefined ? sub.name() : `${name} ${sub.name()}`);
  };
  configure(program, undefined);
}

export async function runProgram(program: Command, argv: readonly string[]): Promise<number> {
  // The command whose action runs, for the help hint of its usage errors.
  let current: string | undefined;
  program.hook('preAction', (_program, action) => {
    current = action.name();
  });
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
      const hint = error.hint ? `${helpHint(current)}\n` : '';
      process.stderr.write(`${PROGRAM}: ${oneLine(error.message, USAGE_LINE_MAX)}\n${hint}`);
      return EXIT.usage;
    }
    process.stderr.write(`${PROGRAM}: ${oneLine(error instanceof Error ? error.message : String(error))}\n`);
    return EXIT.usage;
  }
}
