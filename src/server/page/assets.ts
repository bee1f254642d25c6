/**
 * The page's static files, served by the service itself (no CDN): uPlot (MIT, the chart library, read once
 * from the installed `uplot` package), the page's stylesheet and its script. Each is addressed by a name that
 * carries a hash of its bytes, so it can be cached for a year: a new version has a new name.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PAGE_CSS } from './page-css.js';
import { PAGE_SCRIPT } from './page-script.js';

export const ASSETS_PREFIX = '/assets';

export type Asset = {
  /** The file name under `/assets/`, with its hash. */
  readonly name: string;
  readonly contentType: string;
  readonly bytes: Buffer;
};

export type PageAssets = {
  readonly uplotScript: Asset;
  readonly uplotStyle: Asset;
  readonly pageScript: Asset;
  readonly pageStyle: Asset;
  /** By file name. */
  readonly byName: ReadonlyMap<string, Asset>;
};

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

let loaded: PageAssets | undefined;

/** Reads the files once per process. Throws when the `uplot` package is not installed. */
export function pageAssets(): PageAssets {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  const uplotScript = asset('uplot', 'js', JS, readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js')));
  const uplotStyle = asset('uplot', 'css', CSS, readFileSync(require.resolve('uplot/dist/uPlot.min.css')));
  const pageScript = asset('page', 'js', JS, Buffer.from(PAGE_SCRIPT, 'utf8'));
  const pageStyle = asset('page', 'css', CSS, Buffer.from(PAGE_CSS, 'utf8'));
  const all = [uplotScript, uplotStyle, pageScript, pageStyle];
  loaded = { uplotScript, uplotStyle, pageScript, pageStyle, byName: new Map(all.map((a) => [a.name, a])) };
  return loaded;
}

function asset(base: string, ext: string, contentType: string, bytes: Buffer): Asset {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  return { name: `${base}.${hash}.${ext}`, contentType, bytes };
}

/** The path of an asset, as the page links it. */
export function assetPath(a: Asset): string {
  return `${ASSETS_PREFIX}/${a.name}`;
}
