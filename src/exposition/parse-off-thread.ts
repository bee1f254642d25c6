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
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ExpositionError } from './exposition-error.js';
import { type OffThreadParseOptions, type ParseRequest, type ParseResponse, toParseOptions } from './parse-protocol.js';
import { type ParsedPage, pageFromData } from './parsed-page.js';
import { parseExposition } from './parser.js';
import { HASH_SEED } from './series-index.js';

export type { OffThreadParseOptions } from './parse-protocol.js';

export const OFF_THREAD_THRESHOLD_BYTES = 1024 * 1024;

interface Pending {
  resolve: (page: ParsedPage) => void;
  reject: (err: Error) => void;
  source: string | undefined;
}

class ParseWorkerPool {
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();

  parse(input: string | Uint8Array, options: OffThreadParseOptions, transferInput: boolean): Promise<ParsedPage> {
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<ParsedPage>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, source: options.source });
      worker.ref();
      const request: ParseRequest = { id, input, options };
      const transfer =
        transferInput &&
        typeof input !== 'string' &&
        input.byteOffset === 0 &&
        input.byteLength === input.buffer.byteLength &&
        input.buffer instanceof ArrayBuffer
          ? [input.buffer]
          : [];
      worker.postMessage(request, transfer);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error('parse worker closed'));
    if (worker !== undefined) await worker.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = spawnWorker();
    worker.unref();
    worker.on('message', (response: ParseResponse) => this.#settle(response));
    worker.on('error', (err) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(err instanceof Error ? err : new Error(String(err)));
    });
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error(`parse worker exited with code ${code}`));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(response: ParseResponse): void {
    const pending = this.#pending.get(response.id);
    if (pending === undefined) return;
    this.#pending.delete(response.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    if (response.ok) {
      pending.resolve(pageFromData(response.page));
    } else if (response.exposition !== undefined) {
      const e = response.exposition;
      pending.reject(new ExpositionError(e.reason, e.line, e.column, pending.source));
    } else {
      pending.reject(new Error(response.message ?? 'parse failed'));
    }
  }

  #failAll(err: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(err);
  }
}

function spawnWorker(): Worker {
  const here = import.meta.url;
  const compiled = new URL('./parse-worker.js', here);
  // The worker hashes series keys with this thread's seed, so the hashes of its pages match.
  const workerData = { hashSeed: HASH_SEED };
  if (here.endsWith('.js') && existsSync(fileURLToPath(compiled))) return new Worker(compiled, { workerData });
  // From TypeScript sources: tsx compiles the worker module and its imports.
  const source = new URL('./parse-worker.ts', here);
  const bootstrap = [
    `import(${JSON.stringify(tsxEsmApiUrl(here))})`,
    `  .then((api) => api.register({ namespace: 'parse-worker' }).import(${JSON.stringify(source.href)}, ${JSON.stringify(here)}))`,
    '  .catch((err) => { setImmediate(() => { throw err; }); });',
  ].join('\n');
  return new Worker(bootstrap, { eval: true, workerData });
}

/** The URL of tsx's ESM API (`tsx/esm/api`, import condition), found from `from`. */
function tsxEsmApiUrl(from: string): string {
  const manifestPath = createRequire(from).resolve('tsx/package.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const entry = manifest.exports['./esm/api']?.import.default;
  if (entry === undefined) throw new Error('tsx has no ./esm/api export');
  return pathToFileURL(join(dirname(manifestPath), entry)).href;
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
