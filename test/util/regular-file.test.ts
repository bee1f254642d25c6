/**
 * Files read within a size limit: only regular files (a symbolic link, a FIFO, a device, a directory refused by
 * name, without blocking on a FIFO), links followed only when asked, the size checked before and while reading.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileRefusal, openRegularFile, readFileChunks, readRegularFile } from '../../src/util/regular-file.js';

const work = mkdtempSync(join(tmpdir(), 'wqd-regular-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const file = join(work, 'file');
writeFileSync(file, 'hello\n');
const fifo = join(work, 'fifo');
execFileSync('mkfifo', [fifo]);
const directory = join(work, 'dir');
mkdirSync(directory);
const link = (name: string, to: string): string => {
  const path = join(work, name);
  symlinkSync(to, path);
  return path;
};
const linkToFile = link('link-to-file', file);
const linkToFifo = link('link-to-fifo', fifo);
const linkToZero = link('link-to-zero', '/dev/zero');

/** The refusal of reading `path`, as kind and reason. */
async function refusal(path: string, options: Parameters<typeof readRegularFile>[1]): Promise<[string, string]> {
  const error = await readRegularFile(path, options).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof FileRefusal)) throw new Error(`not refused: ${String(error)}`);
  return [error.kind, error.message];
}

describe('regular files', () => {
  it('reads a regular file, and through a link when links are followed', async () => {
    expect((await readRegularFile(file, { maxBytes: 100 })).toString()).toBe('hello\n');
    expect((await readRegularFile(linkToFile, { maxBytes: 100, followSymlinks: true })).toString()).toBe('hello\n');
  });

  it('refuses what is not a regular file, by name, without blocking on a FIFO', async () => {
    expect(await refusal(linkToFile, { maxBytes: 100 })).toEqual([
      'not-regular',
      'a symbolic link, not a regular file',
    ]);
    expect(await refusal(fifo, { maxBytes: 100 })).toEqual(['not-regular', 'a FIFO (named pipe), not a regular file']);
    expect(await refusal(linkToFifo, { maxBytes: 100, followSymlinks: true })).toEqual([
      'not-regular',
      'a FIFO (named pipe), not a regular file',
    ]);
    expect(await refusal(linkToZero, { maxBytes: 100, followSymlinks: true })).toEqual([
      'not-regular',
      'a character device, not a regular file',
    ]);
    expect(await refusal(directory, { maxBytes: 100 })).toEqual(['not-regular', 'a directory, not a regular file']);
  });

  it('refuses a file over the limit before reading it, and stops reading one that passes it', async () => {
    expect(await refusal(file, { maxBytes: 5 })).toEqual(['too-large', 'larger than 5 bytes (6)']);
    const handle = await openRegularFile(file, { maxBytes: 100 });
    try {
      const chunks: Buffer[] = [];
      const reading = (async () => {
        for await (const chunk of readFileChunks(handle, { maxBytes: 5 })) chunks.push(chunk);
      })();
      await expect(reading).rejects.toThrow(new FileRefusal('too-large', 'larger than 5 bytes'));
      expect(chunks).toEqual([]);
    } finally {
      await handle.close();
    }
  });

  it('stops reading once the signal is aborted', async () => {
    const stop = new AbortController();
    stop.abort(new Error('stopping'));
    await expect(readRegularFile(file, { maxBytes: 100, signal: stop.signal })).rejects.toThrow('stopping');
  });

  it('passes system errors on as they are', async () => {
    await expect(readRegularFile(join(work, 'missing'), { maxBytes: 100 })).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
