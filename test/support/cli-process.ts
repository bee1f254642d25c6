/**
 * The CLI as a child process, for tests of what only a process shows: signals, exit codes, start-up errors. Its
 * stdout and stderr are collected as they come.
 *
 * `cliEntry()` is how a process runs it: the compiled `dist/cli/bin.js` when every source file's compiled file is at
 * least as new as the source (the test command builds before it tests), otherwise the TypeScript source through tsx
 * (a test run straight after an edit). Both are the same code; the compiled one starts in about a third of the CPU
 * time (tsx resolves every module through its loader thread).
 *
 * Contract: `spawnCli(args)` starts `workqueue-doctor <args>`; `exited` resolves with the exit code; `output`
 * resolves with the first match of a pattern in stdout or stderr, and rejects when the process exits before it
 * appears; `stop()` kills it (SIGKILL) unless it has exited and waits for the exit; a test calls it in its
 * `finally` or `afterEach`.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let entry: readonly string[] | undefined;

/** The arguments of `node` that run `workqueue-doctor`, before the CLI's own. */
export function cliEntry(): readonly string[] {
  entry ??= compiledIsFresh() ? [join(ROOT, 'dist/cli/bin.js')] : ['--import', 'tsx', join(ROOT, 'src/cli/bin.ts')];
  return entry;
}

/** Whether every `src/**.ts` has its `dist/**.js`, written no earlier than the source was last changed. */
function compiledIsFresh(): boolean {
  const src = join(ROOT, 'src');
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
    const compiled = join(ROOT, 'dist', file.replace(/\.ts$/, '.js'));
    try {
      if (statSync(compiled).mtimeMs < statSync(join(src, file)).mtimeMs) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export interface CliProcess {
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /** The first match of `pattern` in the stream, once it has been written. */
  output(stream: 'stdout' | 'stderr', pattern: RegExp): Promise<RegExpExecArray>;
  stop(): Promise<void>;
}

export function spawnCli(
  args: readonly string[],
  options: { readonly uid?: number; readonly gid?: number } = {},
): CliProcess {
  const child = spawn(process.execPath, [...cliEntry(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...options,
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const text = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => {
    text.stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    text.stderr += chunk.toString();
  });
  return {
    child,
    exited,
    stdout: () => text.stdout,
    stderr: () => text.stderr,
    output: (stream, pattern) =>
      new Promise((resolve, reject) => {
        const look = (): boolean => {
          const match = pattern.exec(text[stream]);
          if (match !== null) resolve(match);
          return match !== null;
        };
        if (look()) return;
        const source = stream === 'stdout' ? child.stdout : child.stderr;
        const onData = (): void => {
          if (look()) source.off('data', onData);
        };
        source.on('data', onData);
        void exited.then((code) => {
          source.off('data', onData);
          if (!look()) reject(new Error(`exited with ${code} before ${pattern} in its ${stream}: ${text.stderr}`));
        });
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
