/**
 * The service (or another Node program) as a child process of a benchmark: starting it, reading its output,
 * its memory from `/proc`, stopping it; and the built CLI it runs from.
 *
 * Contract:
 * - `run` starts `node <args>` (in this process's environment unless given another) with stdout piped (read
 *   continuously, the last 8 KiB kept for messages) and stderr inherited; `exited` settles once with the exit code
 *   or signal.
 * - `rssOf` and `peakRssOf` read `VmRSS` and `VmHWM` of a live process (NaN once it is gone).
 * - `builtCli` returns `dist/cli/bin.js`, compiling `src/` first with `tsc -p tsconfig.json` when a source file
 *   is newer than it (or it is missing); type errors elsewhere in the tree still emit JavaScript, so only a
 *   missing output is fatal.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUTPUT_TAIL_CHARS = 8192;

export type Exit = { readonly code: number | null; readonly signal: NodeJS.Signals | null };

export type Running = {
  readonly proc: ChildProcess;
  /** Settles when the process has exited. */
  readonly exited: Promise<Exit>;
  /** The last 8 KiB it wrote to stdout. */
  output(): string;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the process is gone. */
  stop(): Promise<void>;
};

export function run(args: readonly string[], options: { readonly env?: NodeJS.ProcessEnv } = {}): Running {
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: options.env ?? process.env });
  const exited = new Promise<Exit>((done) => proc.once('exit', (code, signal) => done({ code, signal })));
  let tail = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL_CHARS);
  });
  return {
    proc,
    exited,
    output: () => tail,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The first stdout line for which `pick` returns a value. */
export function firstLine<T>(proc: ChildProcess, pick: (line: string) => T | undefined): Promise<T> {
  return new Promise<T>((done, fail) => {
    let buffer = '';
    proc.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const value = pick(buffer.slice(0, newline));
        buffer = buffer.slice(newline + 1);
        if (value !== undefined) done(value);
        newline = buffer.indexOf('\n');
      }
    });
    proc.once('exit', (code) => fail(new Error(`process exited (${code}) before it was ready`)));
  });
}

/** Resident memory of a live process, in bytes. */
export function rssOf(pid: number): number {
  return statusBytes(pid, 'VmRSS');
}

/** The most resident memory a live process has had since it started (its high-water mark), in bytes. */
export function peakRssOf(pid: number): number {
  return statusBytes(pid, 'VmHWM');
}

function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return Number.NaN;
  }
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
  return kb === undefined ? Number.NaN : Number(kb) * 1024;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** `dist/cli/bin.js`, compiled first when it is older than a file of `src/` (see the module comment). */
export function builtCli(): string {
  const cli = join(root, 'dist', 'cli', 'bin.js');
  if (existsSync(cli) && newestModification(join(root, 'src')) <= statSync(cli).mtimeMs) return cli;
  process.stderr.write('dist/ is older than src/: compiling (tsc -p tsconfig.json)\n');
  const tsc = spawnSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(root, 'tsconfig.json')], {
    stdio: 'inherit',
  });
  if (!existsSync(cli)) throw new Error('tsc did not emit dist/cli/bin.js');
  if (tsc.status !== 0) process.stderr.write('tsc reported errors (see above); running what it emitted\n');
  return cli;
}

/** The latest modification time of a file under `dir`, in milliseconds. */
function newestModification(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}
