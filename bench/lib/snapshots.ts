import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { defaultSources } from '../../build/sources/default.ts';
import type { BuildFigures } from './build-child.ts';
import { lastJsonLine, runToEnd, startTsx } from './procs.ts';

/**
 * One snapshot per size, generated and built under the benchmark's work folder and reused across runs while its
 * inputs are unchanged: the generator's seed and size, and the code and data the build reads (a change to any of
 * them makes a new key, so a cached snapshot is never one the current code would not build).
 */
export type Size = { label: string; records: number | null };

export const SIZES: readonly Size[] = [
  { label: 'bundled', records: null },
  { label: '175k', records: 175_000 },
  { label: '1M', records: 1_000_000 },
];

/**
 * What a build's output depends on besides its sources: the build and the contract and index code it imports (the
 * nightly sync and the mirror script are not part of a build, so editing them keeps the cache).
 */
const SNAPSHOT_INPUTS = ['build', 'src/contract', 'src/search', 'data/fda', 'package-lock.json'];
const NOT_BUILD_INPUTS = /^build\/(sync|mirror)(\/|\.ts$)/;

export const FOICLASS = 'data/fda/classification/Frederic1011_CICC-IBD-Healthcare-FDA510k-Weekly-Tracker/original_dataset_1_foiclass.txt';

export type PreparedSnapshot = {
  size: Size;
  /** The published snapshot link. */
  path: string;
  /** The directory it points at. */
  dir: string;
  build: BuildFigures & { measuredAt: string; cached: boolean; generateSeconds: number | null };
};

type Options = { root: string; workDir: string; seed: string; fresh: boolean; log: (line: string) => void; buildTimeoutMs: number };

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)).sort();
}

/** A short content key over files and extra strings: paths relative to the repository, then their bytes. */
async function contentKey(root: string, paths: readonly string[], extra: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const x of extra) hash.update(`${x}\n`);
  for (const p of paths) {
    const files = (await stat(join(root, p)).catch(() => null))?.isDirectory() ? await filesUnder(join(root, p)) : [join(root, p)];
    for (const f of files) {
      if (NOT_BUILD_INPUTS.test(relative(root, f))) continue;
      hash.update(`${relative(root, f)}\n`);
      hash.update(await readFile(f).catch(() => Buffer.alloc(0)));
    }
  }
  return hash.digest('hex').slice(0, 12);
}

/** Removes the other cached entries of one size (an older key), so the work folder does not grow run after run. */
async function pruneSiblings(parent: string, prefix: string, keep: string): Promise<void> {
  for (const name of await readdir(parent).catch(() => [])) {
    if (name.startsWith(prefix) && name !== keep && name !== `${keep}.json`) await rm(join(parent, name), { recursive: true, force: true });
  }
}

async function readJson<T>(path: string): Promise<T | null> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch {
    return null;
  }
}

/** Generated pmn files for `records` rows, cached by seed, size and the generator's code and source files. */
async function generated(records: number, o: Options): Promise<{ dir: string; seconds: number | null }> {
  const key = await contentKey(o.root, ['build/generate', 'build/generate.ts', 'data/fda/510k'], [o.seed, String(records)]);
  const parent = join(o.workDir, 'inputs');
  const name = `${records}-${key}`;
  const dir = join(parent, name);
  // Beside the folder, not in it: the build reads every file of a source folder.
  const done = `${dir}.json`;
  const cached = o.fresh ? null : await readJson<{ seconds: number }>(done);
  if (cached) return { dir, seconds: cached.seconds };
  await mkdir(parent, { recursive: true });
  await pruneSiblings(parent, `${records}-`, name);
  o.log(`generating ${records.toLocaleString('en-US')} records (seed ${o.seed})`);
  const started = performance.now();
  const child = startTsx(join(o.root, 'build/generate.ts'), ['--records', String(records), '--out', dir, '--seed', o.seed], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await runToEnd(child, o.buildTimeoutMs, `generating ${records} records`);
  const seconds = (performance.now() - started) / 1000;
  await writeFile(done, `${JSON.stringify({ seconds, seed: o.seed, records })}\n`);
  return { dir, seconds };
}

/** The snapshot of one size: from the cache when its inputs are unchanged, else generated and built (and measured). */
export async function prepareSnapshot(size: Size, o: Options): Promise<PreparedSnapshot> {
  let sources: string[];
  let generateSeconds: number | null = null;
  if (size.records === null) {
    sources = (await defaultSources()).sources.map((s) => resolve(o.root, s));
  } else {
    const gen = await generated(size.records, o);
    sources = [gen.dir, resolve(o.root, FOICLASS)];
    generateSeconds = gen.seconds;
  }
  const key = await contentKey(o.root, SNAPSHOT_INPUTS, [size.label, o.seed, ...sources.map((s) => relative(o.workDir, s))]);
  const parent = join(o.workDir, 'snapshots');
  const name = `${size.label}-${key}`;
  const home = join(parent, name);
  const link = join(home, 'snapshot');
  const figuresPath = join(home, 'build.json');
  const cached = o.fresh ? null : await readJson<PreparedSnapshot['build']>(figuresPath);
  if (cached && (await stat(join(link, 'manifest.json')).catch(() => null))) {
    return { size, path: link, dir: cached.dir, build: { ...cached, cached: true } };
  }
  await rm(home, { recursive: true, force: true });
  await mkdir(home, { recursive: true });
  await pruneSiblings(parent, `${size.label}-`, name);
  o.log(`building the ${size.label} snapshot`);
  const child = startTsx(join(o.root, 'bench/lib/build-child.ts'), [link, ...sources]);
  const figures = lastJsonLine<BuildFigures>(await runToEnd(child, o.buildTimeoutMs, `the ${size.label} build`));
  const build = { ...figures, measuredAt: new Date().toISOString(), cached: false, generateSeconds };
  await writeFile(figuresPath, `${JSON.stringify(build)}\n`);
  return { size, path: link, dir: figures.dir, build };
}
