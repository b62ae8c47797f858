import { cp, mkdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { HOST_COPY_SUFFIX, wantsHostCopy } from '../write/compress.ts';

const isHostCopy = (rel: string): boolean => rel.endsWith(HOST_COPY_SUFFIX) && wantsHostCopy(rel.slice(0, -HOST_COPY_SUFFIX.length));
import { pageBesideApi } from '../../src/server/public-dir.ts';

/**
 * The Worker's static-assets folder: the page (public/) at the root and the snapshot's files (the link followed)
 * under `snapshot/`, as wrangler.toml's `[assets]` expects. Rebuilt from scratch so that no file of an earlier
 * snapshot stays behind.
 */
export async function prepareAssets(options: { snapshotPath: string | null; publicDir: string | null; out: string }): Promise<string> {
  await rm(options.out, { recursive: true, force: true });
  await mkdir(options.out, { recursive: true });
  if (options.publicDir) {
    // The page's precompressed copies stay out: the Worker's host compresses, and index.html and service.json change below.
    await cp(options.publicDir, options.out, { recursive: true, filter: (src) => !/\.(br|gz)$/.test(src) });
    // The page asks service.json whether an API answers beside it; here the Worker does (see src/server/public-dir.ts).
    await writeFile(join(options.out, 'service.json'), `${JSON.stringify({ api: 'v1/query' })}\n`);
    const page = join(options.out, 'index.html');
    const html = await readFile(page, 'utf8').catch(() => null);
    if (html !== null) await writeFile(page, pageBesideApi(html));
  }
  if (options.snapshotPath) {
    // The shards' host copies are no file of the snapshot (not in its manifest) and would double the file count.
    const from = await realpath(options.snapshotPath);
    await cp(from, join(options.out, 'snapshot'), { recursive: true, filter: (src) => !isHostCopy(relative(from, src).split(sep).join('/')) });
  }
  return options.out;
}
