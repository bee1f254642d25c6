/**
 * Number formatting exactly as Prometheus's alert templates print it, so that generated promtool tests can
 * state the annotations Prometheus renders: Go's `fmt` verb `%.<p>g` (digits rounded half to even on the
 * exact binary value, trailing zeros dropped, exponent form below 1e-4 or from 10^p on) and Prometheus's
 * template functions `humanize`, `humanizeDuration` and `humanizePercentage` (Prometheus 2.x,
 * `template/template.go`), built on it.
 *
 * Contract: for every float64 (NaN and ±Inf included) each function returns the bytes Go returns. The
 * promtool test in test/generate/go-format.test.ts renders a spread of values through Prometheus to prove it.
 */

/** A positive finite float as its exact decimal expansion: `0.<digits> × 10^dp`, no leading or trailing zeros. */
type Decimal = { readonly digits: string; readonly dp: number };

function exactDecimal(x: number): Decimal {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const high = view.getUint32(0);
  const exponentBits = (high >>> 20) & 0x7ff;
  let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(view.getUint32(4));
  let exponent: number;
  if (exponentBits === 0) exponent = -1074;
  else {
    mantissa |= 1n << 52n;
    exponent = exponentBits - 1075;
  }
  // x = mantissa × 2^exponent = (mantissa × 5^-exponent) × 10^exponent when the exponent is negative.
  const text =
    exponent >= 0 ? (mantissa << BigInt(exponent)).toString() : (mantissa * 5n ** BigInt(-exponent)).toString();
  const dp = exponent >= 0 ? text.length : text.length + exponent;
  return { digits: text.replace(/0+$/, ''), dp };
}

/** `d` rounded to `precision` significant digits, half to even (Go's `decimal.Round`), trailing zeros dropped. */
function roundDecimal(d: Decimal, precision: number): Decimal {
  if (d.digits.length <= precision) return d;
  const next = d.digits.charCodeAt(precision) - 48;
  const rest = d.digits.slice(precision + 1);
  const last = precision > 0 ? d.digits.charCodeAt(precision - 1) - 48 : 0;
  const up = next > 5 || (next === 5 && (/[1-9]/.test(rest) || last % 2 === 1));
  let kept = d.digits.slice(0, precision);
  let dp = d.dp;
  if (up) {
    const incremented = (BigInt(kept === '' ? '0' : kept) + 1n).toString();
    if (incremented.length > kept.length) dp += 1;
    kept = incremented;
  }
  return { digits: kept.replace(/0+$/, ''), dp };
}

/** Go's `fmt.Sprintf("%.<precision>g", v)`. */
export function goFormatG(v: number, precision: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  const negative = v < 0 || Object.is(v, -0);
  const prec = precision === 0 ? 1 : precision;
  const d = v === 0 ? { digits: '', dp: 0 } : roundDecimal(exactDecimal(Math.abs(v)), prec);
  const nd = d.digits.length;
  const digit = (i: number): string => (i >= 0 && i < nd ? (d.digits[i] as string) : '0');
  let eprec = prec;
  if (eprec > nd && nd >= d.dp) eprec = nd;
  const exp = d.dp - 1;
  let body: string;
  if (exp < -4 || exp >= eprec) {
    const shown = Math.min(prec, nd) - 1;
    let mantissa = digit(0);
    if (shown > 0) {
      mantissa += '.';
      for (let i = 1; i <= shown; i++) mantissa += digit(i);
    }
    const e = nd === 0 ? 0 : exp;
    body = `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  } else {
    const kept = prec > d.dp ? nd : prec;
    const decimals = Math.max(kept - d.dp, 0);
    let integer = '';
    if (d.dp > 0) for (let i = 0; i < d.dp; i++) integer += digit(i);
    else integer = '0';
    let fraction = '';
    for (let i = 0; i < decimals; i++) fraction += digit(d.dp + i);
    body = decimals > 0 ? `${integer}.${fraction}` : integer;
  }
  return negative ? `-${body}` : body;
}

const LARGE_PREFIXES = ['k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y'];
const SMALL_PREFIXES = ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y'];

/** Prometheus's `humanize`: 4 significant digits with an SI prefix (`1.235M`, and `222.2m` below 1). */
export function humanize(v: number): string {
  if (v === 0 || Number.isNaN(v) || !Number.isFinite(v)) return goFormatG(v, 4);
  let x = v;
  let prefix = '';
  if (Math.abs(x) >= 1) {
    for (const p of LARGE_PREFIXES) {
      if (Math.abs(x) < 1000) break;
      prefix = p;
      x /= 1000;
    }
  } else {
    for (const p of SMALL_PREFIXES) {
      if (Math.abs(x) >= 1) break;
      prefix = p;
      x *= 1000;
    }
  }
  return `${goFormatG(x, 4)}${prefix}`;
}

/** Prometheus's `humanizeDuration`: `1d 2h 3m 4s`, `12.5s`, `250ms`. */
export function humanizeDuration(v: number): string {
  if (Number.isNaN(v) || !Number.isFinite(v)) return goFormatG(v, 4);
  if (v === 0) return `${goFormatG(v, 4)}s`;
  if (Math.abs(v) >= 1) {
    const sign = v < 0 ? '-' : '';
    const seconds = Math.abs(v);
    const whole = Math.trunc(seconds);
    const s = whole % 60;
    const m = Math.trunc(whole / 60) % 60;
    const h = Math.trunc(whole / 3600) % 24;
    const days = Math.trunc(whole / 86400);
    if (days !== 0) return `${sign}${days}d ${h}h ${m}m ${s}s`;
    if (h !== 0) return `${sign}${h}h ${m}m ${s}s`;
    if (m !== 0) return `${sign}${m}m ${s}s`;
    return `${sign}${goFormatG(seconds, 4)}s`;
  }
  let x = v;
  let prefix = '';
  for (const p of SMALL_PREFIXES) {
    if (Math.abs(x) >= 1) break;
    prefix = p;
    x *= 1000;
  }
  return `${goFormatG(x, 4)}${prefix}s`;
}

/** Prometheus's `humanizePercentage`: the ratio × 100 with 4 significant digits and `%`. */
export function humanizePercentage(v: number): string {
  return `${goFormatG(v * 100, 4)}%`;
}

/** Precision of a count or rate below 1 in magnitude (`0.22`, `0.0031`). */
export const SMALL_NUMBER_PRECISION = 2;

/**
 * A count or rate as a person reads it: `humanize` from 1 in magnitude on (`222.2`, `1.235k`, `3.4M`), two
 * significant digits below (`0.22`, `0.0031`), never a milli- or smaller prefix. Go's text/template
 * comparisons: `lt a b` is `a < b`, `gt a b` is `!(a <= b)`, so NaN goes to `humanize` (`NaN`).
 */
export function readableNumber(v: number): string {
  return v < 1 && !(v < -1 || v === -1) ? goFormatG(v, SMALL_NUMBER_PRECISION) : humanize(v);
}

/** The Go template action printing `readableNumber` of a variable or `$value` (`variable` starts with `$`). */
export function readableNumberAction(variable: string): string {
  return `{{ if and (lt ${variable} 1.0) (gt ${variable} -1.0) }}{{ printf "%.${SMALL_NUMBER_PRECISION}g" ${variable} }}{{ else }}{{ humanize ${variable} }}{{ end }}`;
}
