/**
 * What `serve` makes of a container's arguments, for the deploy tests: read by the real command line and resolved
 * by the real configuration loader, so a manifest that `serve` would refuse fails its test.
 */
import { buildServeProgram } from '../../src/cli/serve-main.js';
import { resolveServiceConfig, type ServiceConfig } from '../../src/config/service-config.js';

/** The value of `--flag` in an argument list (`--flag value` or `--flag=value`). */
export function flag(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === name) return args[i + 1];
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return undefined;
}

export function hasFlag(args: readonly string[], name: string): boolean {
  return args.some((a) => a === name || a.startsWith(`${name}=`));
}

/**
 * The configuration `serve` resolves from `args`: parsed by the real `serve` entry's command line (the action
 * replaced, so nothing starts) and resolved by the real loader, with the config file's text from `files` (path to
 * text, e.g. from a rendered ConfigMap) when `--config` names one. Throws as `serve` would exit on a bad argument or file.
 */
export function serveConfig(args: readonly string[], files: ReadonlyMap<string, string> = new Map()): ServiceConfig {
  const program = buildServeProgram();
  const serve = program.commands.find((c) => c.name() === 'serve');
  if (serve === undefined) throw new Error('the CLI has no serve command');
  let flags: Record<string, unknown> | undefined;
  serve.action((options: Record<string, unknown>) => {
    flags = options;
  });
  program.parse(['node', 'workqueue-doctor', ...args]);
  if (flags === undefined) throw new Error(`serve did not run for ${args.join(' ')}`);
  const path = typeof flags['config'] === 'string' ? flags['config'] : undefined;
  if (path === undefined) return resolveServiceConfig({ flags, env: {} });
  const text = files.get(path);
  if (text === undefined) throw new Error(`--config ${path} is not mounted from a rendered ConfigMap`);
  return resolveServiceConfig({ flags, env: {}, file: { path, text } });
}
