import { cp, mkdtemp, readdir, readFile, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Miniflare } from 'miniflare';
import { bundleWorker } from '../../build/worker/bundle.ts';

export type WorkerTarget = {
  url: string;
  mf: Miniflare;
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
}): Promise<WorkerTarget> {
  const script = await workerCode();
  const assetsDir = await mkdtemp(join(tmpdir(), 'device-510k-assets-'));
  if (options.storage === 'assets') {
    if (options.publicDir) await cp(options.publicDir, assetsDir, { recursive: true });
    if (options.snapshotPath) await cp(await realpath(options.snapshotPath), join(assetsDir, 'snapshot'), { recursive: true });
  }
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: '2025-09-01',
    host: '127.0.0.1',
    port: 0,
    bindings: options.vars ?? {},
    ...(options.storage === 'r2'
      ? { r2Buckets: ['SNAPSHOT_BUCKET'], r2Persist: false }
      : { assets: { directory: assetsDir, binding: 'ASSETS', routerConfig: { has_user_worker: true } } }),
  });
  const url = (await mf.ready).toString().replace(/\/$/, '');
  const publish = async (snapshotDir: string, { manifest = true } = {}) => {
    if (options.storage !== 'r2') throw new Error('publish() is for the R2 target; the assets are fixed at start');
    const bucket = await mf.getR2Bucket('SNAPSHOT_BUCKET');
    const dir = await realpath(snapshotDir);
    // As an ArrayBuffer: Miniflare's proxy does not take Node's Buffer.
    const put = async (rel: string) => {
      const bytes = await readFile(join(dir, rel));
      await bucket.put(`snapshot/${rel}`, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    };
    for (const rel of await filesUnder(dir)) if (rel !== 'manifest.json') await put(rel);
    if (manifest) await put('manifest.json');
  };
  if (options.storage === 'r2' && options.snapshotPath) await publish(options.snapshotPath);
  return { url, mf, publish, close: () => mf.dispose() };
}
