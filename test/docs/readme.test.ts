/**
 * The README is for the first ten minutes and the reference lives in docs/*.md: the README stays short, its Quick
 * start is exactly the two command lines a fresh machine needs, and every relative link of the README and the
 * documents (and every anchor into a Markdown file) leads somewhere that exists.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const MAX_README_LINES = 420;

const read = (file: string) => readFileSync(file, 'utf8');

/** The lines of a Markdown text with fenced code blocks blanked, so that nothing inside them counts as Markdown. */
function outsideFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === undefined && marker !== undefined) {
      fence = marker;
      return '';
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
      return '';
    }
    return line;
  });
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated heading gets `-1`, `-2`, ... as on GitHub. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of outsideFences(read(file))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** The targets of a Markdown text's inline links and images, code spans and fenced blocks left out. */
function linksOf(text: string): string[] {
  const links: string[] = [];
  for (const line of outsideFences(text)) {
    const prose = line.replace(/(`+)[^`]*?\1/g, '');
    for (const match of prose.matchAll(/!?\[(?:[^\]]|\][^(])*?\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      links.push(match[1] as string);
    }
  }
  return links;
}

const documents = [
  README,
  ...readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(DOCS, name)),
];

describe('README.md', () => {
  const text = read(README);

  it(`has at most ${MAX_README_LINES} lines`, () => {
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it('has a Quick start of exactly two command lines: npm ci && npm start, then npm test', () => {
    const lines = text.split('\n');
    const start = lines.findIndex((line) => /^##\s+Quick start\s*$/.test(line));
    expect(start, 'a "## Quick start" section').toBeGreaterThanOrEqual(0);
    const next = lines.findIndex((line, i) => i > start && /^#{1,2}\s/.test(line));
    const section = lines.slice(start + 1, next === -1 ? undefined : next);
    const blocks: string[][] = [];
    let block: string[] | undefined;
    for (const line of section) {
      if (/^\s*```/.test(line)) {
        if (block === undefined) block = [];
        else {
          blocks.push(block);
          block = undefined;
        }
      } else block?.push(line);
    }
    expect(blocks).toHaveLength(1);
    const commands = (blocks[0] ?? []).map((line) => line.trim()).filter((line) => line !== '');
    expect(commands).toEqual(['npm ci && npm start', 'npm test']);
  });
});

describe.each(documents.map((file) => [relative(ROOT, file), file] as const))('%s', (_name, file) => {
  it('links only to files that exist, and to headings that exist', () => {
    const broken: string[] = [];
    for (const link of linksOf(read(file))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
      const [path = '', anchor] = link.split('#', 2);
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!target.startsWith(ROOT) || !existsSync(target)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (anchor === undefined || anchor === '' || statSync(target).isDirectory() || !target.endsWith('.md')) continue;
      if (!anchorsOf(target).has(decodeURIComponent(anchor).toLowerCase())) broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});

describe('the link checker', () => {
  it('makes anchors as GitHub does', () => {
    expect(slug('`workqueue-doctor serve`')).toBe('workqueue-doctor-serve');
    expect(slug('Signing in with `--api-token-file`')).toBe('signing-in-with---api-token-file');
    expect(slug('Verdicts: firing, pending, unknown, ok')).toBe('verdicts-firing-pending-unknown-ok');
    expect(slug('Scoping to a fleet: `selector`, `clusterLabel`, `namespaceLabel`')).toBe(
      'scoping-to-a-fleet-selector-clusterlabel-namespacelabel',
    );
  });

  it('reads inline links and images outside code, and nothing inside it', () => {
    const text = [
      'See [the API](docs/api.md#routes) and ![a picture](docs/page.png "title").',
      'Not `[code](nowhere.md)`.',
      '```',
      '[fenced](nowhere.md)',
      '```',
    ].join('\n');
    expect(linksOf(text)).toEqual(['docs/api.md#routes', 'docs/page.png']);
  });
});
