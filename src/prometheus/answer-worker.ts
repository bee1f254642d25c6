/**
 * Worker-thread entry for `decodeAnswer` (answer-decoder.ts): decodes one answer per message and posts the result
 * back with its columns transferred. Does nothing when imported outside a worker.
 */
import { parentPort } from 'node:worker_threads';
import type { AnswerRequest, AnswerResponse } from './answer-decoder.js';
import { answerBuffers, decodePrometheusAnswer } from './prometheus-answer.js';

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (request: AnswerRequest) => {
    try {
      const answer = decodePrometheusAnswer(request.body, request.shape, request.quoteChars);
      const response: AnswerResponse = { id: request.id, ok: true, answer };
      port.postMessage(response, answerBuffers(answer));
    } catch (err) {
      const response: AnswerResponse = {
        id: request.id,
        ok: false,
        message: err instanceof Error ? err.message : String(err),
      };
      port.postMessage(response);
    }
  });
}
