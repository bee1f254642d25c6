/** Whether a file's bytes are text: how much of it is looked at, and the test. */

/** How much of a file is checked for binary content (NUL bytes, invalid UTF-8). */
export const TEXT_SNIFF_BYTES = 64 * 1024;

/**
 * No NUL byte and valid UTF-8 in the first `TEXT_SNIFF_BYTES` (a sequence cut at the end of that prefix is
 * allowed): a binary file is then named as such instead of being shown as hundreds of escaped bytes.
 */
export function looksLikeText(bytes: Uint8Array): boolean {
  const head = bytes.subarray(0, TEXT_SNIFF_BYTES);
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}
