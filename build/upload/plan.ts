import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { LAYOUT, Manifest, type FileEntry } from '../../src/contract/index.ts';
import { contentTypeFor, isCompressibleType } from '../../src/api/file-http.ts';
import { cacheControlFor } from '../../src/server/static.ts';
import { checkManifestPaths } from '../mirror/plan.ts';

/**
 * What a publication sends, and how (docs/deploy.md, "Publishing as static files"): the site is the page (`public/`)
 * at its root and the snapshot under `snapshot/`. Every file is checked before anything is sent: each file the
 * manifest lists against its size and sha256, and each gzip copy a host would send in a file's stead against the
 * file it stands for, so a publication never puts bytes before readers that the manifest does not vouch for.
 *
 * Two ways to lay the site out:
 * - `object store` (S3, R2, GCS): a bucket sends what it holds under a name and cannot choose between `X` and
 *   `X.gz`, so a text file with a gzip copy is sent as the copy's bytes under its own name with
 *   `Content-Encoding: gzip`; every file of the manifest is there under its own name (siblings and the search
 *   index's `.bin.gz` parts as they are); unlisted host copies are not sent on their own.
 * - `folder` (a static host's root, for nginx's `gzip_static` or Caddy's `precompressed`): every file as it is,
 *   with its copies beside it.
 */
export type Layout = 'object-store' | 'folder';

export type Item = {
  /** The path on the site: `index.html`, `snapshot/records/K12.json`. */
  key: string;
  /** The file whose bytes are sent. */
  source: string;
  /** Bytes sent. */
  bytes: number;
  /** sha256 of what a reader gets, once any Content-Encoding is undone. */
  sha256: string;
  contentType: string;
  contentEncoding: 'gzip' | null;
  cacheControl: string;
  /** The manifest's entry the item carries, or a host copy stands for (null for the page's files and the manifest). */
  entry: FileEntry | null;
};

export type Plan = {
  snapshotId: string;
  /** The snapshot's files but its manifest, then the manifest (sent last), then the page's files. */
  snapshot: Item[];
  manifest: Item;
  page: Item[];
  manifestEntries: FileEntry[];
};

const PAGE_CACHE_CONTROL = 'public, no-cache';
const COPY = /\.(br|gz)$/;

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const exists = (path: string) =>
  stat(path).then(
    (s) => s.isFile(),
    () => false,
  );

/** The gzip copy beside `path` as an item standing for it, checked to inflate to exactly the file's bytes. */
async function encodedItem(key: string, path: string, sha256: string, cacheControl: string, entry: FileEntry | null): Promise<Item | null> {
  const copy = `${path}.gz`;
  if (!(await exists(copy))) return null;
  const packed = await readFile(copy);
  let inflated: Buffer;
  try {
    inflated = gunzipSync(packed);
  } catch (err) {
    throw new Error(`${copy} is not gzip (${(err as Error).message}); build the snapshot again`);
  }
  if (createHash('sha256').update(inflated).digest('hex') !== sha256) throw new Error(`${copy} does not inflate to the bytes of ${path}; build the snapshot again`);
  return { key, source: copy, bytes: packed.byteLength, sha256, contentType: contentTypeFor(path), contentEncoding: 'gzip', cacheControl, entry };
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(relative(dir, join(e.parentPath, e.name)).split(sep).join('/'));
  }
  return out.sort();
}

/**
 * The plan for a snapshot folder (or its link) and a page folder (or null for none). Throws, naming the file, when
 * a file is missing or its bytes are not the manifest's.
 */
export async function planPublication(snapshotPath: string, pageDir: string | null, layout: Layout, snapshotPrefix = 'snapshot/'): Promise<Plan> {
  const dir = await realpath(snapshotPath);
  const manifestBytes = await readFile(join(dir, LAYOUT.manifest)).catch(() => {
    throw new Error(`${snapshotPath} has no ${LAYOUT.manifest}: name a built snapshot (npm run build writes one)`);
  });
  const manifest = Manifest.parse(JSON.parse(manifestBytes.toString('utf8')));
  checkManifestPaths(manifest);
  const listed = new Set(manifest.files.map((f) => f.path));
  const snapshot: Item[] = [];
  for (const entry of manifest.files) {
    const path = join(dir, entry.path);
    const size = (await stat(path).catch(() => null))?.size;
    if (size !== entry.bytes) throw new Error(`${entry.path} is ${size === undefined ? 'missing' : `${size} bytes, not the manifest's ${entry.bytes}`}; build the snapshot again`);
    if ((await sha256Of(path)) !== entry.sha256) throw new Error(`${entry.path} does not have the sha256 the manifest lists; build the snapshot again`);
    const key = `${snapshotPrefix}${entry.path}`;
    const cacheControl = cacheControlFor(entry.path);
    const plain: Item = { key, source: path, bytes: entry.bytes, sha256: entry.sha256, contentType: contentTypeFor(entry.path), contentEncoding: null, cacheControl, entry };
    if (layout === 'object-store') {
      const encoded = isCompressibleType(entry.path) ? await encodedItem(key, path, entry.sha256, cacheControl, entry) : null;
      snapshot.push(encoded ?? plain);
      continue;
    }
    snapshot.push(plain);
    // A host copy (unlisted, beside a record shard) goes to a folder with its file, checked like a sibling.
    if (!listed.has(`${entry.path}.gz`)) {
      const copy = await encodedItem(`${key}.gz`, path, entry.sha256, cacheControl, entry);
      if (copy) snapshot.push({ ...copy, contentType: contentTypeFor(`${entry.path}.gz`), contentEncoding: null, sha256: await sha256Of(copy.source) });
    }
  }
  const manifestItem: Item = {
    key: `${snapshotPrefix}${LAYOUT.manifest}`,
    source: join(dir, LAYOUT.manifest),
    bytes: manifestBytes.byteLength,
    sha256: createHash('sha256').update(manifestBytes).digest('hex'),
    contentType: contentTypeFor(LAYOUT.manifest),
    contentEncoding: null,
    cacheControl: cacheControlFor(LAYOUT.manifest),
    entry: null,
  };

  const page: Item[] = [];
  if (pageDir !== null) {
    const files = await filesUnder(pageDir);
    for (const rel of files) {
      const path = join(pageDir, rel);
      // The page's copies go to a folder beside their files; in an object store they are sent in their files' stead.
      if (COPY.test(rel) && layout === 'object-store' && files.includes(rel.replace(COPY, ''))) continue;
      const sha256 = await sha256Of(path);
      const plain: Item = { key: rel, source: path, bytes: (await stat(path)).size, sha256, contentType: contentTypeFor(rel), contentEncoding: null, cacheControl: PAGE_CACHE_CONTROL, entry: null };
      const encoded = layout === 'object-store' && isCompressibleType(rel) ? await encodedItem(rel, path, sha256, PAGE_CACHE_CONTROL, null) : null;
      page.push(encoded ?? plain);
    }
  }
  return { snapshotId: manifest.snapshotId, snapshot, manifest: manifestItem, page, manifestEntries: manifest.files };
}
