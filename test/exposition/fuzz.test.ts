/**
 * The exposition parser against generated and mutated pages (a fixed-seed slice of `npm run fuzz`), and the
 * growth of its parse time on pathological pages (256 KiB against 2 MiB). Inputs, entry points and the
 * property are in test/support/exposition-fuzz.ts; the first block shows that the property rejects what it
 * must.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import { closeParseWorker } from '../../src/exposition/parse-off-thread.js';
import type { ParsedPage } from '../../src/exposition/parsed-page.js';
import { type ParseOptions, parseExposition } from '../../src/exposition/parser.js';
import { SeriesTable } from '../../src/exposition/series-table.js';
import {
  applyMutation,
  checkCase,
  checkPathologicalPage,
  ENTRY_POINTS,
  FuzzTally,
  fixtureSeeds,
  fuzzCase,
  GROWTH_BOUND,
  judgeOutcome,
  MISSING_EOF_REASON,
  measureGrowth,
  PATHOLOGICAL_SHAPES,
  type ParseOutcome,
  reasonClass,
  sameOutcome,
  sizeLimitReason,
} from '../support/exposition-fuzz.js';

const FUZZ_RUNS = 3000;
const FUZZ_SEED = 20_251_201;
const GROWTH_BYTES = 256 * 1024;

afterAll(async () => {
  await closeParseWorker();
});

function parsed(text: string, options: ParseOptions = {}): ParseOutcome {
  try {
    return { page: parseExposition(text, options) };
  } catch (thrown) {
    return { thrown };
  }
}

/** A page of one sample per key, as the parser would give it. */
function pageWithKeys(keys: string[]): ParsedPage {
  return {
    format: 'prometheus-text',
    families: [{ name: 'm', type: 'untyped', help: undefined, unit: undefined }],
    series: SeriesTable.fromKeys(keys, new Int32Array(keys.length)),
    samples: {
      count: keys.length,
      series: Int32Array.from(keys, (_, i) => i),
      values: new Float64Array(keys.length),
      timestamps: new Float64Array(keys.length).fill(Number.NaN),
    },
    skippedLines: 0,
  };
}

describe('the fuzz property', () => {
  it('holds for pages and for errors that name the first bad line', () => {
    expect(judgeOutcome('a 1\nb{x="y"} 2\n', {}, parsed('a 1\nb{x="y"} 2\n'))).toBeUndefined();
    expect(judgeOutcome('a 1\n$ 2\nb 3\n', {}, parsed('a 1\n$ 2\nb 3\n'))).toBeUndefined();
    const om: ParseOptions = { format: 'openmetrics' };
    expect(judgeOutcome('a 1', om, parsed('a 1', om))).toBeUndefined();
    expect(judgeOutcome('a 1\n', { maxBytes: 3 }, parsed('a 1\n', { maxBytes: 3 }))).toBeUndefined();
  });

  it('fails any exception other than ExpositionError', () => {
    expect(judgeOutcome('a 1\n', {}, { thrown: new TypeError('x is undefined') })).toMatch(/TypeError/);
    expect(judgeOutcome('a 1\n', {}, { thrown: new RangeError('Invalid time value') })).toMatch(/RangeError/);
  });

  it('fails line 0 for anything but the size limit, and the size limit for a page within it', () => {
    const text = 'a 1\n';
    expect(judgeOutcome(text, {}, { thrown: new ExpositionError('expected equal, got "x"', 0, 0) })).toMatch(/line 0/);
    expect(judgeOutcome(text, {}, { thrown: new ExpositionError(sizeLimitReason(10), 0, 0) })).toMatch(/line 0/);
    expect(judgeOutcome(text, { maxBytes: 10 }, { thrown: new ExpositionError(sizeLimitReason(10), 0, 0) })).toMatch(
      /within 10/,
    );
    expect(judgeOutcome('a 1\nb 2\n', { maxBytes: 5 }, parsed('a 1\nb 2\n'))).toMatch(/over the limit/);
  });

  it('fails a line or column outside the text', () => {
    const text = 'a 1\n$\n';
    expect(judgeOutcome(text, {}, { thrown: new ExpositionError('"$" is not a valid start token', 5, 1) })).toMatch(
      /line 5 of a text of 3 lines/,
    );
    expect(judgeOutcome(text, {}, { thrown: new ExpositionError('"$" is not a valid start token', 2, 3) })).toMatch(
      /column 3 of line 2, which has 1 characters/,
    );
    expect(judgeOutcome(text, {}, { thrown: new ExpositionError('"$" is not a valid start token', 2, 0) })).toMatch(
      /column 0/,
    );
    const afterLast = new ExpositionError(MISSING_EOF_REASON, 4, 1);
    expect(judgeOutcome(text, {}, { thrown: afterLast })).toMatch(/after the last line/);
  });

  it('fails an error that does not name the first bad line, or that the lines up to it do not give', () => {
    const text = 'a 1\n$\nb 2\n';
    const late = new ExpositionError('"$" is not a valid start token', 3, 1);
    expect(judgeOutcome(text, {}, { thrown: late })).toMatch(/lines before it already give line 2, column 1/);
    const early = new ExpositionError('"$" is not a valid start token', 1, 1);
    expect(judgeOutcome(text, {}, { thrown: early })).toMatch(/lines up to it give a page of 1 sample$/);
    const otherColumn = new ExpositionError('"$" is not a valid start token', 2, 2);
    expect(judgeOutcome(text, {}, { thrown: otherColumn })).toMatch(/lines up to it give line 2, column 1/);
  });

  it('fails pages whose series keys are not canonical or not distinct', () => {
    expect(judgeOutcome('m{a="1",b="2"} 1\n', {}, { page: pageWithKeys(['m{b="2",a="1"}']) })).toMatch(/not canonical/);
    expect(judgeOutcome('m 1\nm 2\n', {}, { page: pageWithKeys(['m', 'm']) })).toMatch(/two ids/);
    expect(judgeOutcome('m 1', {}, { page: pageWithKeys(['m', 'n']) })).toMatch(/2 samples from 1 lines/);
  });

  it('fails an off-thread outcome that differs from the inline one', () => {
    const inline = { thrown: new ExpositionError('expected equal, got "x"', 1, 3) };
    expect(sameOutcome({ thrown: new ExpositionError('expected equal, got "x"', 1, 3) }, inline)).toBeUndefined();
    expect(sameOutcome({ thrown: new ExpositionError('expected equal, got "x"', 1, 4) }, inline)).toMatch(/column 4/);
    expect(sameOutcome({ thrown: new Error('parse failed') }, inline)).toMatch(/parse failed/);
    expect(sameOutcome(parsed('a 1\n'), parsed('a 2\n'))).toMatch(/pages differ/);
  });

  it('groups reasons by class', () => {
    expect(reasonClass('invalid value "1e400": value out of range')).toBe('invalid value "…": value out of range');
    expect(reasonClass('too many series: the limit is 20')).toBe('too many series: the limit is N');
  });

  it('mutates bytes as described', () => {
    const page = Buffer.from('a 1\nb 2\n');
    expect(applyMutation(page, { kind: 'line endings', style: 'CRLF' }).toString()).toBe('a 1\r\nb 2\r\n');
    expect(applyMutation(page, { kind: 'truncate', at: 500_000 }).toString()).toBe('a 1\n');
    expect(applyMutation(page, { kind: 'duplicate line', at: 0, times: 2 }).toString()).toBe('a 1\na 1\na 1\nb 2\n');
    expect([...applyMutation(page, { kind: 'insert', at: 0, bytes: [0xff] })].slice(0, 2)).toEqual([0xff, 0x61]);
  });
});

describe(`${FUZZ_RUNS} generated and mutated pages (seed ${FUZZ_SEED})`, () => {
  it('are parsed or rejected with an ExpositionError naming their first bad line, by every entry point', async () => {
    const tally = new FuzzTally();
    const property = fc.asyncProperty(fuzzCase(fixtureSeeds()), async (c) => {
      tally.record(await checkCase(c));
    });
    await fc.assert(property, { numRuns: FUZZ_RUNS, seed: FUZZ_SEED });

    // The slice reaches what it is meant to: every entry point, both outcomes, the odd bytes, the limits.
    expect(tally.inputs).toBe(FUZZ_RUNS);
    for (const entry of ENTRY_POINTS) expect(tally.byEntry.get(entry) ?? 0).toBeGreaterThan(FUZZ_RUNS / 40);
    expect(tally.accepted).toBeGreaterThan(FUZZ_RUNS / 10);
    expect(tally.rejected).toBeGreaterThan(FUZZ_RUNS / 10);
    expect(tally.fromFixtures).toBeGreaterThan(FUZZ_RUNS / 3);
    expect(tally.invalidUtf8).toBeGreaterThan(FUZZ_RUNS / 20);
    expect(tally.withNul).toBeGreaterThan(0);
    expect(tally.withCarriageReturn).toBeGreaterThan(0);
    expect(tally.withLoneSurrogate).toBeGreaterThan(0);
    const reasons = new Map(tally.reasons());
    expect(reasons.get(reasonClass(sizeLimitReason(0)))).toBeGreaterThan(0);
    expect(reasons.get('too many series: the limit is N')).toBeGreaterThan(0);
    expect(reasons.get(MISSING_EOF_REASON)).toBeGreaterThan(0);
  });
});

describe('parse time grows linearly', () => {
  it.each(PATHOLOGICAL_SHAPES.map((shape) => ({ name: shape.name, shape })))(
    `$name: 8 times the bytes take less than ${GROWTH_BOUND} times as long`,
    async ({ shape }) => {
      const growth = measureGrowth(shape, GROWTH_BYTES, 3);
      expect(growth.ratio, `${growth.smallMs.toFixed(1)} → ${growth.largeMs.toFixed(1)} ms`).toBeLessThan(GROWTH_BOUND);
      // The outcome is checked on the small page (npm run fuzz checks the 10 MiB ones, through the worker too).
      const { violation } = await checkPathologicalPage(growth.small.text);
      expect(violation).toBeUndefined();
    },
  );
});
