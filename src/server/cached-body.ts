/**
 * An answer (JSON unless told otherwise) serialized once and served many times: the UTF-8 bytes, gzip and brotli forms made on
 * first demand (in the thread pool, never on the event loop), and a weak ETag. The levels are sized for a live
 * endpoint that compresses anew after every evaluation, on a sidecar's fraction of a core: brotli at quality 5 and
 * gzip at level 6 compress a 300 KB report in about 5–8 ms to about 55 KB; quality 11 saves another quarter of
 * the bytes for 400 ms of CPU per body and evaluation.
 *
 * Serving picks the encoding from `Accept-Encoding` (brotli, then gzip, else identity; `q=0` excludes),
 * answers `304 Not Modified` to a matching `If-None-Match`, and always says `Vary: Accept-Encoding`.
 * Bodies below `MIN_COMPRESS_BYTES` are sent as they are.
 *
 * At most `COMPRESSION_SLOTS` compressions run at once, process-wide; the others wait their turn. A compression
 * holds its encoder's state (several MiB for brotli) from the moment it is created, and native memory, once
 * taken, stays with the process: 50 clients each asking for another filter of a 220 KB report at once took
 * 150 MiB of resident memory that was never given back; two at a time keep it to a few MiB.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createSlots } from '../util/slots.js';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** Smaller bodies are not worth a compression round trip. */
export const MIN_COMPRESS_BYTES = 1024;

type Encoding = 'br' | 'gzip' | 'identity';
const COMPRESSED_ENCODINGS = ['br', 'gzip'] as const;

/** Compressions running at once (see the module comment); the thread pool has four threads besides. */
export const COMPRESSION_SLOTS = 2;
const compressions = createSlots(COMPRESSION_SLOTS);

export class CachedBody {
  readonly bytes: Buffer;
  readonly etag: string;
  /** Compressed forms: the promise while compressing, then the bytes (served without a promise hop). */
  readonly #encoded = new Map<Encoding, Promise<Buffer> | Buffer>();

  constructor(
    /** The body: text (encoded as UTF-8), or its bytes (kept as they are, not copied). */
    content: string | Buffer,
    /** The `Content-Type` it is served with. */
    readonly contentType: string = JSON_CONTENT_TYPE,
  ) {
    this.bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    this.etag = `W/"${createHash('sha1').update(this.bytes).digest('base64url').slice(0, 22)}"`;
    this.#encoded.set('identity', this.bytes);
  }

  /**
   * The most this body will hold: its bytes, each compressed form made, and for each form not yet made the
   * length of the bytes (a compressed form of JSON or HTML is a fraction of it). It only shrinks as forms are made.
   */
  get heldBytesBound(): number {
    let total = this.bytes.length;
    for (const encoding of COMPRESSED_ENCODINGS) {
      const form = this.#encoded.get(encoding);
      total += Buffer.isBuffer(form) ? form.length : this.bytes.length;
    }
    return total;
  }

  encoded(encoding: Encoding): Promise<Buffer> | Buffer {
    let found = this.#encoded.get(encoding);
    if (found === undefined) {
      const pending = compressions.run(() =>
        encoding === 'gzip' ? gzipAsync(this.bytes, { level: GZIP_LEVEL }) : brotliAsync(this.bytes, BROTLI_OPTIONS),
      );
      found = pending.then((bytes) => {
        this.#encoded.set(encoding, bytes);
        return bytes;
      });
      this.#encoded.set(encoding, found);
    }
    return found;
  }
}

const GZIP_LEVEL = 6;
const BROTLI_OPTIONS = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: 5,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
};

/** Sends `body` (as its content type) with the best encoding the client accepts, or 304 when it has this version. */
export function sendCached(
  request: FastifyRequest,
  reply: FastifyReply,
  body: CachedBody,
  /** Request headers besides `Accept-Encoding` that the answer depends on (for `Vary`). */
  vary: readonly string[] = [],
): FastifyReply | Promise<FastifyReply> {
  reply
    .header('etag', body.etag)
    .header('vary', ['accept-encoding', ...vary].join(', '))
    .type(body.contentType);
  if (matches(request.headers['if-none-match'], body.etag)) return reply.code(304).send();
  const encoding = body.bytes.length < MIN_COMPRESS_BYTES ? 'identity' : negotiate(request.headers['accept-encoding']);
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  const bytes = body.encoded(encoding);
  return Buffer.isBuffer(bytes) ? reply.send(bytes) : bytes.then((b) => reply.send(b));
}

/** The preferred encoding among those `Accept-Encoding` allows. */
export function negotiate(header: string | undefined): Encoding {
  if (header === undefined || header === '') return 'identity';
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (token === undefined || token === '') continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(token, q === undefined ? 1 : Number(q));
  }
  const allowed = (name: string): boolean => (weights.get(name) ?? weights.get('*') ?? 0) > 0;
  if (allowed('br')) return 'br';
  if (allowed('gzip')) return 'gzip';
  return 'identity';
}

function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === bare;
  });
}
