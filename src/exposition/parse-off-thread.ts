/**
 * Parsing large pages without stalling the event loop.
 *
 * `parseOffThread` parses in a worker thread: one worker, started on first use, reused, unref'd
 * while idle (it never keeps the process alive), replaced after a crash. Requests are served in
 * call order. The result arrives as transferred buffers only (samples, and every series key as
 * UTF-8 bytes), so receiving it costs the calling thread neither copying nor per-series work. (A
 * key with a lone surrogate, which text decoded from bytes cannot have, comes back with U+FFFD.) `parsePage` parses small pages
 * inline and large ones (`offThreadAboveBytes`, default 1 MiB) off-thread. `closeParseWorker()`
 * stops the worker; pending requests reject.
 *
 * The worker runs the compiled `parse-worker.js` next to this module; when this module runs from
 * its TypeScript source (tests, tsx), the worker loads `parse-worker.ts` through tsx instead.
 */
import { ModuleWorker, transferableBuffer } from '../util/module-worker.js';
import { ExpositionError } from './exposition-error.js';
import { type OffThreadParseOptions, type ParseRequest, type ParseResponse, toParseOptions } from './parse-protocol.js';
import { type ParsedPage, pageFromData } from './parsed-page.js';
import { parseExposition } from './parser.js';
import { HASH_SEED } from './series-index.js';

export type { OffThreadParseOptions } from './parse-protocol.js';

export const OFF_THREAD_THRESHOLD_BYTES = 1024 * 1024;

class ParseWorkerPool {
  // The worker hashes series keys with this thread's seed, so the hashes of its pages match.
  readonly #worker = new ModuleWorker<ParseRequest, ParseResponse>({
    from: import.meta.url,
    name: 'parse-worker',
    title: 'parse worker',
    workerData: { hashSeed: HASH_SEED },
  });

  async parse(input: string | Uint8Array, options: OffThreadParseOptions, transferInput: boolean): Promise<ParsedPage> {
    const transfer = transferInput && typeof input !== 'string' ? transferableBuffer(input) : [];
    const response = await this.#worker.request({ input, options }, transfer);
    if (response.ok) return pageFromData(response.page);
    if (response.exposition !== undefined) {
      const e = response.exposition;
      throw new ExpositionError(e.reason, e.line, e.column, options.source);
    }
    throw new Error(response.message ?? 'parse failed');
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}

let pool: ParseWorkerPool | undefined;

/**
 * Parses `input` (text, or UTF-8 bytes) in the shared worker thread. Errors are `ExpositionError`s
 * as in `parseExposition`. Bytes are copied to the worker, unless `transferInput` is set and the
 * array spans its whole buffer: then the buffer moves to the worker (zero-copy) and the caller's
 * array becomes empty.
 */
export function parseOffThread(
  input: string | Uint8Array,
  options: OffThreadParseOptions & { readonly transferInput?: boolean } = {},
): Promise<ParsedPage> {
  pool ??= new ParseWorkerPool();
  const { transferInput, ...parseOptions } = options;
  return pool.parse(input, parseOptions, transferInput === true);
}

export interface ParsePageOptions extends OffThreadParseOptions {
  /** Pages larger than this (bytes, or UTF-16 units for a string) are parsed off-thread. Default 1 MiB. */
  readonly offThreadAboveBytes?: number;
  /** Bytes parsed off-thread move to the worker (see `parseOffThread`); the caller's array becomes empty. */
  readonly transferInput?: boolean;
}

/** Parses inline when small, off-thread when large. */
export async function parsePage(input: string | Uint8Array, options: ParsePageOptions = {}): Promise<ParsedPage> {
  const threshold = options.offThreadAboveBytes ?? OFF_THREAD_THRESHOLD_BYTES;
  const size = typeof input === 'string' ? input.length : input.byteLength;
  const { offThreadAboveBytes: _ignored, transferInput, ...rest } = options;
  if (size > threshold) return parseOffThread(input, { ...rest, ...(transferInput === true ? { transferInput } : {}) });
  const text = typeof input === 'string' ? input : new TextDecoder('utf-8').decode(input);
  return parseExposition(text, toParseOptions(rest));
}

/** Stops the shared worker (a later parse starts a new one). Pending parses reject. */
export async function closeParseWorker(): Promise<void> {
  const p = pool;
  pool = undefined;
  if (p !== undefined) await p.close();
}
