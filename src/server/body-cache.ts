/**
 * Answers kept for reuse, bounded in entries and in bytes, least recently used first out.
 *
 * Contract: after every `set`, the cache holds at most `maxEntries` bodies whose `heldBytesBound` add up to at
 * most `maxBytes`; since a body's bound only shrinks as its compressed forms are made, that holds at all times. A
 * body larger than `maxBytes` on its own is not kept (the caller still serves it). `get` makes an entry the most
 * recently used.
 */
import type { CachedBody } from './cached-body.js';

export type BodyCacheLimits = {
  readonly maxEntries: number;
  readonly maxBytes: number;
};

export class BodyCache<Key> {
  readonly limits: BodyCacheLimits;
  /** In order of use, least recent first. */
  readonly #bodies = new Map<Key, CachedBody>();
  /** At least the sum of the bodies' bounds (exact when counted, then only too high as bounds shrink). */
  #charged = 0;

  constructor(limits: BodyCacheLimits) {
    this.limits = limits;
  }

  get size(): number {
    return this.#bodies.size;
  }

  get(key: Key): CachedBody | undefined {
    const body = this.#bodies.get(key);
    if (body !== undefined) {
      this.#bodies.delete(key);
      this.#bodies.set(key, body);
    }
    return body;
  }

  set(key: Key, body: CachedBody): void {
    this.#remove(key);
    this.#bodies.set(key, body);
    this.#charged += body.heldBytesBound;
    if (this.#charged > this.limits.maxBytes) this.#charged = this.heldBytesBound();
    while (this.#bodies.size > this.limits.maxEntries || this.#charged > this.limits.maxBytes) {
      const oldest = this.#bodies.keys().next();
      if (oldest.done === true) break;
      this.#remove(oldest.value);
    }
  }

  clear(): void {
    this.#bodies.clear();
    this.#charged = 0;
  }

  /** The sum of the kept bodies' `heldBytesBound`. */
  heldBytesBound(): number {
    let total = 0;
    for (const body of this.#bodies.values()) total += body.heldBytesBound;
    return total;
  }

  #remove(key: Key): void {
    const body = this.#bodies.get(key);
    if (body === undefined) return;
    this.#bodies.delete(key);
    this.#charged = Math.max(0, this.#charged - body.heldBytesBound);
  }
}
