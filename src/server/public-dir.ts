import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

export const SERVICE_FILE = 'service.json';

const PAGE_FILE = 'index.html';
/**
 * A line of index.html that hints at a file only static mode reads (`data-static-host`): a link, or a one-line script
 * that adds one for some addresses only.
 */
const STATIC_HOST_HINT = /^[ \t]*(?:<link\b[^>\n]*\sdata-static-host\b[^>\n]*>|<script data-static-host>[^\n]*<\/script>)\r?\n/gm;
/** The comment that introduces those lines (it names this function). */
const STATIC_HOST_NOTE = /^[ \t]*<!--(?:(?!-->)[^])*pageBesideApi(?:(?!-->)[^])*-->\r?\n/m;

/**
 * The page as served beside the API (by the server or the Worker): without the hints that have a static host's
 * browser fetch static mode's first files early, which a page that talks to the API would download for nothing.
 */
export function pageBesideApi(html: string): string {
  return html.replace(STATIC_HOST_NOTE, '').replace(STATIC_HOST_HINT, '');
}

const COMPRESSIBLE = /\.(html|js|mjs|css|json|svg|txt|map)$/i;

/**
 * sirv sends a `.br` or `.gz` sibling when one exists but never compresses on the fly, so the page would go out
 * uncompressed (about 49 KB instead of 15). At start-up the page folder is copied, with brotli and gzip siblings of
 * every text file, into a folder named by a hash of its content: the same page reuses the same copy, and the
 * repository's public/ stays free of generated files. Returns null when `dir` is not a folder.
 */
export async function precompressedCopy(dir: string): Promise<string | null> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) return null;
  const files: { rel: string; bytes: Buffer }[] = [];
  const walk = async (d: string): Promise<void> => {
    const entries = (await readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      if (e.name.startsWith('.')) continue;
      const abs = join(d, e.name);
      if (e.isDirectory()) await walk(abs);
      else if (e.isFile()) files.push({ rel: relative(dir, abs), bytes: await readFile(abs) });
    }
  };
  await walk(dir);
  // A `.br` or `.gz` beside a text file in the folder (what `npm run build` leaves for static hosts) is made again
  // from the file below, never copied: after an edit to the file it would be stale, and sirv would send it instead.
  const made = new Set(files.filter((f) => COMPRESSIBLE.test(f.rel)).map((f) => f.rel));
  for (let i = files.length - 1; i >= 0; i--) {
    const m = /^(.*)\.(?:br|gz)$/.exec(files[i]!.rel);
    if (m && made.has(m[1]!)) files.splice(i, 1);
  }
  // The page asks service.json whether an API answers beside it: the repository's copy says no (what a static host
  // serves), the server's copy names the endpoint, so neither mode needs a probe that fails with an HTTP error.
  const service = files.find((f) => f.rel === SERVICE_FILE);
  if (service) service.bytes = Buffer.from(`${JSON.stringify({ api: 'v1/query' })}\n`);
  const page = files.find((f) => f.rel === PAGE_FILE);
  if (page) page.bytes = Buffer.from(pageBesideApi(page.bytes.toString('utf8')));
  const hash = createHash('sha256');
  for (const f of files) hash.update(`${f.rel}\0`).update(f.bytes).update('\0');
  const target = join(tmpdir(), `device-510k-public-${hash.digest('hex').slice(0, 16)}`);
  if (await stat(target).catch(() => null)) return target;

  // Written aside and renamed, so that two servers starting at once never see a half-written copy.
  const staging = `${target}.${process.pid}-${Date.now()}`;
  for (const f of files) {
    const out = join(staging, f.rel);
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, f.bytes);
    if (COMPRESSIBLE.test(f.rel) && f.bytes.byteLength > 1024) {
      await writeFile(`${out}.br`, brotliCompressSync(f.bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      await writeFile(`${out}.gz`, gzipSync(f.bytes, { level: 9 }));
    }
  }
  await rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    // Another server finished the same copy first: use theirs.
    if (!(await stat(target).catch(() => null))) throw err;
  });
  return target;
}
