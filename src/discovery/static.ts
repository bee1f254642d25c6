/** Targets given as URLs (flags, config file). */
import { LABEL } from '../metrics/names.js';
import { sortTargets, type Target } from './target.js';

export const STATIC_JOB = 'static';

/**
 * One target per distinct URL (after URL normalisation), keyed by that URL, labelled `job`
 * (default `static`) and `instance` (host:port). Throws a TypeError naming the first invalid URL.
 */
export function staticTargets(urls: readonly string[], options: { job?: string } = {}): Target[] {
  const byKey = new Map<string, Target>();
  for (const raw of urls) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new TypeError(`invalid target URL: ${JSON.stringify(raw)}`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') {
      throw new TypeError(`invalid target URL (want http or https): ${JSON.stringify(raw)}`);
    }
    u.hash = '';
    const url = u.toString();
    const port = u.port || (u.protocol === 'https:' ? '443' : '80');
    byKey.set(url, {
      key: url,
      url,
      labels: { [LABEL.job]: options.job ?? STATIC_JOB, [LABEL.instance]: `${u.hostname}:${port}` },
    });
  }
  return sortTargets(byKey.values());
}
