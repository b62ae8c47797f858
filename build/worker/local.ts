import { mkdtemp, readdir, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Miniflare } from 'miniflare';
import { prepareAssets } from './assets.ts';
import { bundleWorker } from './bundle.ts';

/** The R2 bucket as the tests use it (Miniflare types it with a package this project does not install). */
export type LocalBucket = {
  put(key: string, value: ArrayBuffer | string): Promise<unknown>;
  delete(key: string): Promise<void>;
  head(key: string): Promise<unknown>;
};

export type WorkerTarget = {
  url: string;
  mf: Miniflare;
  bucket: () => Promise<LocalBucket>;
  /** Copies a snapshot folder into the target's storage under `snapshot/`, the manifest last (the publish order). */
  publish: (snapshotDir: string, options?: { manifest?: boolean }) => Promise<void>;
  close: () => Promise<void>;
};

let bundled: Promise<string> | undefined;
const workerCode = () => (bundled ??= bundleWorker({ minify: false }).then((b) => b.code));

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(relative(dir, join(entry.parentPath, entry.name)));
  }
  return out.sort();
}

/**
 * The Worker under workerd (through Miniflare, from node_modules: no account, no network), on a free port.
 * `storage: 'r2'` binds a local R2 bucket and publishes the snapshot into it; `'assets'` serves a folder of static
 * assets holding the page (when `publicDir` is given) and the snapshot under `snapshot/`.
 */
export async function startWorker(options: {
  snapshotPath?: string;
  storage: 'r2' | 'assets';
  publicDir?: string;
  vars?: Record<string, string>;
  /** The assets folder to fill (default: a fresh temporary one). */
  assetsDir?: string;
  /** Serve `assetsDir` as it is, already filled by prepareAssets (the benchmark times the start apart from the copy). */
  assetsReady?: boolean;
  port?: number;
  /** Where workerd's V8 inspector listens (the benchmark reads the isolate's heap through it); none by default. */
  inspectorPort?: number;
}): Promise<WorkerTarget> {
  const script = await workerCode();
  // A folder made here goes when the Worker is closed; one the caller gave is the caller's.
  const madeDir = options.assetsDir === undefined;
  const assetsDir = options.assetsDir ?? (await mkdtemp(join(tmpdir(), 'device-510k-assets-')));
  if (options.storage === 'assets' && !options.assetsReady) {
    await prepareAssets({ snapshotPath: options.snapshotPath ?? null, publicDir: options.publicDir ?? null, out: assetsDir });
  }
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-09-01',
    host: '127.0.0.1',
    port: options.port ?? 0,
    ...(options.inspectorPort === undefined ? {} : { inspectorPort: options.inspectorPort }),
    bindings: options.vars ?? {},
    ...(options.storage === 'r2'
      ? { r2Buckets: ['SNAPSHOT_BUCKET'], r2Persist: false }
      : { assets: { directory: assetsDir, binding: 'ASSETS', routerConfig: { has_user_worker: true } } }),
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  const bucketOf = async () => (await mf.getR2Bucket('SNAPSHOT_BUCKET')) as unknown as LocalBucket;
  const publish = async (snapshotDir: string, { manifest = true } = {}) => {
    if (options.storage !== 'r2') throw new Error('publish() is for the R2 target; the assets are fixed at start');
    const bucket = await bucketOf();
    const dir = await realpath(snapshotDir);
    // As an ArrayBuffer: Miniflare's proxy does not take Node's Buffer.
    const put = async (rel: string) => {
      const bytes = await readFile(join(dir, rel));
      await bucket.put(`snapshot/${rel}`, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    };
    const files = (await filesUnder(dir)).filter((rel) => rel !== 'manifest.json');
    for (let i = 0; i < files.length; i += 16) await Promise.all(files.slice(i, i + 16).map(put));
    if (manifest) await put('manifest.json');
  };
  if (options.storage === 'r2' && options.snapshotPath) await publish(options.snapshotPath);
  const close = async () => {
    await mf.dispose();
    if (madeDir) await rm(assetsDir, { recursive: true, force: true });
  };
  return { url, mf, bucket: bucketOf, publish, close };
}
