/**
 * Decoding Prometheus answers without holding the event loop: an answer of up to `OFF_THREAD_ABOVE_BYTES` is
 * decoded inline (a few milliseconds), a larger one on a worker thread (module-worker.ts), its bytes moved there
 * without a copy and its samples moved back as typed arrays.
 *
 * The worker's heap is bounded (`WORKER_HEAP_MIB`): JSON of an API answer takes about 4.5 times its size once
 * parsed (measured: 20 MiB of a matrix, 85 MiB of heap), so an answer at `PROMETHEUS_ANSWER_MAX_BYTES` fits with
 * room to spare, and an answer crafted to take more (a body of tiny arrays takes 16 times) ends the worker, not the
 * service: the request fails with `AnswerTooLargeError`.
 */
import { ModuleWorker, transferableBuffer } from '../util/module-worker.js';
import { type AnswerShape, type DecodedAnswer, decodePrometheusAnswer } from './prometheus-answer.js';

/** Larger answers are decoded on the worker thread. */
export const OFF_THREAD_ABOVE_BYTES = 1024 * 1024;
/** The worker's old-generation heap, in MiB (see the module comment). */
const WORKER_HEAP_MIB = 128;

export type AnswerRequest = {
  readonly id: number;
  readonly body: Uint8Array;
  readonly shape: AnswerShape;
  readonly quoteChars: number;
};

export type AnswerResponse =
  | { readonly id: number; readonly ok: true; readonly answer: DecodedAnswer }
  | { readonly id: number; readonly ok: false; readonly message: string };

/** The answer took more memory to decode than the worker may have. */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
}

let worker: ModuleWorker<AnswerRequest, AnswerResponse> | undefined;

/**
 * Decodes `body` (see prometheus-answer.ts). A large body moves to the worker: the caller's buffer is emptied when
 * the body spans all of it.
 */
export async function decodeAnswer(body: Uint8Array, shape: AnswerShape, quoteChars: number): Promise<DecodedAnswer> {
  if (body.byteLength <= OFF_THREAD_ABOVE_BYTES) return decodePrometheusAnswer(body, shape, quoteChars);
  worker ??= new ModuleWorker({
    from: import.meta.url,
    name: 'answer-worker',
    title: 'Prometheus answer decoder',
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MIB },
  });
  const bytes = body.byteLength;
  let response: AnswerResponse;
  try {
    response = await worker.request({ body, shape, quoteChars }, transferableBuffer(body));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new AnswerTooLargeError(
        `decoding the answer (${bytes} bytes) takes more than the decoder's ${WORKER_HEAP_MIB} MiB`,
      );
    }
    throw err;
  }
  if (!response.ok) throw new Error(response.message);
  return response.answer;
}

/** Stops the worker (a later large answer starts a new one); pending decodes reject. */
export async function closeAnswerDecoder(): Promise<void> {
  const running = worker;
  worker = undefined;
  await running?.close();
}
