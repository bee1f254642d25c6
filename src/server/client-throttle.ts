/**
 * A token bucket per client address: `burst` attempts at once, then `perSecond` more each second.
 *
 * Contract:
 * - A client is its address, with IPv6 addresses taken by their /64 prefix (what one host or subscriber is
 *   usually given, so that rotating through it gains nothing) and IPv4-mapped IPv6 addresses as IPv4.
 * - `take` spends one attempt and answers undefined, or, when the client has none left, the whole seconds until
 *   it has one again (for `Retry-After`); a refused attempt spends nothing.
 * - The table holds at most `maxClients` buckets; a new client beyond that takes the place of the least recently
 *   seen one (which then starts afresh, as a client that waited would).
 */
import { isIPv6 } from 'node:net';

export type ThrottleLimits = {
  readonly burst: number;
  readonly perSecond: number;
  readonly maxClients: number;
};

export interface ClientThrottle {
  take(address: string): number | undefined;
  /** Clients in the table. */
  readonly clients: number;
}

type Bucket = { attempts: number; atMs: number };

export function createClientThrottle(limits: ThrottleLimits, now: () => number = Date.now): ClientThrottle {
  const { burst, perSecond, maxClients } = limits;
  if (!(burst >= 1 && perSecond > 0 && maxClients >= 1)) {
    throw new RangeError(`invalid throttle limits: ${JSON.stringify(limits)}`);
  }
  /** In order of use, least recent first. */
  const buckets = new Map<string, Bucket>();
  return {
    take(address) {
      const client = clientOf(address);
      const atMs = now();
      const known = buckets.get(client);
      const bucket: Bucket =
        known === undefined
          ? { attempts: burst, atMs }
          : {
              attempts: Math.min(burst, known.attempts + (Math.max(0, atMs - known.atMs) / 1000) * perSecond),
              atMs,
            };
      buckets.delete(client);
      const allowed = bucket.attempts >= 1;
      if (allowed) bucket.attempts -= 1;
      buckets.set(client, bucket);
      if (buckets.size > maxClients) buckets.delete(buckets.keys().next().value as string);
      return allowed ? undefined : Math.max(1, Math.ceil((1 - bucket.attempts) / perSecond));
    },
    get clients() {
      return buckets.size;
    },
  };
}

/** The address a bucket belongs to (see the module contract). */
export function clientOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
