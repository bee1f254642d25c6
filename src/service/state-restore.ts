/**
 * The state file read into the history at start (state-persistence.ts): a file left by an earlier run, or put
 * there by anyone who can write the directory, read as an untrusted input within the limits of what the
 * service's own scrapes could hold.
 *
 * Contract:
 * - `restoreStateFile(file, history, options)` reads `file` only when it is a regular file: a symbolic link, a
 *   FIFO, a device or a socket is refused without being opened, and the file is opened without following links
 *   and without blocking (util/regular-file.ts). It is streamed, decompressed and checked as state-file.ts says,
 *   within `options.limits` (state-limits.ts).
 * - A missing file is a first start (logged at info). Any other file that is not restored is logged once at warn,
 *   `state file ignored; the next write replaces it`, with the file, the problem (`foreign`, `version`,
 *   `damaged`, `limits`, `not-regular`, `unreadable`) and the reason; the history is then untouched: the service
 *   starts empty and writes nothing of the file back.
 * - It never rejects, except with the signal's reason once `options.signal` is aborted (the service is stopping):
 *   the read then ends at its next chunk.
 */
import type { History } from '../store/history.js';
import { restoreHistoryState, StateFileError } from '../store/state-file.js';
import type { StateFileLimits } from '../store/state-file-limits.js';
import { FileRefusal, openRegularFile, readFileChunks } from '../util/regular-file.js';
import type { StateLogger } from './state-persistence.js';

export type RestoreStateOptions = {
  readonly limits: StateFileLimits;
  readonly log: StateLogger;
  readonly nowMs: number;
  readonly signal?: AbortSignal | undefined;
};

export async function restoreStateFile(file: string, history: History, options: RestoreStateOptions): Promise<void> {
  const { limits, log, signal } = options;
  const ignored = (problem: string, reason: string): void =>
    log.warn({ file, problem, reason }, 'state file ignored; the next write replaces it');
  let handle: Awaited<ReturnType<typeof openRegularFile>>;
  try {
    handle = await openRegularFile(file, { maxBytes: limits.maxFileBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      log.info({ file }, 'no state file yet; the history starts empty');
    } else {
      ignored(...fileProblemOf(error));
    }
    return;
  }
  try {
    const chunks = readFileChunks(handle, { maxBytes: limits.maxFileBytes, signal });
    const restored = await restoreHistoryState(chunks, history, { nowMs: options.nowMs, limits, signal });
    log.info(
      {
        file,
        writtenAt: new Date(restored.writtenAtMs).toISOString(),
        targets: restored.targets,
        series: restored.series,
        samples: restored.samples,
      },
      'history restored from the state file',
    );
  } catch (error) {
    if (signal?.aborted === true) throw signal.reason;
    // Nothing in the file may stop the service (the whole file is checked before the history is touched).
    ignored(...(error instanceof StateFileError ? ([error.problem, error.message] as const) : fileProblemOf(error)));
  } finally {
    await handle.close();
  }
}

/** Why a file could not be read: refused by its kind or size, or a system error. */
function fileProblemOf(error: unknown): readonly [problem: string, reason: string] {
  if (error instanceof FileRefusal) return [error.kind === 'too-large' ? 'limits' : 'not-regular', error.message];
  return ['unreadable', reasonOf(error)];
}

/** An error as a short reason: the system error code with its message, or the message. */
export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  const message = error instanceof Error ? error.message : String(error);
  return code !== undefined && !message.startsWith(code) ? `${code}: ${message}` : message;
}
