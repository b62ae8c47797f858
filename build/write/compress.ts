import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import { LAYOUT } from '../../src/contract/index.ts';

/**
 * Precompressed siblings (`X.br`, `X.gz`) of the snapshot's text and index files, so that a static host or a CDN
 * that serves files as they are can still send them compressed. They are files of the snapshot like any other:
 * listed in the manifest with their own sha256, and mirrored.
 *
 * Deterministic: fixed parameters, a quality that depends only on the file's size, and a gzip header without a
 * time or a platform in it, so the same bytes give the same siblings (on the same Node.js; zlib's output can differ
 * between zlib versions, which changes the sibling's sha256 but never what it decompresses to).
 */

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Smaller files are not worth a sibling: the headers of a request cost more than compression saves. */
export const SIBLING_MIN_BYTES = 1024;
/** A sibling is kept only when it is at most this fraction of the file. */
const SIBLING_MAX_RATIO = 0.9;
/**
 * Brotli's quality by size: 11 (the best) up to 64 KiB, 9 up to 1 MiB, 5 above: the large files, which the best
 * quality makes several times slower, give up little of their size for it.
 */
const brotliQuality = (size: number): number => (size <= 64 * 1024 ? 11 : size <= 1024 * 1024 ? 9 : 5);

export type Encoding = 'br' | 'gzip';
export const SIBLING_SUFFIX: Record<Encoding, string> = { br: '.br', gzip: '.gz' };

/**
 * Whether a file of the snapshot gets siblings. Record shards do not: there is one per 100 K numbers, up to
 * 10,000 of them, and siblings would take a 1,000,000-record snapshot past 20,000 files (the most a Workers static
 * asset deployment holds); the server compresses them on the fly from the verified bytes it keeps in memory, as a
 * CDN does. Pagefind's index files (`.pf_*`, `wasm.*.pagefind`) are gzip already, and the manifest cannot list a
 * sibling of itself.
 */
export function wantsSiblings(path: string): boolean {
  if (path === LAYOUT.manifest) return false;
  if (/^records\/K[^/]*\.json$/.test(path)) return false;
  // Lineage shards: up to 2,000 small files at 1,000,000 records; the same reasoning as for record shards.
  if (path.startsWith('lineage/') && path.endsWith('.bin')) return false;
  // The record names files are read by byte ranges, which only the file as it is serves.
  if (path.startsWith('records/names/')) return false;
  return /\.(json|js|css|bin)$/.test(path);
}

/**
 * Record shards and lineage shards get a host copy instead: `records/K….json.gz` or `lineage/…/K….bin.gz` beside the
 * shard, not listed in the manifest. A static host that sends only precompressed files (nginx's `gzip_static`, Caddy's
 * `precompressed`) then sends the page's record and lineage reads compressed (a lineage shard to about half).
 * Unlisted, they are no file of the snapshot: a mirror does not fetch them (it makes its own from the shards it
 * verified), the Worker's assets leave them out (their file budget), and the server compresses shards itself. gzip
 * only, the one coding every client takes, so a shard adds one file, not two.
 */
export function wantsHostCopy(path: string): boolean {
  return /^records\/K[^/]*\.json$/.test(path) || /^lineage\/(predicates|descendants)\/[^/]*\.bin$/.test(path);
}

/** The host copy of a shard: its gzip, deterministic like the siblings. */
export const HOST_COPY_SUFFIX = SIBLING_SUFFIX.gzip;

export async function compressTo(encoding: Encoding, bytes: Uint8Array): Promise<Buffer> {
  if (encoding === 'br') {
    return brotliAsync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: brotliQuality(bytes.byteLength),
        [constants.BROTLI_PARAM_LGWIN]: constants.BROTLI_DEFAULT_WINDOW,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_GENERIC,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
      },
    });
  }
  const out = await gzipAsync(bytes, { level: 9, memLevel: 8, windowBits: 15, strategy: constants.Z_DEFAULT_STRATEGY });
  // Bytes 4-7 (the time) are already zero; byte 9 names the operating system, which would differ by platform.
  out[9] = 3;
  return out;
}

/** The siblings worth keeping for a file: each encoding whose output is small enough against the file. */
export async function siblingsOf(path: string, bytes: Uint8Array): Promise<{ path: string; bytes: Buffer }[]> {
  if (bytes.byteLength < SIBLING_MIN_BYTES || !wantsSiblings(path)) return [];
  const out: { path: string; bytes: Buffer }[] = [];
  for (const encoding of ['br', 'gzip'] as const) {
    const packed = await compressTo(encoding, bytes);
    if (packed.byteLength <= bytes.byteLength * SIBLING_MAX_RATIO) out.push({ path: `${path}${SIBLING_SUFFIX[encoding]}`, bytes: packed });
  }
  return out;
}
