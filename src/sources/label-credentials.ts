/**
 * A target's own credentials in the label values of its page, removed before the page is stored: a target that
 * echoes the request it got (its `Authorization` header, the URL's password) into a label would otherwise put the
 * credential into the history, and from there into the report, the page, `/metrics` and the state file.
 *
 * Contract: each credential of `MIN_SECRET_CHARS` or more (as written, and as escaped in a series key) is searched
 * for once in the page's series keys; a page without any is returned as it is. Otherwise every label value holding
 * one has it replaced by `<secret>` (with any `Bearer` or `Basic` credential beside it, see `withoutCredentials`);
 * series whose labels become equal are merged into one, their samples kept in page order.
 */
import { escapeLabelValue, makeLabels, seriesKey } from '../exposition/labels.js';
import type { ParsedPage } from '../exposition/parsed-page.js';
import { SeriesTable } from '../exposition/series-table.js';
import { MIN_SECRET_CHARS, withoutCredentials } from '../scrape/scrape-error.js';

export function withoutCredentialsInLabels(page: ParsedPage, credentials: readonly string[]): ParsedPage {
  const secrets = credentials.filter((secret) => secret.length >= MIN_SECRET_CHARS);
  const forms = [...new Set(secrets.flatMap((secret) => [secret, escapeLabelValue(secret)]))];
  if (!forms.some((form) => page.series.keysInclude(form))) return page;

  const table = page.series;
  const keys: string[] = [];
  const families: number[] = [];
  const idOfKey = new Map<string, number>();
  const newId = new Int32Array(table.count);
  for (let id = 0; id < table.count; id++) {
    let key = table.key(id);
    if (forms.some((form) => key.includes(form))) {
      const labels = Object.entries(table.labels(id)).map(
        ([name, value]) => [name, withoutCredentials(value, secrets)] as const,
      );
      key = seriesKey(table.name(id), makeLabels(labels));
    }
    let to = idOfKey.get(key);
    if (to === undefined) {
      to = keys.length;
      idOfKey.set(key, to);
      keys.push(key);
      families.push(table.families[id] as number);
    }
    newId[id] = to;
  }
  return {
    ...page,
    series: SeriesTable.fromKeys(keys, Int32Array.from(families)),
    samples: { ...page.samples, series: page.samples.series.map((id) => newId[id] as number) },
  };
}
