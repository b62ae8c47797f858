import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

export const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker/index.ts', import.meta.url));

export type WorkerBundle = { code: string; bytes: number; gzipBytes: number; imports: string[] };

/**
 * The Worker as one ES module, the way wrangler bundles it (esbuild, the workerd/worker/browser export conditions),
 * without wrangler: the tests and the bench start workerd over it. `imports` lists what the bundle still imports
 * (nothing, for a Worker that needs no Node compatibility).
 */
export async function bundleWorker(options: { minify?: boolean } = {}): Promise<WorkerBundle> {
  const result = await build({
    entryPoints: [WORKER_ENTRY],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    minify: options.minify ?? true,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.text ?? '';
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code, { level: 9 }).length, imports };
}
