/**
 * Memory sizes as Kubernetes writes them (`resources.limits.memory`): a whole number of bytes, or a number with a
 * binary (`Ki`, `Mi`, `Gi`, `Ti`) or decimal (`k`, `M`, `G`, `T`) suffix, e.g. `192Mi`, `0.5Gi`, `400M`,
 * `201326592`.
 *
 * Contract: `parseMemoryQuantity` returns the whole number of bytes (rounded down) or throws a `RangeError` saying
 * what is accepted; `formatMiB` writes bytes as MiB for logs and messages.
 */

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

const QUANTITY = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/;

export function parseMemoryQuantity(text: string): number {
  const match = QUANTITY.exec(text.trim());
  const bytes = match === null ? Number.NaN : Math.floor(Number(match[1]) * (UNITS[match[2] ?? ''] as number));
  if (!(Number.isSafeInteger(bytes) && bytes > 0)) {
    throw new RangeError(`invalid memory size ${JSON.stringify(text)}: expected bytes or a size such as 192Mi or 1Gi`);
  }
  return bytes;
}

export function formatMiB(bytes: number): string {
  const mib = bytes / 2 ** 20;
  return `${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB`;
}
