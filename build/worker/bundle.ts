import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker/index.ts', import.meta.url));
/** The repository's root: esbuild names the bundle's inputs relative to it. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `eager`: the bundle's inputs its entry reaches through static imports, evaluated when the isolate starts; the others
 * are reached only through `import()`, and evaluated when a request first needs them.
 */
export type WorkerBundle = { code: string; bytes: number; gzipBytes: number; imports: string[]; inputs: string[]; eager: string[] };

/**
 * The Worker as one ES module, the way wrangler bundles it (esbuild, the workerd/worker/browser export conditions),
 * without wrangler: the tests and the bench start workerd over it. `imports` lists what the bundle still imports
 * (nothing, for a Worker that needs no Node compatibility).
 */
export async function bundleWorker(options: { minify?: boolean } = {}): Promise<WorkerBundle> {
  const result = await build({
    entryPoints: [WORKER_ENTRY],
    absWorkingDir: ROOT,
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
  const inputs = result.metafile.inputs;
  const entry = Object.keys(inputs).find((path) => resolve(ROOT, path) === WORKER_ENTRY);
  const eager = new Set<string>();
  const walk = (path: string) => {
    if (eager.has(path) || !inputs[path]) return;
    eager.add(path);
    for (const i of inputs[path].imports) if (i.kind !== 'dynamic-import' && !i.external) walk(i.path);
  };
  if (entry) walk(entry);
  return { code, bytes: Buffer.byteLength(code), gzipBytes: gzipSync(code, { level: 9 }).length, imports, inputs: Object.keys(inputs), eager: [...eager] };
}
