/**
 * Distributions of sync durations, delays and key choices. A distribution is plain data (so scenarios
 * can print it and compute capacity from its mean) plus a sampler bound to one random stream.
 */
import type { Random } from './random.js';

/** A non-negative duration in milliseconds. */
export type DurationDist =
  | { readonly kind: 'constant'; readonly ms: number }
  | { readonly kind: 'uniform'; readonly minMs: number; readonly maxMs: number }
  /** Log-normal: `medianMs` and the standard deviation `sigma` of its logarithm (0.3 tight … 1 heavy-tailed). */
  | { readonly kind: 'lognormal'; readonly medianMs: number; readonly sigma: number }
  | { readonly kind: 'exponential'; readonly meanMs: number }
  | { readonly kind: 'mixture'; readonly parts: readonly { readonly weight: number; readonly dist: DurationDist }[] };

export const constant = (ms: number): DurationDist => ({ kind: 'constant', ms });
export const uniform = (minMs: number, maxMs: number): DurationDist => ({ kind: 'uniform', minMs, maxMs });
export const lognormal = (medianMs: number, sigma: number): DurationDist => ({ kind: 'lognormal', medianMs, sigma });
export const exponential = (meanMs: number): DurationDist => ({ kind: 'exponential', meanMs });
export const mixture = (...parts: { weight: number; dist: DurationDist }[]): DurationDist => ({
  kind: 'mixture',
  parts,
});

/** The mean of a distribution, in ms. */
export function meanMs(dist: DurationDist): number {
  switch (dist.kind) {
    case 'constant':
      return dist.ms;
    case 'uniform':
      return (dist.minMs + dist.maxMs) / 2;
    case 'lognormal':
      return dist.medianMs * Math.exp((dist.sigma * dist.sigma) / 2);
    case 'exponential':
      return dist.meanMs;
    case 'mixture': {
      const total = dist.parts.reduce((sum, part) => sum + part.weight, 0);
      return dist.parts.reduce((sum, part) => sum + (part.weight / total) * meanMs(part.dist), 0);
    }
  }
}

/** The share of draws of `dist` longer than `ms`. */
export function shareAbove(dist: DurationDist, ms: number): number {
  switch (dist.kind) {
    case 'constant':
      return dist.ms > ms ? 1 : 0;
    case 'uniform':
      return Math.min(1, Math.max(0, (dist.maxMs - ms) / (dist.maxMs - dist.minMs)));
    case 'lognormal':
      if (ms <= 0) return 1;
      return dist.sigma === 0
        ? Number(dist.medianMs > ms)
        : 0.5 * erfc(Math.log(ms / dist.medianMs) / (dist.sigma * Math.SQRT2));
    case 'exponential':
      return ms <= 0 ? 1 : Math.exp(-ms / dist.meanMs);
    case 'mixture': {
      const total = dist.parts.reduce((sum, part) => sum + part.weight, 0);
      return dist.parts.reduce((sum, part) => sum + (part.weight / total) * shareAbove(part.dist, ms), 0);
    }
  }
}

/** The complementary error function, to a relative error under 1.2e-7 (Numerical Recipes' `erfcc`). */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + z / 2);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** A sampler for `dist` drawing from `rng`. */
export function sampler(dist: DurationDist, rng: Random): () => number {
  switch (dist.kind) {
    case 'constant': {
      const ms = dist.ms;
      return () => ms;
    }
    case 'uniform': {
      const { minMs, maxMs } = dist;
      return () => rng.uniform(minMs, maxMs);
    }
    case 'lognormal': {
      const { medianMs, sigma } = dist;
      return () => rng.logNormal(medianMs, sigma);
    }
    case 'exponential': {
      const mean = dist.meanMs;
      return () => rng.exponential(mean);
    }
    case 'mixture': {
      const total = dist.parts.reduce((sum, part) => sum + part.weight, 0);
      const cumulative: number[] = [];
      let acc = 0;
      for (const part of dist.parts) {
        acc += part.weight / total;
        cumulative.push(acc);
      }
      const samplers = dist.parts.map((part) => sampler(part.dist, rng));
      return () => {
        const u = rng.next();
        for (let i = 0; i < cumulative.length - 1; i++) {
          if (u < cumulative[i]!) return samplers[i]!();
        }
        return samplers[samplers.length - 1]!();
      };
    }
  }
}

/** How watch events pick their key among `keys` objects (keys are `0 … keys-1`). */
export type KeyDistribution =
  | { readonly kind: 'uniform' }
  /** Zipf with exponent `s` over key rank: key 0 is the hottest. */
  | { readonly kind: 'zipf'; readonly s: number }
  /** A share `share` of the events goes to the first `hotKeys` keys, the rest uniformly to all keys. */
  | { readonly kind: 'hot'; readonly hotKeys: number; readonly share: number };

/** A key sampler over `keys` keys. */
export function keySampler(dist: KeyDistribution, keys: number, rng: Random): () => number {
  switch (dist.kind) {
    case 'uniform':
      return () => rng.int(keys);
    case 'hot': {
      const hot = Math.max(1, Math.min(dist.hotKeys, keys));
      const share = dist.share;
      return () => (rng.next() < share ? rng.int(hot) : rng.int(keys));
    }
    case 'zipf': {
      const cdf = new Float64Array(keys);
      let acc = 0;
      for (let k = 0; k < keys; k++) {
        acc += 1 / (k + 1) ** dist.s;
        cdf[k] = acc;
      }
      return () => {
        const u = rng.next() * acc;
        let lo = 0;
        let hi = keys - 1;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (cdf[mid]! < u) lo = mid + 1;
          else hi = mid;
        }
        return lo;
      };
    }
  }
}
