import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressTo, SIBLING_MIN_BYTES, SIBLING_SUFFIX } from '../write/compress.ts';

/**
 * Precompressed copies of the page's own files (`public/js/app.js.gz`, `.br`), beside each, for a static host that
 * sends only precompressed files (nginx's `gzip_static`, Caddy's `precompressed`): without them such a host sends
 * the page's scripts whole. They are generated (not committed) and made again from the files by every
 * `npm run build` and `npm run build:page`; a copy whose file is gone or no longer worth one is removed, so a copy
 * never outlives the bytes it was made from. Deterministic, as the snapshot's siblings.
 */

/** The repository's page folder, which a static host serves as the site's root. */
export const PAGE_DIR = fileURLToPath(new URL('../../public', import.meta.url));

/** What a host may send compressed: text. Images and fonts are compressed already. */
const COMPRESSIBLE = /\.(html|js|mjs|css|json|svg|txt|map|webmanifest|xml)$/i;
const COPY = /\.(br|gz)$/;
/** A copy is kept only when it is at most this fraction of the file, as for the snapshot's siblings. */
const MAX_RATIO = 0.9;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
  }
  return out.sort();
}

/** The copies a page file gets: each coding whose output is small enough. */
export async function pageCopiesOf(rel: string, bytes: Uint8Array): Promise<{ rel: string; bytes: Buffer }[]> {
  if (!COMPRESSIBLE.test(rel) || bytes.byteLength < SIBLING_MIN_BYTES) return [];
  const out: { rel: string; bytes: Buffer }[] = [];
  for (const coding of ['br', 'gzip'] as const) {
    const packed = await compressTo(coding, bytes);
    if (packed.byteLength <= bytes.byteLength * MAX_RATIO) out.push({ rel: `${rel}${SIBLING_SUFFIX[coding]}`, bytes: packed });
  }
  return out;
}

/** Writes the copies of every page file under `dir` and removes stale ones; returns the copies written. */
export async function writePageCopies(dir: string): Promise<string[]> {
  const all = await filesUnder(dir);
  const wanted = new Map<string, Buffer>();
  for (const rel of all.filter((f) => !COPY.test(f))) {
    for (const copy of await pageCopiesOf(rel, await readFile(join(dir, rel)))) wanted.set(copy.rel, copy.bytes);
  }
  for (const rel of all.filter((f) => COPY.test(f) && !wanted.has(f))) await rm(join(dir, rel), { force: true });
  for (const [rel, bytes] of wanted) {
    const old = await readFile(join(dir, rel)).catch(() => null);
    if (!old?.equals(bytes)) await writeFile(join(dir, rel), bytes);
  }
  return [...wanted.keys()].sort();
}
