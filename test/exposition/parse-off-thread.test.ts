import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ExpositionError } from '../../src/exposition/exposition-error.js';
import { closeParseWorker, parseOffThread, parsePage } from '../../src/exposition/parse-off-thread.js';
import { type ParsedPage, pageSamples } from '../../src/exposition/parsed-page.js';
import { keepFamilies, parseExposition } from '../../src/exposition/parser.js';
import { HASH_SEED } from '../../src/exposition/series-index.js';
import { DIAGNOSTIC_FAMILIES, WORKQUEUE } from '../../src/metrics/names.js';
import { History } from '../../src/store/history.js';
import { CLIENT_GO_FIXTURES } from '../support/fixtures.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = join(CLIENT_GO_FIXTURES, 'controller-runtime-failing-with-reconcile-metrics.prom');
const text = readFileSync(FIXTURE, 'utf8');

function summary(page: ParsedPage) {
  return {
    format: page.format,
    families: page.families,
    keys: Array.from({ length: page.series.count }, (_, i) => page.series.key(i)),
    samples: pageSamples(page).map((s) => ({ ...s, labels: { ...s.labels } })),
    skippedLines: page.skippedLines,
  };
}

afterAll(async () => {
  await closeParseWorker();
});

describe('parseOffThread (worker loaded from the TypeScript source)', () => {
  it('gives exactly the inline result', async () => {
    const page = await parseOffThread(text);
    expect(summary(page)).toEqual(summary(parseExposition(text)));
    expect(page.samples.values).toBeInstanceOf(Float64Array);
    expect(page.series.labels(0)).toEqual(parseExposition(text).series.labels(0));
  });

  it('hashes series keys with the random seed of this process, in the worker too', async () => {
    const page = await parseOffThread(text);
    expect([...page.series.hashes]).toEqual([...parseExposition(text).series.hashes]);
    // Not FNV-1a's published offset basis: a hostile page cannot be crafted to collide without the seed.
    expect(HASH_SEED).not.toBe(0x811c9dc5 | 0);
  });

  it('takes UTF-8 bytes, a format and a family filter', async () => {
    const om = `# TYPE ${WORKQUEUE.depth} gauge\n${WORKQUEUE.depth}{name="é"} 3 1700000000.5\nother 1 1700000000\n# EOF\n`;
    const page = await parseOffThread(new TextEncoder().encode(om), {
      format: 'openmetrics',
      keepFamilies: DIAGNOSTIC_FAMILIES,
    });
    expect(summary(page)).toEqual(
      summary(parseExposition(om, { format: 'openmetrics', keep: keepFamilies(DIAGNOSTIC_FAMILIES) })),
    );
    expect(page.skippedLines).toBe(1);
  });

  it('moves a whole-buffer byte array to the worker when asked, and copies it otherwise', async () => {
    const bytes = new TextEncoder().encode(text);
    const copied = await parseOffThread(bytes);
    expect(bytes.byteLength).toBe(Buffer.byteLength(text));
    const moved = await parseOffThread(bytes, { transferInput: true });
    expect(bytes.byteLength).toBe(0);
    expect(summary(moved)).toEqual(summary(copied));
    expect(summary(moved)).toEqual(summary(parseExposition(text)));
  });

  it('finds keys across the thread boundary without decoding them (UTF-8 comparison)', async () => {
    const input = 'm{a="é😀x",b="\\\\"} 1\nn 2\n';
    const page = await parseOffThread(input);
    expect(page.series.key(0)).toBe('m{a="é😀x",b="\\\\"}');
    expect(page.series.keyEquals(0, 'm{a="é😀x",b="\\\\"}')).toBe(true);
    expect(page.series.keyEquals(0, 'm{a="é😀y",b="\\\\"}')).toBe(false);
    expect(page.series.keyEquals(0, 'm{a="é😀x",b="\\\\"} ')).toBe(false);
    expect(page.series.keyEquals(1, 'n')).toBe(true);
    expect(page.series.keyEquals(1, 'm')).toBe(false);
    expect(Array.from(page.series.hashes)).toEqual(Array.from(parseExposition(input).series.hashes));
  });

  it('compares keys part by part, in UTF-8 bytes across the thread boundary and in characters within it', async () => {
    const input = 'm{a="é😀x"} 1\nn{b="2",a="1"} 2\n';
    for (const page of [await parseOffThread(input), parseExposition(input)]) {
      const table = page.series;
      const parts = (id: number, ...texts: string[]): number =>
        texts.reduce((at, part) => (at === -1 ? -1 : table.keyPartEnd(id, at, part)), 0);
      expect(parts(0, 'm{a="', 'é😀', 'x"}')).toBe(table.keyLength(0));
      expect(parts(0, 'm{a="', 'é😀', 'y"}')).toBe(-1);
      expect(parts(0, 'm{a="é😀x"}', '}')).toBe(-1);
      // Re-ordered by the parser: the canonical key, made as a string.
      expect(parts(1, 'n{a="1"', ',b="2"}')).toBe(table.keyLength(1));
      expect(parts(1, 'n{b=')).toBe(-1);
    }
  });

  it('gives a page that a history stores exactly like an inline one', async () => {
    const target = { id: 't', labels: { job: 'j' } };
    const inline = new History();
    const off = new History();
    for (let i = 0; i < 3; i++) {
      const scrape = text.replaceAll(' 319', ` ${319 + i}`);
      inline.append(target, parseExposition(scrape), 1_700_000_000_000 + i * 15_000);
      await off.appendInChunks(target, await parseOffThread(scrape), 1_700_000_000_000 + i * 15_000);
    }
    const dump = (h: History) =>
      h
        .metricNames()
        .flatMap((m) => h.select({ metric: m }).map((v) => [m, { ...v.labels }, Array.from(v.t), Array.from(v.v)]));
    expect(dump(off)).toEqual(dump(inline));
    expect(off.stats()).toEqual(inline.stats());
    expect(off.stats().series).toBe(parseExposition(text).series.count);
  });

  it('rejects with an ExpositionError naming the line, column and source', async () => {
    const bad = 'ok 1\nbad{a="b" 2\n';
    await expect(parseOffThread(bad, { source: 'http://x/metrics' })).rejects.toThrow(
      new ExpositionError('expected comma or closing brace, got "2"', 2, 11, 'http://x/metrics'),
    );
    const err = await parseOffThread(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExpositionError);
    expect(err).toMatchObject({ line: 2, column: 11 });
  });

  it('serves concurrent requests each with its own result, in order', async () => {
    const inputs = Array.from({ length: 8 }, (_, i) => `m{i="${i}"} ${i}\n`.repeat(i + 1));
    const pages = await Promise.all(inputs.map((t) => parseOffThread(t)));
    expect(pages.map((p) => [p.series.count, p.samples.count, p.samples.values[0]])).toEqual(
      inputs.map((_, i) => [1, i + 1, i]),
    );
  });

  it('rejects pending requests on close and starts a new worker afterwards', async () => {
    const pending = parseOffThread(text).then(
      () => 'resolved',
      (e: unknown) => (e as Error).message,
    );
    await closeParseWorker();
    expect(await pending).toBe('parse worker closed');
    const again = await parseOffThread('x 1\n');
    expect(again.samples.count).toBe(1);
  });

  it('parsePage parses small pages inline and large ones off-thread, with the same result', async () => {
    const big = await parsePage(text, { offThreadAboveBytes: 0 });
    const small = await parsePage(text, { offThreadAboveBytes: text.length });
    expect(summary(big)).toEqual(summary(small));
  });
});

describe('parseOffThread from compiled JavaScript', () => {
  it('runs the compiled worker next to the compiled module', async () => {
    const out = mkdtempSync(join(tmpdir(), 'wqd-dist-'));
    try {
      writeFileSync(
        join(out, 'tsconfig.json'),
        JSON.stringify({
          extends: join(ROOT, 'tsconfig.json'),
          compilerOptions: {
            rootDir: join(ROOT, 'src'),
            outDir: join(out, 'dist'),
            typeRoots: [join(ROOT, 'node_modules/@types')],
            declaration: false,
            sourceMap: false,
          },
          files: [join(ROOT, 'src/exposition/parse-off-thread.ts'), join(ROOT, 'src/exposition/parse-worker.ts')],
          include: [],
        }),
      );
      await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', join(out, 'tsconfig.json')]);
      writeFileSync(join(out, 'dist/package.json'), '{"type":"module"}\n');
      const script = [
        `import { parseOffThread, closeParseWorker } from ${JSON.stringify(join(out, 'dist/exposition/parse-off-thread.js'))};`,
        `import { readFileSync } from 'node:fs';`,
        `const page = await parseOffThread(readFileSync(${JSON.stringify(FIXTURE)}, 'utf8'));`,
        `const err = await parseOffThread('a{', { source: 's' }).catch((e) => e);`,
        `console.log(JSON.stringify({ series: page.series.count, samples: page.samples.count,`,
        `  first: page.series.key(0), sum: Array.from(page.samples.values).reduce((a, b) => a + b, 0), error: err.message }));`,
        `await closeParseWorker();`,
      ].join('\n');
      writeFileSync(join(out, 'dist/check.mjs'), script);
      const { stdout } = await run(process.execPath, [join(out, 'dist/check.mjs')], { cwd: out });
      const inline = parseExposition(text);
      expect(JSON.parse(stdout)).toEqual({
        series: inline.series.count,
        samples: inline.samples.count,
        first: 'controller_runtime_active_workers{controller="failing"}',
        sum: Array.from(inline.samples.values).reduce((a, b) => a + b, 0),
        error: 's: line 1, column 3: expected label name, got "EOF"',
      });
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
