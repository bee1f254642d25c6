/**
 * The memory limit of the container the service runs in, as its cgroup says: cgroup v2's `memory.max` (bytes, or
 * `max` for none), else cgroup v1's `memory/memory.limit_in_bytes` (bytes; an unlimited v1 cgroup says a number
 * near 2^63, which is no limit).
 *
 * Contract: `readContainerMemoryLimit(root)` reads the files under `root` (default `/`, a test passes a directory of
 * fake files) and resolves to the limit and the file it came from, or undefined when there is none (no cgroup file,
 * `max`, an absurd number, a file that cannot be read or says something else). It never rejects. When the v2 file
 * exists, it decides: the v1 file is read only without it.
 */
import { open } from 'node:fs/promises';
import { join } from 'node:path';

export type ContainerMemoryLimit = {
  readonly bytes: number;
  /** The file the limit was read from, e.g. `/sys/fs/cgroup/memory.max`. */
  readonly from: string;
};

export const CGROUP_V2_MEMORY_MAX = '/sys/fs/cgroup/memory.max';
export const CGROUP_V1_MEMORY_LIMIT = '/sys/fs/cgroup/memory/memory.limit_in_bytes';
/**
 * A limit at or above this is none: an unlimited cgroup v1 says 2^63 rounded down to its page size
 * (9223372036854771712), and no container is given an exbibyte.
 */
export const NO_LIMIT_FROM_BYTES = 2 ** 60;
/** The files hold one number and a newline; more is not a limit. */
const MAX_FILE_BYTES = 64;

export async function readContainerMemoryLimit(root = '/'): Promise<ContainerMemoryLimit | undefined> {
  const v2 = await readSmallFile(join(root, CGROUP_V2_MEMORY_MAX));
  if (v2 !== undefined) return limitOf(v2, CGROUP_V2_MEMORY_MAX);
  const v1 = await readSmallFile(join(root, CGROUP_V1_MEMORY_LIMIT));
  return v1 === undefined ? undefined : limitOf(v1, CGROUP_V1_MEMORY_LIMIT);
}

function limitOf(text: string, from: string): ContainerMemoryLimit | undefined {
  const value = text.trim();
  if (!/^\d+$/.test(value)) return undefined;
  const bytes = Number(value);
  return bytes > 0 && bytes < NO_LIMIT_FROM_BYTES ? { bytes, from } : undefined;
}

/** The file's text when it exists and holds at most `MAX_FILE_BYTES` bytes; undefined otherwise. */
async function readSmallFile(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(MAX_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > MAX_FILE_BYTES ? undefined : buffer.subarray(0, bytesRead).toString('utf8');
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
