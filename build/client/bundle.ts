import { build, type Plugin } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandLine } from '../../src/cli/args.ts';
import { clientDeclarations } from './types.ts';

const USAGE = `Usage: npm run build:client

Builds the client package (packages/client, published as device-510k-client) from src/client/index.ts:
packages/client/dist/index.js (one ES module, zod included, nothing imported) and its types, index.d.ts and
types.d.ts (plain types: a project that installs the client needs no other package). \`npm pack ./packages/client\`
runs this first.`;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const CLIENT_ENTRY = join(ROOT, 'src/client/index.ts');
export const CLIENT_DIST = join(ROOT, 'packages/client/dist');

/**
 * zod exports its error messages in every language as `locales`; the client uses only English (zod's default, which
 * zod imports by its own path), so the namespace of all of them is replaced by an empty one: a third of the bundle.
 */
const englishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]/.test(args.importer) ? { path: 'zod-locales', namespace: 'zod-english-only' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, () => ({ contents: 'export {};', loader: 'js' }));
  },
};

/** The client as one ES module for any runtime with fetch: no Node module, no package imported at run time. */
export async function bundleClient(options: { minify?: boolean } = {}): Promise<{ code: string; imports: string[] }> {
  const result = await build({
    entryPoints: [CLIENT_ENTRY],
    bundle: true,
    format: 'esm',
    // Neutral: a Node built-in (node:*) anywhere in the client's imports fails the build instead of being kept.
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    minify: options.minify ?? true,
    legalComments: 'eof',
    write: false,
    metafile: true,
    logLevel: 'silent',
    plugins: [englishOnly],
  });
  const code = result.outputFiles[0]?.text ?? '';
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  return { code, imports };
}

export async function buildClient(out = CLIENT_DIST): Promise<string[]> {
  const { code, imports } = await bundleClient();
  const declarations = await clientDeclarations(CLIENT_ENTRY);
  if (imports.length > 0) throw new Error(`the client bundle must import nothing, but it imports ${imports.join(', ')}`);
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const files = { 'index.js': code, ...declarations };
  for (const [name, text] of Object.entries(files)) await writeFile(join(out, name), text);
  return Object.keys(files).map((name) => join(out, name));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  parseCommandLine('build:client', USAGE, {});
  for (const file of await buildClient()) console.log(`wrote ${file}`);
}
