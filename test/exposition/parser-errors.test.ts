import { describe, expect, it } from 'vitest';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import type { ExpositionFormat } from '../../src/exposition/parsed-page.js';
import { isLabelLimitError, type ParseOptions, parseExposition } from '../../src/exposition/parser.js';
import { EXEMPLARS_AFTER_A_WIDE_LABEL_SET, GROWTH_BOUND, measureGrowth } from '../support/exposition-fuzz.js';

interface Case {
  readonly what: string;
  readonly input: string;
  readonly format?: ExpositionFormat;
  readonly options?: ParseOptions;
  readonly line: number;
  readonly column: number;
  /** The error's reason, exactly. */
  readonly reason: string;
}

const OM: ExpositionFormat = 'openmetrics';

const CASES: readonly Case[] = [
  {
    what: 'invalid start character',
    input: 'a 1\n$ 2\n',
    line: 2,
    column: 1,
    reason: '"$" is not a valid start token',
  },
  {
    what: 'name starting with a digit',
    input: '1m 2\n',
    line: 1,
    column: 1,
    reason: '"1m" is not a valid start token',
  },
  {
    what: 'label set without a name',
    input: '{a="b"} 1\n',
    line: 1,
    column: 1,
    reason: '"{a" is not a valid start token',
  },
  { what: 'missing label name', input: 'm{="x"} 1\n', line: 1, column: 3, reason: 'expected label name, got "="' },
  {
    what: 'label name starting with a digit',
    input: 'm{1a="x"} 1\n',
    line: 1,
    column: 3,
    reason: 'expected label name, got "1a"',
  },
  { what: 'colon in a label name', input: 'm{a:b="x"} 1\n', line: 1, column: 4, reason: 'expected equal, got ":b"' },
  { what: 'missing equal sign', input: 'm{a "x"} 1\n', line: 1, column: 5, reason: 'expected equal, got "\\"x"' },
  { what: 'unquoted label value', input: 'm{a=x} 1\n', line: 1, column: 5, reason: 'expected label value, got "x"' },
  {
    what: 'line break inside a label value',
    input: 'm{a="x} 1\nn 2\n',
    line: 1,
    column: 10,
    reason: 'unterminated label value: line break inside quotes',
  },
  {
    what: 'label value cut off by the end of input',
    input: 'm{a="x',
    line: 1,
    column: 5,
    reason: 'unterminated label value',
  },
  {
    what: 'escape at the end of a line',
    input: 'm{a="x\\\n"} 1\n',
    line: 1,
    column: 7,
    reason: 'unterminated label value: escape at end of line',
  },
  {
    what: 'missing comma',
    input: 'm{a="x" b="y"} 1\n',
    line: 1,
    column: 9,
    reason: 'expected comma or closing brace, got "b"',
  },
  {
    what: 'missing closing brace',
    input: 'm{a="x" 1\n',
    line: 1,
    column: 9,
    reason: 'expected comma or closing brace, got "1"',
  },
  { what: 'repeated label name', input: 'm{a="x",a="y"} 1\n', line: 1, column: 9, reason: 'duplicate label name "a"' },
  {
    what: 'repeated label name, unsorted',
    input: 'm{b="1",a="x",b="2"} 1\n',
    line: 1,
    column: 15,
    reason: 'duplicate label name "b"',
  },
  { what: 'no value', input: 'm\n', line: 1, column: 2, reason: 'expected value after metric, got "\\n"' },
  {
    what: 'no value after labels',
    input: 'm{a="x"}\n',
    line: 1,
    column: 9,
    reason: 'expected value after metric, got "\\n"',
  },
  {
    what: 'no value at the end of input',
    input: 'm{a="x"}',
    line: 1,
    column: 9,
    reason: 'expected value after metric, got "EOF"',
  },
  {
    what: 'value that is not a number',
    input: 'm abc\n',
    line: 1,
    column: 3,
    reason: 'invalid value "abc": invalid number',
  },
  {
    what: 'underscore in a value',
    input: 'm 1_000\n',
    line: 1,
    column: 3,
    reason: 'invalid value "1_000": invalid number',
  },
  { what: 'hexadecimal value', input: 'm 0x10\n', line: 1, column: 3, reason: 'invalid value "0x10": invalid number' },
  { what: 'signed NaN', input: 'm -NaN\n', line: 1, column: 3, reason: 'invalid value "-NaN": invalid number' },
  {
    what: 'exponent without digits',
    input: 'm 1e\n',
    line: 1,
    column: 3,
    reason: 'invalid value "1e": invalid number',
  },
  {
    what: 'value beyond a double',
    input: 'm 1e400\n',
    line: 1,
    column: 3,
    reason: 'invalid value "1e400": value out of range',
  },
  {
    what: 'fractional timestamp in the text format',
    input: 'm 1 12.5\n',
    line: 1,
    column: 5,
    reason: 'expected timestamp or new record, got "12.5"',
  },
  {
    what: 'timestamp with an exponent in the text format',
    input: 'm 1 1e3\n',
    line: 1,
    column: 5,
    reason: 'expected timestamp or new record, got "1e3"',
  },
  {
    what: 'word as an OpenMetrics timestamp',
    input: 'm 1 abc\n# EOF\n',
    format: OM,
    line: 1,
    column: 5,
    reason: 'invalid timestamp "abc"',
  },
  {
    what: 'NaN as an OpenMetrics timestamp',
    input: 'm 1 NaN\n# EOF\n',
    format: OM,
    line: 1,
    column: 5,
    reason: 'invalid timestamp "NaN"',
  },
  {
    what: 'an OpenMetrics timestamp beyond the times Prometheus stores',
    input: 'm 1 1e49\n# EOF\n',
    format: OM,
    line: 1,
    column: 5,
    reason: 'timestamp "1e49" is outside the times Prometheus stores (years 1678 to 2262)',
  },
  {
    what: 'a text-format timestamp beyond the times Prometheus stores',
    input: 'm 1 99999999999999\n',
    line: 1,
    column: 5,
    reason: 'timestamp "99999999999999" is outside the times Prometheus stores (years 1678 to 2262)',
  },
  {
    what: 'extra token after the timestamp',
    input: 'm 1 2 3\n',
    line: 1,
    column: 7,
    reason: 'expected next entry after timestamp, got "3"',
  },
  {
    what: 'HELP without a metric name',
    input: '# HELP \n',
    line: 1,
    column: 8,
    reason: 'expected metric name after HELP, got "\\n"',
  },
  {
    what: 'TYPE with a bad metric name',
    input: '# TYPE 1m counter\n',
    line: 1,
    column: 8,
    reason: 'expected metric name after TYPE, got "1m"',
  },
  {
    what: 'unknown metric type',
    input: '# TYPE m countr\n',
    line: 1,
    column: 10,
    reason: 'invalid metric type "countr"',
  },
  {
    what: 'OpenMetrics-only type in the text format',
    input: '# TYPE m info\n',
    line: 1,
    column: 10,
    reason: 'invalid metric type "info"',
  },
  {
    what: 'a family typed twice differently',
    input: '# TYPE m gauge\nm 1\n# TYPE m counter\n',
    line: 3,
    column: 1,
    reason: 'second TYPE line for metric name "m" with a different type',
  },
  {
    what: 'OpenMetrics without # EOF',
    input: 'm 1\n',
    format: OM,
    line: 2,
    column: 1,
    reason: 'data does not end with # EOF',
  },
  {
    what: 'data after # EOF',
    input: 'm 1\n# EOF\nn 2\n',
    format: OM,
    line: 3,
    column: 1,
    reason: 'unexpected data after # EOF',
  },
  {
    what: 'exemplar with an unclosed label set',
    input: 'm_total 1 # {a="b" 2\n',
    line: 1,
    column: 20,
    reason: 'expected comma or closing brace, got "2"',
  },
  {
    what: 'exemplar without labels',
    input: 'm_total 1 # 2\n',
    line: 1,
    column: 13,
    reason: 'expected exemplar labels, got "2"',
  },
  {
    what: 'exemplar with a bad value',
    input: 'm_total 1 # {a="b"} x\n',
    line: 1,
    column: 21,
    reason: 'invalid exemplar value "x"',
  },
  {
    what: 'exemplar with a bad timestamp',
    input: 'm_total 1 # {a="b"} 1 never\n',
    line: 1,
    column: 23,
    reason: 'invalid exemplar timestamp "never"',
  },
  {
    what: 'a bad line after metadata and a blank line',
    input: '# HELP a b\n# TYPE a gauge\na 1\n\na{b="c"} x\n',
    line: 5,
    column: 10,
    reason: 'invalid value "x": invalid number',
  },
  {
    what: 'columns count UTF-16 units',
    input: 'm{a="é"} x\n',
    line: 1,
    column: 10,
    reason: 'invalid value "x": invalid number',
  },
  {
    what: 'a sample without a timestamp in a recording',
    input: 'm 1 1\nn 2\n# EOF\n',
    format: OM,
    options: { requireTimestamps: true },
    line: 2,
    column: 1,
    reason: 'sample without a timestamp',
  },
  {
    what: 'too many series',
    input: 'a 1\nb 2\nc 3\n',
    options: { maxSeries: 2 },
    line: 3,
    column: 1,
    reason: 'too many series: the limit is 2',
  },
];

describe('malformed expositions', () => {
  it('has a table of at least 30 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)('$what → line $line, column $column', (c) => {
    let caught: unknown;
    try {
      parseExposition(c.input, {
        ...(c.format !== undefined ? { format: c.format } : {}),
        ...c.options,
        source: 'page',
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ExpositionError);
    const err = caught as ExpositionError;
    expect({ line: err.line, column: err.column, reason: err.reason }).toEqual({
      line: c.line,
      column: c.column,
      reason: c.reason,
    });
    expect(err.message).toBe(`page: line ${c.line}, column ${c.column}: ${c.reason}`);
  });
});

describe('exemplars after a wide label set', () => {
  // Saving more than the sample's own labels around its exemplar would make every exemplar line cost as much
  // as the widest label set of the page.
  it('exemplar lines after a wide label set take time linear in the page', () => {
    const growth = measureGrowth(EXEMPLARS_AFTER_A_WIDE_LABEL_SET, 128 * 1024, 3);
    expect(growth.ratio, `${growth.smallMs.toFixed(1)} → ${growth.largeMs.toFixed(1)} ms`).toBeLessThan(GROWTH_BOUND);
  });

  it('a sample keeps its own labels across its exemplar, after a wider label set', () => {
    const page = parseExposition(
      'wide{a="1",b="2",c="3",d="4"} 1\nm{z="1",y="2"} 1 # {t="x",u="y",v="z"} 1\nn 2 # {t="x"} 1\n',
    );
    const keys = Array.from({ length: page.series.count }, (_, id) => page.series.key(id));
    expect(keys).toEqual(['wide{a="1",b="2",c="3",d="4"}', 'm{y="2",z="1"}', 'n']);
  });
});

describe('error messages quote at most 64 characters of a token', () => {
  it('cuts a huge value, timestamp or type short, with an ellipsis', () => {
    const huge = '9'.repeat(1_000_000);
    const pages: Array<[string, ParseOptions]> = [
      [`m ${huge}x\n`, {}],
      [`m 1 ${huge}x\n# EOF\n`, { format: 'openmetrics' }],
      [`# TYPE m ${huge}\n`, {}],
    ];
    for (const [page, options] of pages) {
      let message = '';
      try {
        parseExposition(page, options);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain(`"${'9'.repeat(64)}…"`);
      expect(message.length).toBeLessThan(200);
    }
  });
});

describe('label limits, checked as the kept families are read', () => {
  it('refuses a label value over maxLabelValueLength and more labels than maxLabels, naming the line', () => {
    const long = `m{a="x"} 1\nm{a="${'v'.repeat(2_000)}"} 2\n`;
    expect(() => parseExposition(long, { maxLabelValueLength: 1_024 })).toThrow(
      /^line 2, column 6: label limit: a "a" label of 2000 characters, over the limit of 1024$/,
    );
    const error = (() => {
      try {
        parseExposition(long, { maxLabelValueLength: 1_024 });
      } catch (e) {
        return e as ExpositionError;
      }
      return undefined;
    })();
    expect(error && isLabelLimitError(error)).toBe(true);
    // Escapes count as the characters they stand for: 1,024 escaped quotes are 1,024 characters.
    expect(parseExposition(`m{a="${'\\"'.repeat(1_024)}"} 1\n`, { maxLabelValueLength: 1_024 }).series.count).toBe(1);
    const wide = `m{${Array.from({ length: 31 }, (_, i) => `l${i}="x"`).join(',')}} 1\n`;
    expect(() => parseExposition(wide, { maxLabels: 30 })).toThrow(/label limit: more than 30 labels$/);
    expect(parseExposition(wide, { maxLabels: 31 }).series.count).toBe(1);
    // Families that are not kept are not tokenized, so not checked either.
    expect(parseExposition(long, { maxLabelValueLength: 1_024, keep: () => false }).series.count).toBe(0);
  });
});
