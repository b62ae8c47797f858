import { cp, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { DOWNLOADS_DIR } from '../../src/contract/index.ts';
import { HOST_COPY_SUFFIX, wantsHostCopy } from '../write/compress.ts';
import { pageBesideApi } from '../../src/server/public-dir.ts';

/**
 * The Worker's static-assets folder: the page (public/) at the root and the snapshot's files (the link followed)
 * under `snapshot/`, as wrangler.toml's `[assets]` expects. Rebuilt from scratch so that no file of an earlier
 * snapshot stays behind. The bulk downloads (`downloads/`) are left out: static assets take at most 25 MiB a file, and
 * the SQLite database passes that at the bundled size; they are published where large files go (docs/deploy.md).
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
  if (options.snapshotPath) {
    const from = await realpath(options.snapshotPath);
    const downloads = (path: string) => relative(from, path).split(sep)[0] === DOWNLOADS_DIR;
    // The shards' host copies are no file of the snapshot (not in its manifest) and would double the file count.
    const hostCopy = (path: string) => {
      const rel = relative(from, path).split(sep).join('/');
      return rel.endsWith(HOST_COPY_SUFFIX) && wantsHostCopy(rel.slice(0, -HOST_COPY_SUFFIX.length));
    };
    await cp(from, join(options.out, 'snapshot'), { recursive: true, filter: (path) => !downloads(path) && !hostCopy(path) });
  }
  return options.out;
}
