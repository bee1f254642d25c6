/** Messages between `parseOffThread` and its worker. */
import type { ExpositionFormat, ParsedPageData } from './parsed-page.js';
import { keepFamilies, type ParseOptions } from './parser.js';

/** Parse options that can cross a thread boundary: the family filter is a list of names. */
export interface OffThreadParseOptions {
  readonly format?: ExpositionFormat;
  /** Keep only these families (as `keepFamilies(names)`); default all. */
  readonly keepFamilies?: readonly string[];
  readonly maxBytes?: number;
  readonly maxSeries?: number;
  readonly maxLabels?: number;
  readonly maxLabelValueLength?: number;
  readonly maxLabelSetLength?: number;
  readonly requireTimestamps?: boolean;
  readonly source?: string;
}

export interface ParseRequest {
  readonly id: number;
  readonly input: string | Uint8Array;
  readonly options: OffThreadParseOptions;
}

export type ParseResponse =
  | { readonly id: number; readonly ok: true; readonly page: ParsedPageData }
  | {
      readonly id: number;
      readonly ok: false;
      readonly exposition?: { readonly reason: string; readonly line: number; readonly column: number };
      readonly message?: string;
    };

/** The `ParseOptions` an `OffThreadParseOptions` stands for. */
export function toParseOptions(o: OffThreadParseOptions): ParseOptions {
  return {
    ...(o.format !== undefined ? { format: o.format } : {}),
    ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}),
    ...(o.maxSeries !== undefined ? { maxSeries: o.maxSeries } : {}),
    ...(o.maxLabels !== undefined ? { maxLabels: o.maxLabels } : {}),
    ...(o.maxLabelValueLength !== undefined ? { maxLabelValueLength: o.maxLabelValueLength } : {}),
    ...(o.maxLabelSetLength !== undefined ? { maxLabelSetLength: o.maxLabelSetLength } : {}),
    ...(o.requireTimestamps !== undefined ? { requireTimestamps: o.requireTimestamps } : {}),
    ...(o.source !== undefined ? { source: o.source } : {}),
    ...(o.keepFamilies !== undefined ? { keep: keepFamilies(o.keepFamilies) } : {}),
  };
}
