/**
 * The CLI as a child process, from its TypeScript source through tsx, for tests of what only a process shows:
 * signals, exit codes, start-up errors. Its stdout and stderr are collected as they come.
 *
 * Contract: `spawnCli(args)` starts `workqueue-doctor <args>`; `exited` resolves with the exit code; `output`
 * resolves with the first match of a pattern in stdout or stderr, and rejects when the process exits before it
 * appears; `stop()` kills it (SIGKILL) unless it has exited and waits for the exit; a test calls it in its
 * `finally` or `afterEach`.
 */
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';

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
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', ...args], {
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
