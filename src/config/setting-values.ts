/**
 * The kinds of value a setting of `serve` takes, and how a raw value of each kind is read and checked,
 * whichever layer it came from: a flag or `WQD_` variable gives a string, the file may give a YAML
 * number, boolean, list or mapping.
 *
 * Contract: `parseSettingValue(kind, raw, where)` returns the value in its final form (a duration in
 * milliseconds, a memory size in bytes (`Infinity` for `max`), a list without empty items, a `ListenAddress`, a
 * selector's `LabelMatcher`s, ...) or throws a `ConfigError` whose
 * message starts with `where` (e.g. `--scrape-interval: invalid duration "5x" ...`). Strings are
 * trimmed; an empty string is an error, an empty list item is dropped.
 */

import { PROMETHEUS_ENGINES } from '../prometheus/prometheus-backend.js';
import { RECORDED_SERIES_MODES } from '../prometheus/recorded-series.js';
import { parseSelector, SelectorError } from '../promql/selector.js';
import { ParseError, parseDuration } from '../util/duration.js';
import { parseMemoryQuantity } from '../util/memory-quantity.js';
import { ConfigError, describeValue } from './config-error.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type ListenAddress = { readonly host: string; readonly port: number };

export type SettingKind =
  | 'string'
  | 'duration'
  | 'boolean'
  | 'list'
  | 'urls'
  | 'integer'
  | 'port'
  | 'url'
  | 'listen'
  | 'logLevel'
  | 'headers'
  | 'scheme'
  | 'prometheusEngine'
  | 'recordedSeriesMode'
  | 'selector'
  | 'labelName'
  | 'memory';

const LABEL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function parseSettingValue(kind: SettingKind, raw: unknown, where: string): unknown {
  switch (kind) {
    case 'string':
      return nonEmptyString(raw, where);
    case 'duration': {
      const text = typeof raw === 'number' ? String(raw) : nonEmptyString(raw, where);
      try {
        return parseDuration(text);
      } catch (error) {
        if (error instanceof ParseError) throw new ConfigError(`${where}: ${error.message}`);
        throw error;
      }
    }
    case 'boolean':
      return parseBoolean(raw, where);
    case 'list':
      return parseList(raw, where);
    case 'urls': {
      const urls = parseList(raw, where);
      for (const url of urls) httpUrl(url, where, 'target URL');
      return urls;
    }
    case 'integer':
      return parseInteger(raw, where, 1, Number.MAX_SAFE_INTEGER);
    case 'port':
      return parseInteger(raw, where, 1, 65_535);
    case 'url':
      return httpUrl(nonEmptyString(raw, where), where, 'URL');
    case 'listen':
      return parseListenAddress(nonEmptyString(raw, where), where);
    case 'logLevel': {
      const level = nonEmptyString(raw, where);
      if (!(LOG_LEVELS as readonly string[]).includes(level)) {
        throw new ConfigError(
          `${where}: invalid log level ${JSON.stringify(level)}; expected one of ${LOG_LEVELS.join(', ')}`,
        );
      }
      return level;
    }
    case 'scheme': {
      const scheme = nonEmptyString(raw, where);
      if (scheme !== 'http' && scheme !== 'https') {
        throw new ConfigError(`${where}: invalid scheme ${JSON.stringify(scheme)}; expected http or https`);
      }
      return scheme;
    }
    case 'prometheusEngine':
      return oneOf(PROMETHEUS_ENGINES, 'engine', raw, where);
    case 'recordedSeriesMode':
      return oneOf(RECORDED_SERIES_MODES, 'mode', raw, where);
    case 'headers':
      return parseHeaders(raw, where);
    case 'selector': {
      if (typeof raw !== 'string') {
        throw new ConfigError(
          `${where}: expected label matchers as a string such as 'job=~"my-operator.*"', got ${describeValue(raw)}`,
        );
      }
      try {
        return parseSelector(raw);
      } catch (error) {
        if (error instanceof SelectorError) throw new ConfigError(`${where}: ${error.message}`);
        throw error;
      }
    }
    case 'memory': {
      // `max`, as cgroups write it: no limit, so the fixed defaults.
      const text = typeof raw === 'number' ? String(raw) : nonEmptyString(raw, where);
      if (text === 'max') return Number.POSITIVE_INFINITY;
      try {
        return parseMemoryQuantity(text);
      } catch (error) {
        if (error instanceof RangeError) throw new ConfigError(`${where}: ${error.message}, or max`);
        throw error;
      }
    }
    case 'labelName': {
      if (typeof raw !== 'string' || !LABEL_NAME.test(raw.trim())) {
        throw new ConfigError(`${where}: expected a label name such as cluster, got ${describeValue(raw)}`);
      }
      return raw.trim();
    }
  }
}

function nonEmptyString(raw: unknown, where: string): string {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new ConfigError(`${where}: expected a non-empty string, got ${describeValue(raw)}`);
  return raw.trim();
}

function parseBoolean(raw: unknown, where: string): boolean {
  if (typeof raw === 'boolean') return raw;
  if (typeof raw === 'string') {
    const text = raw.trim().toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
  }
  throw new ConfigError(`${where}: expected true or false, got ${describeValue(raw)}`);
}

function parseList(raw: unknown, where: string): string[] {
  const items = typeof raw === 'string' ? raw.split(',') : Array.isArray(raw) ? raw : undefined;
  if (items === undefined) throw new ConfigError(`${where}: expected a list, got ${describeValue(raw)}`);
  const out: string[] = [];
  for (const [i, item] of items.entries()) {
    if (typeof item !== 'string')
      throw new ConfigError(`${where}[${i}]: expected a string, got ${describeValue(item)}`);
    const text = item.trim();
    if (text !== '') out.push(text);
  }
  return out;
}

function parseInteger(raw: unknown, where: string, min: number, max: number): number {
  const n =
    typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${where}: expected an integer from ${min} to ${max}, got ${describeValue(raw)}`);
  }
  return n;
}

function httpUrl(text: string, where: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${where}: invalid ${what} ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${where}: invalid ${what} ${JSON.stringify(text)}: expected http or https`);
  }
  return text;
}

function parseHeaders(raw: unknown, where: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(raw)) {
    for (const item of raw) {
      const colon = typeof item === 'string' ? item.indexOf(':') : -1;
      if (typeof item !== 'string' || colon <= 0) {
        throw new ConfigError(`${where}: expected "Name: value", got ${describeValue(item)}`);
      }
      out[item.slice(0, colon).trim()] = item.slice(colon + 1).trim();
    }
    return out;
  }
  if (!isMapping(raw))
    throw new ConfigError(`${where}: expected a mapping of header names to values, got ${describeValue(raw)}`);
  for (const [name, value] of Object.entries(raw)) {
    if (typeof value !== 'string')
      throw new ConfigError(`${where}.${name}: expected a string, got ${describeValue(value)}`);
    out[name] = value;
  }
  return out;
}

/** `host:port`, `[v6]:port` or `:port` (all interfaces); port 0 picks a free one. */
export function parseListenAddress(text: string, where: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(text.trim());
  const port = match === null ? Number.NaN : Number(match[3]);
  if (match === null || !(port >= 0 && port <= 65_535)) {
    throw new ConfigError(
      `${where}: invalid listen address ${JSON.stringify(text)}: expected host:port, e.g. 0.0.0.0:9808`,
    );
  }
  const host = match[1] ?? match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** `host:port` as typed in a URL (IPv6 in brackets). */
export function formatListenAddress(address: ListenAddress): string {
  return `${address.host.includes(':') ? `[${address.host}]` : address.host}:${address.port}`;
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A string that is one of `allowed`; otherwise an error naming what it is (`engine`, `mode`) and the choices. */
function oneOf(allowed: readonly string[], what: string, raw: unknown, where: string): string {
  const value = nonEmptyString(raw, where);
  if (!allowed.includes(value)) {
    throw new ConfigError(`${where}: invalid ${what} ${JSON.stringify(value)}; expected one of ${allowed.join(', ')}`);
  }
  return value;
}
