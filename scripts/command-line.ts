/**
 * The command line of an `npm run` script: `--help` prints its usage line (given by the script, as its doc comment
 * opens) and exits 0; an unknown option, a missing value or a stray argument prints what is wrong and the usage line
 * to stderr and exits 2, the scripts' exit code for bad arguments. Never a stack trace for a typing slip.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values<O extends Options> = ReturnType<
  typeof parseArgs<{ options: O; strict: true; allowPositionals: false }>
>['values'];

/** Prints `message` for the script `name` with its usage line to stderr and exits 2. */
export function usageError(name: string, usage: string, message: string): never {
  process.stderr.write(`${name}: ${message}\nUsage: ${usage}\n`);
  process.exit(2);
}

/** The script's option values, parsed strictly (see the module comment). */
export function scriptOptions<const O extends Options>(name: string, usage: string, options: O): Values<O> {
  let values: Record<string, unknown>;
  try {
    values = parseArgs({
      options: { ...options, help: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    usageError(name, usage, (error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(`Usage: ${usage}\n`);
    process.exit(0);
  }
  return values as Values<O>;
}
