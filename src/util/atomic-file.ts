/**
 * Files replaced whole or not at all.
 *
 * Contract:
 * - `replaceFile(path, data)` writes `data` to a new temporary file beside `path` (same directory, so the
 *   rename cannot cross file systems), flushes it to disk (fsync), renames it over `path` and flushes the
 *   directory, so that after a crash `path` is the old file or the new one, never part of one. On any failure
 *   the temporary file is removed (as far as the failure allows) and the error is thrown; `path` is as it was.
 * - Temporary files are named `<name>.tmp-<random>`; `removeTemporaryFiles(path)` deletes those a crash left
 *   beside `path` and returns their names.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

const TEMPORARY_INFIX = '.tmp-';

export async function replaceFile(
  path: string,
  data: Uint8Array,
  options: { readonly mode?: number } = {},
): Promise<void> {
  const temporary = `${path}${TEMPORARY_INFIX}${randomBytes(6).toString('hex')}`;
  try {
    const handle = await open(temporary, 'wx', options.mode ?? 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(path));
}

/** Deletes the temporary files of `replaceFile(path, ...)` left by an interrupted write; returns their names. */
export async function removeTemporaryFiles(path: string): Promise<string[]> {
  const prefix = `${basename(path)}${TEMPORARY_INFIX}`;
  const stray = (await readdir(dirname(path))).filter((name) => name.startsWith(prefix));
  for (const name of stray) await unlink(join(dirname(path), name));
  return stray;
}

/** Makes a rename in `dir` durable; file systems that cannot flush a directory are left as they are. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // e.g. EISDIR or EPERM on platforms without directory fsync: the rename itself has happened.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
