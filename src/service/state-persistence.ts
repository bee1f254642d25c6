/**
 * `serve --state-dir DIR`: the scraped history kept across restarts in one state file, `DIR/history.wqd.gz`
 * (format in state-file.ts), so that a restarted sidecar keeps the time its findings' conditions have held.
 *
 * Contract:
 * - `openStatePersistence` prepares DIR (made when missing; it must be a writable directory, else a
 *   `ConfigError` naming where `state.dir` came from), locks it (`DIR/workqueue-doctor.lock`, util/directory-lock.ts:
 *   a DIR another live process holds is a `ConfigError` naming DIR and that process's pid; a lock left by a process
 *   that is gone is taken over), deletes the temporary files an interrupted write left, and reads the state file
 *   into the history within `limits` (state-restore.ts), before anything is scraped. A file that cannot be used is
 *   logged once and ignored: the next write replaces it.
 * - `start()` writes the state every `intervalMs` (default one minute); `close()` stops that, waits for a
 *   write in progress, writes once more, so a graceful shutdown keeps the last scrapes, and releases the lock. A
 *   write happens only when the history changed since the previous one (so an ignored file is not written back
 *   before something is scraped); writes never overlap.
 * - A write replaces the file atomically (atomic-file.ts): one that fails is logged at error and reported to
 *   `onWrite`, leaves the previous file as it was and is tried again at the next interval; nothing stops.
 * - Only the history is saved. A finding whose condition has held for longer than the history reaches back
 *   (the evaluation remembers its `since` beyond the retention) gets, after a restart, the `since` the saved
 *   history shows: the start of the retention window at most.
 */
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ConfigError } from '../config/config-error.js';
import type { History } from '../store/history.js';
import { encodeHistoryState } from '../store/state-file.js';
import type { StateFileLimits } from '../store/state-file-limits.js';
import { removeTemporaryFiles, replaceFile } from '../util/atomic-file.js';
import { acquireDirectoryLock, type DirectoryLock, LockHeldError } from '../util/directory-lock.js';
import { reasonOf, restoreStateFile } from './state-restore.js';

export const STATE_FILE_NAME = 'history.wqd.gz';
/** The lock that keeps a second process out of the directory. */
export const STATE_LOCK_NAME = 'workqueue-doctor.lock';
/**
 * How often the state is written. At 100 queues (30 minutes at 15 s: 5,700 series, 690,000 samples) a write
 * costs about 0.1 s of CPU, partly on the thread pool, for a file of about 0.5 MB; a crash loses at most this
 * much history, well inside the 5-minute lookback that carries a condition over a gap (bench/state-file.ts).
 */
export const DEFAULT_STATE_WRITE_INTERVAL_MS = 60_000;

/** What the persistence logs; the runtime's logger fits. */
export interface StateLogger {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
  debug(object: object, message: string): void;
}

export type StatePersistenceOptions = {
  readonly dir: string;
  /** Where `state.dir` was given (`--state-dir`, `WQD_STATE_DIR`, `config.yaml: state.dir`), for errors. */
  readonly where: string;
  readonly history: History;
  /** What the state file may hold (state-limits.ts). */
  readonly limits: StateFileLimits;
  readonly log: StateLogger;
  /** Aborting it (the service is stopping) ends the restore at its next read; the open then rejects. */
  readonly signal?: AbortSignal | undefined;
  /** Default `DEFAULT_STATE_WRITE_INTERVAL_MS`. */
  readonly intervalMs?: number;
  /** Called after every write attempt (for the service's own metrics). */
  readonly onWrite?: (outcome: { readonly ok: boolean }) => void;
};

export interface StatePersistence {
  readonly file: string;
  /** Writes every interval (the timer does not keep the process alive). Idempotent. */
  start(): void;
  /** Writes now unless nothing changed since the last write; shares a write in progress. Never rejects. */
  save(): Promise<void>;
  /** Stops the timer, writes a last time and releases the directory. Idempotent. */
  close(): Promise<void>;
}

export async function openStatePersistence(options: StatePersistenceOptions): Promise<StatePersistence> {
  const { dir, history, log } = options;
  const intervalMs = options.intervalMs ?? DEFAULT_STATE_WRITE_INTERVAL_MS;
  const file = join(dir, STATE_FILE_NAME);

  const lock = await prepareDirectory(dir, file, options.where, log);
  try {
    await restoreStateFile(file, history, { limits: options.limits, log, nowMs: Date.now(), signal: options.signal });
  } catch (error) {
    await lock.release();
    throw error;
  }

  const changes = history.changes();
  let unsaved = false;
  let writing: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;

  const write = async (): Promise<void> => {
    unsaved ||= changes.takeEarliest() !== Number.POSITIVE_INFINITY;
    if (!unsaved) return;
    unsaved = false;
    const started = performance.now();
    try {
      const bytes = await encodeHistoryState(history, Date.now());
      await replaceFile(file, bytes);
      log.debug({ file, bytes: bytes.length, ms: Math.round(performance.now() - started) }, 'state file written');
      options.onWrite?.({ ok: true });
    } catch (error) {
      unsaved = true;
      log.error({ file, err: reasonOf(error) }, 'cannot write the state file; the previous one is kept');
      options.onWrite?.({ ok: false });
    }
  };

  const save = (): Promise<void> => {
    writing ??= write().finally(() => {
      writing = undefined;
    });
    return writing;
  };

  return {
    file,
    start() {
      if (timer !== undefined || closing !== undefined) return;
      timer = setInterval(() => void save(), intervalMs);
      timer.unref();
    },
    save,
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await writing;
        await save();
        changes.close();
        await lock.release();
      })();
      return closing;
    },
  };
}

/** Makes DIR usable and locks it; the lock is released again when anything after it fails. */
async function prepareDirectory(dir: string, file: string, where: string, log: StateLogger): Promise<DirectoryLock> {
  const fail = (reason: string): ConfigError =>
    new ConfigError(`${where}: cannot keep the history in ${JSON.stringify(dir)}: ${reason}`);
  const found = await stat(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw fail(reasonOf(error));
  });
  if (found === undefined) {
    await mkdir(dir, { recursive: true }).catch((error: unknown) => {
      throw fail(`cannot create it (${reasonOf(error)})`);
    });
  } else if (!found.isDirectory()) {
    throw fail('not a directory');
  }
  // A file made and removed: unlike access(2), it also fails for root where nobody may write (a read-only mount,
  // sysfs), as the state writes would.
  const probe = join(dir, `.write-probe-${process.pid}`);
  await writeFile(probe, '', { flag: 'wx' })
    .then(() => rm(probe, { force: true }))
    .catch((error: unknown) => {
      throw fail(`not writable (${reasonOf(error)})`);
    });
  const lock = await acquireDirectoryLock(join(dir, STATE_LOCK_NAME)).catch((error: unknown) => {
    if (error instanceof LockHeldError) {
      const holder = error.holderPid === process.pid ? 'this process' : `process ${error.holderPid}`;
      throw fail(`in use by ${holder}, whose lock is ${STATE_LOCK_NAME}; two services must not share a directory`);
    }
    throw fail(`cannot lock it (${reasonOf(error)})`);
  });
  // Only under the lock: another process's temporary files are its writes in progress.
  const stray = await removeTemporaryFiles(file).catch(async (error: unknown) => {
    await lock.release();
    throw fail(reasonOf(error));
  });
  if (stray.length > 0) log.info({ dir, files: stray }, 'removed temporary files of an interrupted state write');
  return lock;
}
