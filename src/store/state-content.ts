/**
 * The content of a state file as it is decompressed: streamed through gunzip on the thread pool, read line by
 * line and block by block, never held whole.
 *
 * Contract:
 * - `openStateContent(compressed, limits, signal)` takes the file's bytes (a buffer, or chunks as they are read)
 *   and refuses, as a `StateFileError`, an empty file (`damaged`), one that is not gzip (`foreign`), one over
 *   `limits.maxFileBytes` (`limits`), and content past `limits.maxContentBytes` (`limits`, with the decompressed
 *   bytes read when it stopped: the content's limit plus at most one chunk of gzip's output). Bad or truncated
 *   gzip data is `damaged`. Any other error of the chunks (a file that cannot be read) is passed on as it is.
 * - `line(maxBytes, what)` gives the next line without its newline, `undefined` when the content ends before the
 *   newline (nothing, or a line cut short); a longer line is `limits`, named by `what`. `bytes(n)` gives the
 *   next `n` bytes, `undefined` when the content ends first. `atEnd()` tells whether anything follows.
 * - Once `signal` is aborted, the next read rejects with its reason. `close()` stops the decompression and the
 *   reading of the chunks; the reader is closed once, by whoever opened it.
 */
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { StateFileError } from './state-file-error.js';
import type { StateFileLimits } from './state-file-limits.js';

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
const NEWLINE = 0x0a;
const EMPTY: Buffer = Buffer.alloc(0);

export type CompressedState = Uint8Array | AsyncIterable<Uint8Array>;

export interface StateContent {
  line(maxBytes: number, what: string): Promise<Buffer | undefined>;
  bytes(n: number): Promise<Buffer | undefined>;
  atEnd(): Promise<boolean>;
  close(): void;
}

export function openStateContent(
  compressed: CompressedState,
  limits: Pick<StateFileLimits, 'maxFileBytes' | 'maxContentBytes'>,
  signal?: AbortSignal,
): StateContent {
  const source = compressed instanceof Uint8Array ? [compressed] : compressed;
  const gunzip = pipeline(Readable.from(checkedGzip(source, limits.maxFileBytes)), createGunzip(), () => {});
  const chunks = gunzip[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let pending: Buffer = EMPTY;
  let bytesRead = 0;

  /** The next chunk into `pending` (which must be used up); false at the end of the content. */
  const fill = async (): Promise<boolean> => {
    signal?.throwIfAborted();
    let next: IteratorResult<Buffer>;
    try {
      next = await chunks.next();
    } catch (error) {
      throw gzipProblem(error);
    }
    signal?.throwIfAborted();
    if (next.done === true) return false;
    bytesRead += next.value.length;
    if (bytesRead > limits.maxContentBytes) {
      throw new StateFileError('limits', `more than ${limits.maxContentBytes} bytes once decompressed`, {
        contentBytesRead: bytesRead,
      });
    }
    pending = next.value;
    return true;
  };

  return {
    async line(maxBytes, what) {
      const parts: Buffer[] = [];
      let length = 0;
      for (;;) {
        const end = pending.indexOf(NEWLINE);
        if (length + (end === -1 ? pending.length : end) > maxBytes) {
          throw new StateFileError('limits', `the ${what} is longer than ${maxBytes} bytes`);
        }
        if (end !== -1) {
          parts.push(pending.subarray(0, end));
          pending = pending.subarray(end + 1);
          return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
        }
        parts.push(pending);
        length += pending.length;
        pending = EMPTY;
        if (!(await fill())) return undefined;
      }
    },
    async bytes(n) {
      const parts: Buffer[] = [];
      let missing = n;
      while (missing > 0) {
        if (pending.length === 0 && !(await fill())) return undefined;
        const part = pending.subarray(0, missing);
        parts.push(part);
        pending = pending.subarray(part.length);
        missing -= part.length;
      }
      return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, n);
    },
    async atEnd() {
      return pending.length === 0 && !(await fill());
    },
    close() {
      gunzip.destroy();
    },
  };
}

/** The compressed chunks as they come, once the first bytes are gzip's and while they stay within `maxBytes`. */
async function* checkedGzip(source: Iterable<Uint8Array> | AsyncIterable<Uint8Array>, maxBytes: number) {
  let total = 0;
  let head: Buffer = EMPTY;
  for await (const chunk of source) {
    total += chunk.length;
    if (total > maxBytes) throw new StateFileError('limits', `larger than ${maxBytes} bytes`);
    if (head.length < GZIP_MAGIC.length) {
      head = Buffer.concat([head, chunk.subarray(0, GZIP_MAGIC.length - head.length)]);
      if (!GZIP_MAGIC.subarray(0, head.length).equals(head)) {
        throw new StateFileError('foreign', 'not gzip-compressed: not a state file');
      }
    }
    yield chunk;
  }
  if (total === 0) throw new StateFileError('damaged', 'the file is empty');
}

/** A failure while decompressing: zlib's own errors in words, anything else (a read error, a refusal) as it is. */
function gzipProblem(error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code !== 'string' || !code.startsWith('Z_')) return error;
  if (code === 'Z_BUF_ERROR') return new StateFileError('damaged', 'truncated (the gzip data ends early)');
  return new StateFileError('damaged', `bad gzip data: ${(error as Error).message}`);
}
