/**
 * Regular files read within a size limit, for inputs that must not hold the process: a FIFO blocks its reader
 * (and the thread-pool thread under it, which also keeps the process from exiting), a device such as /dev/zero
 * never ends, a symbolic link may point at either, and a regular file may be far larger than its reader can hold.
 *
 * Contract:
 * - `openRegularFile(path, options)` checks the entry first (`lstat`, or `stat` with `followSymlinks`), refuses
 *   anything but a regular file and a file over `maxBytes`, then opens it read-only with `O_NONBLOCK` (a FIFO
 *   swapped in after the check cannot block the open) and `O_NOFOLLOW` unless links are followed, and checks the
 *   opened file again (`fstat`). The caller closes the handle.
 * - `readFileChunks(handle, options)` yields the file's bytes in chunks, each a buffer of its own; past
 *   `maxBytes` (a file that grew) it stops with a `FileRefusal`, and when `signal` is aborted it stops with the
 *   signal's reason before the next read.
 * - `readRegularFile(path, options)` is both: the whole file, within `maxBytes`.
 * - A refusal is a `FileRefusal` whose message is the reason in plain words (`a FIFO, not a regular file`,
 *   `larger than 1048576 bytes`), without the path: the caller says which file it is. System errors (ENOENT,
 *   EACCES) are thrown as they are.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, stat } from 'node:fs/promises';

export type FileRefusalKind = 'not-regular' | 'too-large';

export class FileRefusal extends Error {
  override readonly name = 'FileRefusal';
  readonly kind: FileRefusalKind;
  constructor(kind: FileRefusalKind, reason: string) {
    super(reason);
    this.kind = kind;
  }
}

export type RegularFileOptions = {
  /** The most bytes the file may hold; checked before it is read and while it is read. */
  readonly maxBytes: number;
  /** Follow a symbolic link at `path` (a mounted ConfigMap is one); default false: a link is refused. */
  readonly followSymlinks?: boolean;
};

export type ReadOptions = {
  readonly maxBytes: number;
  readonly signal?: AbortSignal | undefined;
};

/** Bytes asked of the file per read. */
const CHUNK_BYTES = 64 * 1024;
/** Absent on platforms without them (Windows): the checks before and after the open still apply. */
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

export async function openRegularFile(path: string, options: RegularFileOptions): Promise<FileHandle> {
  const follow = options.followSymlinks === true;
  checkEntry(await (follow ? stat(path) : lstat(path)), options.maxBytes);
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  } catch (error) {
    // O_NOFOLLOW on a symbolic link swapped in after the check.
    if ((error as NodeJS.ErrnoException).code === 'ELOOP' && !follow) {
      throw new FileRefusal('not-regular', 'a symbolic link, not a regular file');
    }
    throw error;
  }
  try {
    checkEntry(await handle.stat(), options.maxBytes);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

export async function* readFileChunks(handle: FileHandle, options: ReadOptions): AsyncGenerator<Buffer> {
  let total = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
    if (bytesRead === 0) return;
    total += bytesRead;
    if (total > options.maxBytes) throw tooLarge(options.maxBytes);
    yield chunk.subarray(0, bytesRead);
  }
}

export async function readRegularFile(path: string, options: RegularFileOptions & ReadOptions): Promise<Buffer> {
  const handle = await openRegularFile(path, options);
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of readFileChunks(handle, options)) chunks.push(chunk);
    return Buffer.concat(chunks);
  } finally {
    await handle.close();
  }
}

function checkEntry(entry: Stats, maxBytes: number): void {
  if (!entry.isFile()) throw new FileRefusal('not-regular', `${kindOf(entry)}, not a regular file`);
  if (entry.size > maxBytes) throw tooLarge(maxBytes, entry.size);
}

function tooLarge(maxBytes: number, size?: number): FileRefusal {
  return new FileRefusal('too-large', `larger than ${maxBytes} bytes${size !== undefined ? ` (${size})` : ''}`);
}

function kindOf(entry: Stats): string {
  if (entry.isSymbolicLink()) return 'a symbolic link';
  if (entry.isDirectory()) return 'a directory';
  if (entry.isFIFO()) return 'a FIFO (named pipe)';
  if (entry.isCharacterDevice()) return 'a character device';
  if (entry.isBlockDevice()) return 'a block device';
  if (entry.isSocket()) return 'a socket';
  return 'a special file';
}
