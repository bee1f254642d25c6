/**
 * One worker thread running a module of this package, sent requests by message and answering each by its id; used
 * where work would hold the event loop too long (parsing a large page or answer).
 *
 * Contract:
 * - The worker starts on first use and is reused; it is unref'd while nothing is pending, so it never keeps the
 *   process alive. A worker that crashes or exits fails every pending request and is replaced by the next one.
 * - Answers settle their requests by `id`, in whatever order they come; `close()` stops the worker and fails
 *   what is pending.
 * - The module runs compiled (`<name>.js` next to the caller) or, when the caller runs from its TypeScript source
 *   (tests, tsx), as `<name>.ts` through tsx.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type ResourceLimits, Worker } from 'node:worker_threads';

export type WorkerModule = {
  /** `import.meta.url` of the module next to which the worker's module lies. */
  readonly from: string;
  /** The worker module's file name without extension, e.g. `parse-worker`. */
  readonly name: string;
  /** How failures name the worker, e.g. `parse worker` (`parse worker closed`). */
  readonly title: string;
  readonly workerData?: unknown;
  /** Bounds on the worker's heap: a worker that passes them dies, and its pending requests fail. */
  readonly resourceLimits?: ResourceLimits;
};

type Pending<Answer> = { resolve: (answer: Answer) => void; reject: (error: Error) => void };

export class ModuleWorker<Request extends { readonly id: number }, Answer extends { readonly id: number }> {
  readonly #module: WorkerModule;
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending<Answer>>();

  constructor(module: WorkerModule) {
    this.#module = module;
  }

  /** Sends `request` (its id assigned here); `transfer` lists buffers that move to the worker. */
  request(request: Omit<Request, 'id'>, transfer: readonly ArrayBuffer[] = []): Promise<Answer> {
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id }, [...transfer]);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#failAll(new Error(`${this.#module.title} closed`));
    if (worker !== undefined) await worker.terminate();
  }

  #ensureWorker(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = spawnModuleWorker(this.#module);
    worker.unref();
    worker.on('message', (answer: Answer) => this.#settle(answer));
    worker.on('error', (err) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(err instanceof Error ? err : new Error(String(err)));
    });
    worker.on('exit', (code) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#failAll(new Error(`${this.#module.title} exited with code ${code}`));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(answer: Answer): void {
    const pending = this.#pending.get(answer.id);
    if (pending === undefined) return;
    this.#pending.delete(answer.id);
    if (this.#pending.size === 0) this.#worker?.unref();
    pending.resolve(answer);
  }

  #failAll(err: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(err);
  }
}

/** An array's bytes as a transfer list: its buffer, when the array spans all of it (otherwise it is copied). */
export function transferableBuffer(bytes: Uint8Array): ArrayBuffer[] {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    ? [bytes.buffer]
    : [];
}

function spawnModuleWorker(module: WorkerModule): Worker {
  const compiled = new URL(`./${module.name}.js`, module.from);
  const options = {
    workerData: module.workerData,
    ...(module.resourceLimits !== undefined ? { resourceLimits: module.resourceLimits } : {}),
  };
  if (module.from.endsWith('.js') && existsSync(fileURLToPath(compiled))) return new Worker(compiled, options);
  // From TypeScript sources: tsx compiles the worker module and its imports.
  const source = new URL(`./${module.name}.ts`, module.from);
  const bootstrap = [
    `import(${JSON.stringify(tsxEsmApiUrl(module.from))})`,
    `  .then((api) => api.register({ namespace: ${JSON.stringify(module.name)} }).import(${JSON.stringify(source.href)}, ${JSON.stringify(module.from)}))`,
    '  .catch((err) => { setImmediate(() => { throw err; }); });',
  ].join('\n');
  return new Worker(bootstrap, { ...options, eval: true });
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
