/**
 * Gzip bombs: served over HTTP, for tests of the scrape size limit (with the backpressure helper it writes with), or
 * as a file's bytes, for tests of files read within a limit.
 */
import { once } from 'node:events';
import type http from 'node:http';
import zlib from 'node:zlib';

/** Resolves on 'drain' or 'close', removing both listeners. */
export function drainOrClose(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

export interface GzipBomb {
  /**
   * Answers each request with the bomb (`content-encoding: gzip`), written with backpressure until the client
   * hangs up.
   */
  readonly handler: http.RequestListener;
  /** Size of the whole compressed body, had it been sent to the end. */
  readonly compressedBytes: number;
  /** Compressed bytes written so far (after the gzip header). */
  sent(): number;
  /** Resolves when the last response started has closed (at once before any request). */
  closed(): Promise<unknown>;
}

/**
 * The parts of a gzip stream of zeros: its header, then a deflated MiB (about 1 KB) that may follow itself any
 * number of times, and 64 of those as one batch. The stream never ends (no final block, no trailer): a reader
 * that stops at a size limit never reaches its end.
 */
function zerosGzip(): { readonly header: Buffer; readonly mebibyte: Buffer; readonly batch: Buffer } {
  const mebibyte = deflatedRun(Buffer.alloc(1 << 20));
  return { header: GZIP_HEADER, mebibyte, batch: Buffer.concat(Array.from({ length: 64 }, () => mebibyte)) };
}

/** The header of a gzip stream (no name, no time); deflate data follows. */
export const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);

/**
 * `data` deflated with a full flush: a byte-aligned, self-contained run of blocks that may follow any other such
 * run (itself included, any number of times) in a deflate stream.
 */
export function deflatedRun(data: Buffer): Buffer {
  return zlib.deflateRawSync(data, { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
}

/** A file's worth of gzip bomb: `mebibytes` MiB of zeros (a multiple of 64) as about 1 KB per MiB. */
export function gzipBombFile(mebibytes: number): Buffer {
  const { header, batch } = zerosGzip();
  return Buffer.concat([header, ...Array.from({ length: mebibytes / 64 }, () => batch)]);
}

/** A gzip body of `mebibytes` MiB of zeros, about 1 KB compressed per MiB, served with `contentType`. */
export function gzipBomb(mebibytes: number, contentType: string): GzipBomb {
  const { header, mebibyte: block, batch } = zerosGzip();
  let sent = 0;
  let closed: Promise<unknown> = Promise.resolve();
  return {
    handler: async (_req, res) => {
      closed = once(res, 'close');
      res.writeHead(200, { 'content-type': contentType, 'content-encoding': 'gzip' });
      res.write(header);
      for (let i = 0; i < mebibytes / 64 && !res.destroyed; i++) {
        sent += batch.length;
        if (!res.write(batch)) await drainOrClose(res);
      }
      res.end();
    },
    compressedBytes: header.length + mebibytes * block.length,
    sent: () => sent,
    closed: () => closed,
  };
}
