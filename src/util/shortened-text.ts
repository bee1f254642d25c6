/**
 * Text from elsewhere (an upstream's error, a warning) cut to a length fit for a log line, an API answer or a
 * report: at most `maxChars` of it, then `…` and the length it had, e.g. `no such label… (20971520 characters)`.
 */
export function shortenedText(text: string, maxChars: number, originalLength: number = text.length): string {
  if (originalLength <= maxChars) return text;
  return `${text.slice(0, maxChars)}… (${originalLength} characters)`;
}
