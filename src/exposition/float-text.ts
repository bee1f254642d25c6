/**
 * Numbers as the exposition formats write them, read as Go's `strconv.ParseFloat` reads them
 * (which is what Prometheus uses): decimal floats with optional exponent (`1e-08`,
 * `9.999999999999999e-06`, `1.234567e+06`, `.5`, `5.`), and case-insensitive `Inf`, `+Inf`, `-Inf`,
 * `Infinity`, `NaN`. No hex floats, no underscores, no surrounding blanks. A decimal literal too
 * large for a double is an error, as in Go.
 *
 * Results come back through return value plus `floatError` (set to a reason when the text is not
 * a number) so that the hot path allocates nothing.
 */

/** Set by `readFloat`/`readInt` when the last call failed; `undefined` after a success. */
export let floatError: string | undefined;

/** Reads `text[start, end)` as a float; on failure sets `floatError` and returns NaN. */
export function readFloat(text: string, start: number, end: number): number {
  floatError = undefined;
  let i = start;
  let c = text.charCodeAt(i);
  let neg = false;
  if (c === 0x2d || c === 0x2b) {
    neg = c === 0x2d;
    i++;
    c = text.charCodeAt(i);
  }
  // Fast path: up to 15 decimal digits, no fraction or exponent: exact in a double.
  let v = 0;
  let digits = 0;
  while (i < end && c >= 0x30 && c <= 0x39) {
    v = v * 10 + (c - 0x30);
    digits++;
    i++;
    c = text.charCodeAt(i);
  }
  if (i === end && digits > 0 && digits <= 15) return neg ? -v : v;
  if (digits === 0 && i < end && c !== 0x2e) return special(text, start, end);
  // General decimal: validate the grammar, then let the engine convert (correctly rounded, like Go).
  let mantissa = digits;
  if (c === 0x2e) {
    i++;
    c = text.charCodeAt(i);
    while (i < end && c >= 0x30 && c <= 0x39) {
      mantissa++;
      i++;
      c = text.charCodeAt(i);
    }
  }
  if (mantissa === 0) return fail('invalid number');
  if (i < end && (c | 0x20) === 0x65) {
    i++;
    c = text.charCodeAt(i);
    if (c === 0x2b || c === 0x2d) {
      i++;
      c = text.charCodeAt(i);
    }
    let expDigits = 0;
    while (i < end && c >= 0x30 && c <= 0x39) {
      expDigits++;
      i++;
      c = text.charCodeAt(i);
    }
    if (expDigits === 0) return fail('invalid number');
  }
  if (i !== end) return fail('invalid number');
  const value = +text.slice(start, end);
  if (!Number.isFinite(value)) return fail('value out of range');
  return value;
}

function special(text: string, start: number, end: number): number {
  let i = start;
  let sign = 1;
  let signed = false;
  const c = text.charCodeAt(i);
  if (c === 0x2b || c === 0x2d) {
    sign = c === 0x2d ? -1 : 1;
    signed = true;
    i++;
  }
  const word = text.slice(i, end).toLowerCase();
  if (word === 'inf' || word === 'infinity') return sign * Number.POSITIVE_INFINITY;
  if (word === 'nan' && !signed) return Number.NaN;
  return fail('invalid number');
}

function fail(reason: string): number {
  floatError = reason;
  return Number.NaN;
}

/** Reads `text[start, end)` as a decimal integer (Go's `strconv.ParseInt`); on failure sets `floatError`. */
export function readInt(text: string, start: number, end: number): number {
  floatError = undefined;
  let i = start;
  let neg = false;
  const c0 = text.charCodeAt(i);
  if (c0 === 0x2d || c0 === 0x2b) {
    neg = c0 === 0x2d;
    i++;
  }
  if (i === end) return fail('invalid integer');
  let v = 0;
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return fail('invalid integer');
    v = v * 10 + (c - 0x30);
  }
  if (!Number.isSafeInteger(v)) return fail('integer out of range');
  return neg ? -v : v;
}

/**
 * A float as Prometheus text writes it where any exact form will do (PromQL literals, OpenMetrics samples
 * and timestamps): JavaScript's shortest round-trip digits, and `NaN`, `+Inf`, `-Inf`.
 */
export function formatFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/**
 * Formats a number exactly as the Go Prometheus client does (`strconv.FormatFloat(v, 'g', -1, 64)`):
 * shortest round-trip digits, exponent form below 1e-4 and from 1e+06 on (`1e-08`,
 * `9.999999999999999e-06`, `1.234567e+06`), and `+Inf`, `-Inf`, `NaN`.
 */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? '-' : '+'}${abs < 10 ? '0' : ''}${abs}`;
  }
  return String(v);
}
