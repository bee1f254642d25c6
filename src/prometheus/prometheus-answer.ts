/**
 * One answer of the Prometheus HTTP API, decoded from its bytes into a form that is cheap to hand between threads
 * (see answer-decoder.ts, which runs this inline for small answers and on a worker thread for large ones).
 *
 * Contract:
 * - Nothing here throws on what the server sent: a body that is not JSON, or not an object, is `envelope: false`;
 *   `data` that is not what `shape` expects is `dataError`, saying what is wrong.
 * - Every string the answer carries besides the data (`status`, `errorType`, `error`, `warnings`, build-info fields,
 *   `dataError`) comes as an `AnswerText`: at most `quoteChars` characters of it and its length, so that no part of
 *   a huge answer is copied further. Warnings: at most `MAX_WARNINGS`, and how many were left out.
 * - Query results come as columns: every sample's time and value in typed arrays (for a matrix, `ends` gives where
 *   each series' samples end), the series' labels in order. Native-histogram samples are left out and counted.
 * - Sample values are numbers: the API's strings "NaN", "+Inf" and "-Inf" become NaN, Infinity and -Infinity.
 */

export type Labels = Record<string, string>;

/** What the caller expects in `data`: a query result, label sets (`/series`), strings (label values), build info. */
export type AnswerShape = 'query' | 'labelSets' | 'strings' | 'buildInfo';

/** A string of the answer: its first `quoteChars` characters at most, and the length it has. */
export type AnswerText = { readonly prefix: string; readonly length: number };

export type QueryColumns =
  | {
      readonly resultType: 'vector';
      readonly metrics: Labels[];
      readonly times: Float64Array;
      readonly values: Float64Array;
      readonly skipped: number;
    }
  | {
      readonly resultType: 'matrix';
      readonly metrics: Labels[];
      /** Series i's samples are `[ends[i-1] ?? 0, ends[i])`. */
      readonly ends: Uint32Array;
      readonly times: Float64Array;
      readonly values: Float64Array;
      readonly skipped: number;
    }
  | { readonly resultType: 'scalar'; readonly timeSec: number; readonly value: number }
  | { readonly resultType: 'string'; readonly timeSec: number; readonly value: string };

export type AnswerData =
  | { readonly shape: 'query'; readonly columns: QueryColumns }
  | { readonly shape: 'labelSets'; readonly labelSets: Labels[] }
  | { readonly shape: 'strings'; readonly strings: string[] }
  | { readonly shape: 'buildInfo'; readonly fields: Record<string, AnswerText> };

export type DecodedAnswer = {
  /** Whether the body is a JSON object. */
  readonly envelope: boolean;
  readonly status: AnswerText | undefined;
  readonly errorType: AnswerText | undefined;
  readonly error: AnswerText | undefined;
  readonly hasData: boolean;
  readonly warnings: readonly AnswerText[];
  readonly warningsLeftOut: number;
  /** For a success with data: the data as `shape` expects it, or what is wrong with it. */
  readonly data?: AnswerData;
  readonly dataError?: AnswerText;
};

/** Warnings passed on from one answer; the rest are counted. */
export const MAX_WARNINGS = 10;

const decoder = new TextDecoder('utf-8');

export function decodePrometheusAnswer(body: Uint8Array, shape: AnswerShape, quoteChars: number): DecodedAnswer {
  const text = (value: string): AnswerText => ({ prefix: value.slice(0, quoteChars), length: value.length });
  const optionalText = (value: unknown): AnswerText | undefined =>
    typeof value === 'string' ? text(value) : undefined;
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(body));
  } catch {
    json = undefined;
  }
  if (!isRecord(json)) {
    return {
      envelope: false,
      status: undefined,
      errorType: undefined,
      error: undefined,
      hasData: false,
      warnings: [],
      warningsLeftOut: 0,
    };
  }
  const warnings = Array.isArray(json['warnings'])
    ? json['warnings'].filter((w): w is string => typeof w === 'string')
    : [];
  const decoded: DecodedAnswer = {
    envelope: true,
    status: optionalText(json['status']),
    errorType: optionalText(json['errorType']),
    error: optionalText(json['error']),
    hasData: 'data' in json,
    warnings: warnings.slice(0, MAX_WARNINGS).map(text),
    warningsLeftOut: Math.max(0, warnings.length - MAX_WARNINGS),
  };
  if (json['status'] !== 'success' || !decoded.hasData) return decoded;
  try {
    return { ...decoded, data: decodeData(json['data'], shape, text) };
  } catch (err) {
    return { ...decoded, dataError: text(err instanceof Error ? err.message : String(err)) };
  }
}

/** The buffers of a decoded answer, for a worker to transfer rather than copy. */
export function answerBuffers(answer: DecodedAnswer): ArrayBuffer[] {
  const data = answer.data;
  if (data?.shape !== 'query') return [];
  const columns = data.columns;
  if (columns.resultType === 'vector') return [columns.times.buffer, columns.values.buffer] as ArrayBuffer[];
  if (columns.resultType === 'matrix') {
    return [columns.ends.buffer, columns.times.buffer, columns.values.buffer] as ArrayBuffer[];
  }
  return [];
}

/** Parses a sample value as the API writes it: decimal strings, "NaN", "+Inf", "-Inf". */
export function parseSampleValue(raw: unknown): number {
  if (typeof raw !== 'string') throw new TypeError(`sample value is not a string: ${JSON.stringify(raw)}`);
  switch (raw) {
    case 'NaN':
      return Number.NaN;
    case '+Inf':
    case 'Inf':
      return Number.POSITIVE_INFINITY;
    case '-Inf':
      return Number.NEGATIVE_INFINITY;
  }
  const v = raw.trim() === '' ? Number.NaN : Number(raw);
  if (Number.isNaN(v)) throw new TypeError(`sample value is not a number: ${JSON.stringify(raw)}`);
  return v;
}

function decodeData(data: unknown, shape: AnswerShape, text: (value: string) => AnswerText): AnswerData {
  switch (shape) {
    case 'query':
      return { shape, columns: queryColumns(data) };
    case 'labelSets':
      if (!Array.isArray(data)) throw new TypeError('data is not a list');
      return { shape, labelSets: data.map(toLabels) };
    case 'strings':
      if (!Array.isArray(data) || !data.every((v) => typeof v === 'string')) {
        throw new TypeError('data is not a list of strings');
      }
      return { shape, strings: data as string[] };
    case 'buildInfo': {
      if (!isRecord(data)) throw new TypeError('no data');
      const fields: Record<string, AnswerText> = {};
      for (const [name, value] of Object.entries(data)) if (typeof value === 'string') fields[name] = text(value);
      return { shape, fields };
    }
  }
}

function queryColumns(data: unknown): QueryColumns {
  if (!isRecord(data)) throw new TypeError('data is not an object');
  const { resultType, result } = data;
  switch (resultType) {
    case 'vector': {
      if (!Array.isArray(result)) throw new TypeError('vector result is not a list');
      const metrics: Labels[] = [];
      const times = new Float64Array(result.length);
      const values = new Float64Array(result.length);
      let skipped = 0;
      for (const item of result) {
        if (!isRecord(item)) throw new TypeError('vector element is not an object');
        if (item['value'] === undefined && item['histogram'] !== undefined) {
          skipped++;
          continue;
        }
        writePoint(item['value'], times, values, metrics.length);
        metrics.push(toLabels(item['metric']));
      }
      const kept = metrics.length;
      return { resultType, metrics, times: times.slice(0, kept), values: values.slice(0, kept), skipped };
    }
    case 'matrix': {
      if (!Array.isArray(result)) throw new TypeError('matrix result is not a list');
      let total = 0;
      for (const item of result) {
        if (!isRecord(item)) throw new TypeError('matrix element is not an object');
        const points = item['values'] ?? [];
        if (!Array.isArray(points)) throw new TypeError('matrix values is not a list');
        total += points.length;
      }
      const metrics: Labels[] = [];
      const ends = new Uint32Array(result.length);
      const times = new Float64Array(total);
      const values = new Float64Array(total);
      let at = 0;
      let skipped = 0;
      for (const item of result as Record<string, unknown>[]) {
        if (Array.isArray(item['histograms'])) skipped += item['histograms'].length;
        for (const point of (item['values'] ?? []) as unknown[]) writePoint(point, times, values, at++);
        ends[metrics.length] = at;
        metrics.push(toLabels(item['metric']));
      }
      return { resultType, metrics, ends, times, values, skipped };
    }
    case 'scalar': {
      const point = new Float64Array(2);
      writePoint(result, point.subarray(0, 1), point.subarray(1), 0);
      return { resultType, timeSec: point[0] as number, value: point[1] as number };
    }
    case 'string': {
      if (!Array.isArray(result) || result.length !== 2 || typeof result[1] !== 'string') {
        throw new TypeError('string result is not [time, "text"]');
      }
      return { resultType, timeSec: toTime(result[0]), value: result[1] };
    }
    default:
      throw new TypeError(`unknown resultType ${JSON.stringify(resultType)}`);
  }
}

function writePoint(raw: unknown, times: Float64Array, values: Float64Array, at: number): void {
  if (!Array.isArray(raw) || raw.length !== 2) {
    throw new TypeError(`sample is not [time, "value"]: ${JSON.stringify(raw)}`);
  }
  times[at] = toTime(raw[0]);
  values[at] = parseSampleValue(raw[1]);
}

function toTime(raw: unknown): number {
  const t = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : Number.NaN;
  if (!Number.isFinite(t)) throw new TypeError(`sample time is not a number: ${JSON.stringify(raw)}`);
  return t;
}

function toLabels(raw: unknown): Labels {
  if (raw === undefined || raw === null) return {};
  if (!isRecord(raw)) throw new TypeError('labels are not an object');
  const out: Labels = {};
  for (const [k, v] of Object.entries(raw)) {
    if (typeof v !== 'string') throw new TypeError(`label ${k} is not a string`);
    out[k] = v;
  }
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
