/**
 * Small files read on every request (bearer tokens, CA bundles) are cached and re-read only when
 * they change: the cache key is the path, the validity check is (inode, size, mtime) from one
 * `stat` per use. Kubernetes rotates projected service-account tokens by swapping a symlink, which
 * changes the inode, and rewrites in place change size or mtime.
 */
import { readFile, stat } from 'node:fs/promises';

interface Entry {
  ino: number;
  size: number;
  mtimeMs: number;
  content: Buffer;
}

const cache = new Map<string, Entry>();

/** The file's content, from the cache when the file has not changed since it was last read. */
export async function readFileCached(path: string): Promise<Buffer> {
  const st = await stat(path);
  const hit = cache.get(path);
  if (hit && hit.ino === st.ino && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.content;
  const content = await readFile(path);
  cache.set(path, { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, content });
  return content;
}

/** A bearer token from a file: cached like `readFileCached`, surrounding whitespace removed, never empty. */
export async function readTokenFile(path: string): Promise<string> {
  const token = (await readFileCached(path)).toString('utf8').trim();
  if (token === '') throw new Error(`token file ${path} is empty`);
  return token;
}
