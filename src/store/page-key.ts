/**
 * The page key of a series record: its series key as scraped, before target labels (what the target's next scrape
 * finds it by, what `heldSeries` gives and `restoreSeries` takes back), held as a string only when it cannot be
 * written from the record itself.
 *
 * Contract:
 * - A record's *written key* is its metric name followed by its labels in series-key syntax (`name{a="x",b="y"}`,
 *   values escaped as in labels.ts), in the order its labels object lists them, leaving out every label named by one
 *   of its target's labels. A record's name, labels and target labels never change, and neither does its written key.
 * - `keptPageKey(key, name, labels, targetLabels)` is `undefined` exactly when the written key of a record with that
 *   name, labels and target labels is `key`, and `key` otherwise; a record holds it as `keptPageKey`. So a record's
 *   page key, `keptPageKey ?? written key`, is always the key it was made with, character for character: records are
 *   told apart exactly as by their key strings (no hash decides anything).
 * - `hasPageKey` and `isPageSeries` compare a record's written key part by part with a string or a page series' key
 *   (`SeriesTable.keyPartEnd`), without making it; `pageKeyOf` makes it.
 *
 * A scraped series' page key is usually its written key: the parser's keys are canonical (labels in canonical order,
 * empty values dropped), as are a record's labels, and a target's labels are added beside the scraped ones. Kept as
 * strings are the keys of series whose labels were renamed (`exported_<name>`, a scraped label clashing with a
 * target label: history.ts), and of series appended or restored with labels that a target label names.
 */
import { escapeLabelValue, type Labels } from '../exposition/labels.js';
import type { SeriesTable } from '../exposition/series-table.js';
import type { SeriesRecord } from './target-state.js';

/** A text a written key is compared with (or written to), one part at a time. */
interface KeyText {
  /** Where `part` ends when the text holds it at `at`, -1 otherwise. */
  partEnd(at: number, part: string): number;
}

/**
 * Where the written key of `name` and `labels` (those not named in `omitted`) ends in `text`, compared from its
 * start; -1 when the text does not hold it there. The one definition of the written key (see the contract).
 */
function writtenKeyEnd(name: string, labels: Labels, omitted: Labels, text: KeyText): number {
  let at = text.partEnd(0, name);
  let first = true;
  for (const label in labels) {
    if (at === -1) return -1;
    if (Object.hasOwn(omitted, label)) continue;
    at = text.partEnd(at, first ? '{' : ',');
    if (at !== -1) at = text.partEnd(at, label);
    if (at !== -1) at = text.partEnd(at, '="');
    if (at !== -1) at = text.partEnd(at, escapeLabelValue(labels[label] as string));
    if (at !== -1) at = text.partEnd(at, '"');
    first = false;
  }
  return first || at === -1 ? at : text.partEnd(at, '}');
}

class StringText implements KeyText {
  readonly #s: string;
  constructor(s: string) {
    this.#s = s;
  }
  partEnd(at: number, part: string): number {
    return this.#s.startsWith(part, at) ? at + part.length : -1;
  }
}

class PageSeriesText implements KeyText {
  readonly #table: SeriesTable;
  readonly #id: number;
  constructor(table: SeriesTable, id: number) {
    this.#table = table;
    this.#id = id;
  }
  partEnd(at: number, part: string): number {
    return this.#table.keyPartEnd(this.#id, at, part);
  }
}

/** Takes every part, collecting the written key. */
class KeyWriter implements KeyText {
  text = '';
  partEnd(at: number, part: string): number {
    this.text += part;
    return at + part.length;
  }
}

function writtenKeyIs(key: string, name: string, labels: Labels, omitted: Labels): boolean {
  return writtenKeyEnd(name, labels, omitted, new StringText(key)) === key.length;
}

/** What a record made with page key `key` keeps of it: `undefined` when its written key is `key` (see the contract). */
export function keptPageKey(key: string, name: string, labels: Labels, targetLabels: Labels): string | undefined {
  return writtenKeyIs(key, name, labels, targetLabels) ? undefined : key;
}

/** The page key of `rec`. */
export function pageKeyOf(rec: SeriesRecord): string {
  if (rec.keptPageKey !== undefined) return rec.keptPageKey;
  const writer = new KeyWriter();
  writtenKeyEnd(rec.name, rec.labels, rec.target.labels, writer);
  return writer.text;
}

/** Whether the page key of `rec` is `key`. */
export function hasPageKey(rec: SeriesRecord, key: string): boolean {
  if (rec.keptPageKey !== undefined) return rec.keptPageKey === key;
  return writtenKeyIs(key, rec.name, rec.labels, rec.target.labels);
}

/** Whether the page key of `rec` is the key of series `id` of `table`. */
export function isPageSeries(rec: SeriesRecord, table: SeriesTable, id: number): boolean {
  if (rec.keptPageKey !== undefined) return table.keyEquals(id, rec.keptPageKey);
  return writtenKeyEnd(rec.name, rec.labels, rec.target.labels, new PageSeriesText(table, id)) === table.keyLength(id);
}
