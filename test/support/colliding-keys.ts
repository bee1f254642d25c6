import { hashRange } from '../../src/exposition/series-index.js';

/**
 * Two series keys `m{a="…"}` with the same key hash under this process's seed. The values are pseudo-random
 * strings, not counting numbers: keys that differ only in a few decimal digits can all hash apart under some seeds
 * (the hash is a bijection on short, regular inputs), while random ones meet the birthday bound.
 */
export function collidingKeys(): [string, string] {
  const seen = new Map<number, string>();
  let state = 0x9e3779b9;
  const nextWord = (): string => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state.toString(36);
  };
  for (let i = 0; i < 2_000_000; i++) {
    const key = `m{a="${nextWord()}${nextWord()}"}`;
    const hash = hashRange(key, 0, key.length);
    const other = seen.get(hash);
    if (other !== undefined) return [other, key];
    seen.set(hash, key);
  }
  throw new Error('no two keys collide');
}
