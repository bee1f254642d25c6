/**
 * One process per directory: a second holder is refused with the first one's pid; a lock whose holder is gone
 * (no such process, a reused pid, this process's own pid from a previous run) is taken over; release removes
 * only this process's lock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { acquireDirectoryLock, type DirectoryLock, LockHeldError } from '../../src/util/directory-lock.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-lock-'));
let locks = 0;
const newLockPath = (): string => join(work, `lock-${++locks}`);
const held: DirectoryLock[] = [];
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const lock of held.splice(0)) await lock.release();
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function acquire(path: string): Promise<DirectoryLock> {
  const lock = await acquireDirectoryLock(path);
  held.push(lock);
  return lock;
}

/** A process that lives until the test ends. */
function liveProcess(): number {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  children.push(child);
  return child.pid as number;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid as number;
}

const holderPid = (path: string): number => JSON.parse(readFileSync(path, 'utf8')).pid;

async function heldBy(path: string): Promise<number | undefined> {
  const error = await acquireDirectoryLock(path).then(
    (lock) => {
      held.push(lock);
      return undefined;
    },
    (e: unknown) => e,
  );
  if (error === undefined) return undefined;
  if (!(error instanceof LockHeldError)) throw error;
  return error.holderPid;
}

describe('directory lock', () => {
  it('holds the pid; a second acquire in this process is refused until it is released', async () => {
    const path = newLockPath();
    const lock = await acquire(path);
    expect(holderPid(path)).toBe(process.pid);
    expect(await heldBy(path)).toBe(process.pid);
    await lock.release();
    expect(existsSync(path)).toBe(false);
    await lock.release();
    expect(await heldBy(path)).toBeUndefined();
  });

  it('refuses a lock another live process holds, naming its pid', async () => {
    const path = newLockPath();
    const pid = liveProcess();
    writeFileSync(path, `${JSON.stringify({ pid })}\n`);
    const error = await acquireDirectoryLock(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockHeldError);
    expect((error as LockHeldError).holderPid).toBe(pid);
    expect((error as Error).message).toBe(`locked by process ${pid} (lock file ${path})`);
    expect(holderPid(path)).toBe(pid);
  });

  it.each([
    ['a process that has exited', async () => `${JSON.stringify({ pid: await deadPid() })}\n`],
    ['this process, from a previous run with the same pid', async () => `${JSON.stringify({ pid: process.pid })}\n`],
    ['content that is not a lock', async () => 'not a lock'],
  ])('takes over a lock held by %s', async (_what, content) => {
    const path = newLockPath();
    writeFileSync(path, await content());
    await acquire(path);
    expect(holderPid(path)).toBe(process.pid);
  });

  it.runIf(existsSync('/proc/self/stat'))(
    'takes over a lock whose pid now belongs to a process started later',
    async () => {
      const path = newLockPath();
      writeFileSync(path, `${JSON.stringify({ pid: liveProcess(), started: '1' })}\n`);
      await acquire(path);
      expect(holderPid(path)).toBe(process.pid);
    },
  );

  it('release leaves a lock that is no longer this process’s', async () => {
    const path = newLockPath();
    const lock = await acquire(path);
    const other = `${JSON.stringify({ pid: liveProcess() })}\n`;
    writeFileSync(path, other);
    await lock.release();
    expect(readFileSync(path, 'utf8')).toBe(other);
  });
});
