/** A gzip bomb served over HTTP, for tests of the scrape size limit, and the backpressure helper it writes with. */
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

/** A gzip body of `mebibytes` MiB of zeros, about 1 KB compressed per MiB, served with `contentType`. */
export function gzipBomb(mebibytes: number, contentType: string): GzipBomb {
  // 1 MiB of zeros, deflated with a full flush: a byte-aligned, self-contained run of blocks
  // (about 1 KB) that can be repeated to make a valid deflate stream of any length.
  const block = zlib.deflateRawSync(Buffer.alloc(1 << 20), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
  const batch = Buffer.concat(Array.from({ length: 64 }, () => block));
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
