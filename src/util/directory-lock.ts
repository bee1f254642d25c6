/**
 * One process at a time in a directory: a lock file made exclusively, naming the process that holds it.
 *
 * Contract:
 * - `acquireDirectoryLock(path)` makes the lock file `path` with its content in one step (written to a temporary
 *   file beside it, then hard-linked into place, which fails when `path` exists) and returns the lock. The content
 *   is `{"pid":N,"started":S}`: the holder's pid and, where the system tells (Linux), when it started.
 * - When `path` exists and its holder is alive, it throws a `LockHeldError` with the holder's pid; a lock this
 *   process holds already counts as alive. A lock whose holder is gone is stale and taken over: no process has
 *   the pid, or the process with the pid started at another time than the holder (the pid was reused), or the pid
 *   is this process's own (a previous run of a container restarted with the same pid), or the content is not a
 *   lock's. Before removing a stale lock its content is read again, so a lock another process has just taken
 *   over is not removed; two processes taking over the same stale lock within that instant are not told apart.
 * - `release()` removes the file when it still holds this process's content; idempotent.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

export interface DirectoryLock {
  readonly path: string;
  release(): Promise<void>;
}

export class LockHeldError extends Error {
  override readonly name = 'LockHeldError';
  readonly holderPid: number;
  constructor(path: string, holderPid: number) {
    super(`locked by process ${holderPid}${holderPid === process.pid ? ' (this one)' : ''} (lock file ${path})`);
    this.holderPid = holderPid;
  }
}

type Holder = { readonly pid: number; readonly started?: string };

/** Lock files this process holds, by absolute path. */
const heldHere = new Set<string>();
/** Tries at making the lock, each after removing a stale one: a lock that keeps changing meanwhile is given up. */
const ATTEMPTS = 3;

export async function acquireDirectoryLock(path: string): Promise<DirectoryLock> {
  const absolute = resolve(path);
  if (heldHere.has(absolute)) throw new LockHeldError(path, process.pid);
  // Claimed before the first await, so that a second acquire in this process finds it held.
  heldHere.add(absolute);
  const started = await startTimeOf(process.pid);
  const content = `${JSON.stringify({ pid: process.pid, ...(started !== undefined ? { started } : {}) })}\n`;
  try {
    if (!(await takeLock(path, content))) {
      throw new Error(`cannot take over the stale lock file ${path}: it keeps changing`);
    }
  } catch (error) {
    heldHere.delete(absolute);
    throw error;
  }
  let released: Promise<void> | undefined;
  return {
    path,
    release() {
      released ??= (async () => {
        heldHere.delete(absolute);
        if ((await readFile(path, 'utf8').catch(notFoundAs(undefined))) === content) {
          await unlink(path).catch(notFoundAs(undefined));
        }
      })();
      return released;
    },
  };
}

/** Makes the lock, taking over a stale one; false when it changed under every try; throws when it is held. */
async function takeLock(path: string, content: string): Promise<boolean> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (await createWithContent(path, content)) return true;
    const found = await readFile(path, 'utf8').catch(notFoundAs(undefined));
    if (found === undefined) continue;
    const holder = holderOf(found);
    if (holder !== undefined && (await isAlive(holder))) throw new LockHeldError(path, holder.pid);
    // Stale: removed only if it is still the lock judged stale.
    if ((await readFile(path, 'utf8').catch(notFoundAs(undefined))) === found) {
      await unlink(path).catch(notFoundAs(undefined));
    }
  }
  return false;
}

/** Makes `path` holding `content` unless it exists (then false). */
async function createWithContent(path: string, content: string): Promise<boolean> {
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(temporary, content, { flag: 'wx', mode: 0o600 });
  try {
    await link(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

function holderOf(content: string): Holder | undefined {
  try {
    const value: unknown = JSON.parse(content);
    const { pid, started } = (value ?? {}) as Record<string, unknown>;
    if (!(Number.isSafeInteger(pid) && (pid as number) > 0)) return undefined;
    return { pid: pid as number, ...(typeof started === 'string' ? { started } : {}) };
  } catch {
    return undefined;
  }
}

async function isAlive(holder: Holder): Promise<boolean> {
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: a process of another user has the pid.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  if (holder.started === undefined) return true;
  const started = await startTimeOf(holder.pid);
  return started === undefined || started === holder.started;
}

/** When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat`, field 22); elsewhere undefined. */
async function startTimeOf(pid: number): Promise<string | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // The command name (field 2) is in parentheses and may hold spaces and parentheses itself.
  const fields = stat?.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields?.[22 - 3];
}

function notFoundAs<T>(value: T): (error: unknown) => T {
  return (error) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return value;
    throw error;
  };
}
