/**
 * `npm start` runs the server from one JavaScript bundle of src/main.ts (dist/server/), made here with esbuild in
 * well under a second, rather than through the TypeScript loader: the loader runs module hooks on a thread of their
 * own, which costs every server process (and every worker of WORKERS=auto) about 50 MB of memory and transpiles the
 * sources at each start. Packages stay external (read from node_modules as usual); the build is not in it (a first
 * start runs build/cli.ts as a process of its own). Plain JavaScript, so that it runs before anything is compiled.
 *
 *   node build/server-bundle.mjs [--out DIR]
 */
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const USAGE = `Usage: node build/server-bundle.mjs [--out DIR]

Bundles src/main.ts into DIR/main.mjs (default dist/server), which npm start runs.`;

let values;
try {
  ({ values } = parseArgs({ options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }));
} catch (err) {
  // One line naming the mistake, as every command of the repository does (src/cli/args.ts, which this plain script
  // cannot import).
  console.error(`server-bundle: ${err.message.split('\n')[0].replace(/\. To specify a positional.*$/, '')} (see --help)`);
  process.exit(2);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
// The bundle must sit two folders below the repository, as src/server/*.ts does: paths are found from there.
const out = resolve(ROOT, values.out ?? 'dist/server');
if (resolve(out, '../..') !== ROOT) {
  console.error(`--out must be a folder two levels below the repository (like dist/server), got ${out}`);
  process.exit(2);
}

await rm(out, { recursive: true, force: true });
await build({
  entryPoints: { main: join(ROOT, 'src/main.ts') },
  outdir: out,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  outExtension: { '.js': '.mjs' },
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
});
