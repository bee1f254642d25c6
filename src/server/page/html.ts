/**
 * What every part of the page writes HTML with. Every interpolated string goes through `escapeHtml` (text and
 * attribute values alike); data for the script travels as JSON in a `<script type="application/json">` block
 * with `<` escaped (`scriptJson`), so nothing in a label can end it.
 */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text made safe for HTML text and for quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);
}

/** JSON that can sit inside a `<script>` element: no `<` (so no `</script>`), no line separators. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** An RFC 3339 time shown as `YYYY-MM-DD HH:MM:SS UTC`. */
export function time(iso: string): string {
  const shown = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : iso;
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(shown)}</time>`;
}

/** A link when `url` is http(s), plain text otherwise (never a `javascript:` or `data:` link). */
export function externalLink(url: string, text: string, className: string): string {
  return /^https?:\/\//i.test(url)
    ? `<a class="${className}" href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(text)}</a>`
    : escapeHtml(text);
}

/** `1 queue`, `3 queues`. */
export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
