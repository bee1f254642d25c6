/** A debug-level pino logger that writes each log line into `lines`, for tests that read what was logged. */
import { Writable } from 'node:stream';
import { pino } from 'pino';

export function capturingLogger(lines: string[]) {
  return pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    }),
  );
}
