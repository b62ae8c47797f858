import { copyFile, cp, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { DOWNLOADS_DIR, LAYOUT, Manifest } from '../../src/contract/index.ts';
import { safeRelPath } from '../../src/snapshot/paths.ts';
import { pageBesideApi } from '../../src/server/public-dir.ts';

/** The static-assets host's header rules (Cloudflare's `_headers` format); it never serves this file itself. */
export const ASSET_HEADERS = '/snapshot/*\n  Access-Control-Allow-Origin: *\n';

/**
 * The Worker's static-assets folder: the page (public/) at the root and the snapshot's files (the link followed)
 * under `snapshot/`, as wrangler.toml's `[assets]` expects. Rebuilt from scratch so that no file of an earlier
 * snapshot stays behind. Only the manifest and the files it lists are copied: static assets serve every file they
 * hold, unchecked, so a file that lies in the snapshot's folder without being part of it (the shards' unlisted host
 * copies, anything left there) would be served as if it were. The bulk downloads (`downloads/`) are left out: static
 * assets take at most 25 MiB a file, and the SQLite database passes that at the bundled size; they are published
 * where large files go (docs/deploy.md).
 */
export async function prepareAssets(options: { snapshotPath: string | null; publicDir: string | null; out: string }): Promise<string> {
  await rm(options.out, { recursive: true, force: true });
  await mkdir(options.out, { recursive: true });
  if (options.publicDir) {
    // The page's precompressed copies stay out: the Worker's host compresses, and index.html and service.json change below.
    await cp(options.publicDir, options.out, { recursive: true, filter: (src) => !/\.(br|gz)$/.test(src) });
    // The page asks service.json whether an API answers beside it; here the Worker does (see src/server/public-dir.ts).
    // `downloads: null`: the bulk downloads are not among these assets (below), so the page does not link them.
    await writeFile(join(options.out, 'service.json'), `${JSON.stringify({ api: 'v1/query', downloads: null })}\n`);
    const page = join(options.out, 'index.html');
    const html = await readFile(page, 'utf8').catch(() => null);
    if (html !== null) await writeFile(page, pageBesideApi(html));
  }
  if (options.snapshotPath) await copyListedFiles(await realpath(options.snapshotPath), join(options.out, 'snapshot'));
  // The snapshot's files are public data that any page may read, as the Node server and the Worker over R2 send them
  // (Access-Control-Allow-Origin: *); the assets' host reads `_headers` for the headers of its own answers.
  await writeFile(join(options.out, '_headers'), ASSET_HEADERS);
  return options.out;
}

/** Copies a snapshot's manifest and every file it lists but the bulk downloads; a path that would leave the folder is refused. */
async function copyListedFiles(from: string, to: string): Promise<void> {
  const manifestBytes = await readFile(join(from, LAYOUT.manifest));
  const manifest = Manifest.parse(JSON.parse(manifestBytes.toString('utf8')));
  const paths = manifest.files.map((f) => f.path).filter((path) => !path.startsWith(`${DOWNLOADS_DIR}/`));
  for (const path of paths) {
    if (safeRelPath(path) !== path) throw new Error(`${join(from, LAYOUT.manifest)} lists ${JSON.stringify(path)}, which is not a plain path inside the snapshot`);
  }
  for (const folder of new Set([to, ...paths.map((path) => dirname(join(to, path)))])) await mkdir(folder, { recursive: true });
  const limit = pLimit(16);
  await Promise.all(paths.map((path) => limit(() => copyFile(join(from, path), join(to, path)))));
  // The manifest last, as a publish writes it.
  await writeFile(join(to, LAYOUT.manifest), manifestBytes);
}
