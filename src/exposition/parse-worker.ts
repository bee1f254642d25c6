/**
 * Worker-thread entry for `parseOffThread`: parses one page per message and posts the result back
 * with its typed arrays transferred. Does nothing when imported outside a worker.
 */
import { parentPort } from 'node:worker_threads';
import { ExpositionError } from './exposition-error.js';
import { type ParseRequest, type ParseResponse, toParseOptions } from './parse-protocol.js';
import { pageToData } from './parsed-page.js';
import { parseExposition } from './parser.js';

const decoder = new TextDecoder('utf-8');

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (request: ParseRequest) => {
    try {
      const text = typeof request.input === 'string' ? request.input : decoder.decode(request.input);
      // The bytes are not needed once decoded: let them go before the parse needs memory of its own.
      (request as { input?: unknown }).input = undefined;
      const page = parseExposition(text, toParseOptions(request.options));
      const { data, transfer } = pageToData(page);
      const response: ParseResponse = { id: request.id, ok: true, page: data };
      port.postMessage(response, transfer);
    } catch (err) {
      const response: ParseResponse =
        err instanceof ExpositionError
          ? { id: request.id, ok: false, exposition: { reason: err.reason, line: err.line, column: err.column } }
          : { id: request.id, ok: false, message: err instanceof Error ? err.message : String(err) };
      port.postMessage(response);
    }
  });
}
