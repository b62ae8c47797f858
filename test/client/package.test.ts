import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords, startServer, type Running } from '../server/helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The client as another project gets it: `npm pack` of packages/client, the tarball installed offline into a scratch
 * project, the package README's example run with plain node against the real server, and a consumer type-checked
 * with the repository's TypeScript against the installed declarations only.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PACKAGE = join(ROOT, 'packages/client');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

type Ran = { code: number; stdout: string; stderr: string };
function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<Ran> {
  return new Promise((done) => {
    execFile(file, args, { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}
// npm itself runs on the node that runs the tests (the Node-24 pass of .ci/run puts that node first on PATH).
const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-update-notifier'], cwd, { npm_config_loglevel: 'error' });

let work: string;
let scratch: string;
let tarball: string;
let server: Running;
let snapshotPath: string;

beforeAll(async () => {
  work = await testTempDir('device-510k-client-');
  scratch = join(work, 'app');
  await mkdir(scratch);
  const packed = await npm(['pack', PACKAGE, '--pack-destination', work], ROOT);
  expect(packed, 'npm pack').toMatchObject({ code: 0 });
  const { name, version } = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8')) as { name: string; version: string };
  tarball = join(work, `${name}-${version}.tgz`);
  await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  const installed = await npm(['install', '--offline', '--no-audit', '--no-fund', tarball], scratch);
  expect(installed, 'npm install of the tarball').toMatchObject({ code: 0 });
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
}, 180_000);
afterAll(async () => {
  await server?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the client package', () => {
  it('holds only the module, its types, the README and package.json, and depends on nothing', async () => {
    const list = await run('tar', ['-tzf', tarball], work);
    expect(list.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'package/README.md',
      'package/dist/index.d.ts',
      'package/dist/index.js',
      'package/dist/types.d.ts',
      'package/package.json',
    ]);
    expect((await stat(tarball)).size).toBeLessThan(100_000);
    const manifest = JSON.parse(await readFile(join(scratch, 'node_modules/device-510k-client/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
    const module = await readFile(join(scratch, 'node_modules/device-510k-client/dist/index.js'), 'utf8');
    expect(module).not.toMatch(/\bfrom\s*["'](?:node:|zod)|\bimport\s*\(\s*["']|\brequire\s*\(/);
  });

  it("runs the README's example with plain node", async () => {
    const readme = await readFile(join(PACKAGE, 'README.md'), 'utf8');
    const example = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example?.split('\n').filter(Boolean).length).toBeLessThanOrEqual(10);
    await writeFile(join(scratch, 'example.mjs'), (example ?? '').replace('http://127.0.0.1:8080', server.url));
    const ran = await run(process.execPath, ['example.mjs'], scratch);
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
    // Expected from the snapshot's record shards, not from the server.
    const records = await allRecords(snapshotPath);
    const detail = records.find((r) => r.kNumber === 'K802527');
    const firstTwo = records.map((r) => r.kNumber).sort().slice(0, 2);
    expect(ran.stdout.trim().split('\n')).toEqual([`K802527 ${detail?.deviceName}`, ...firstTwo.map((k) => `clearance ${k}`)]);
  }, 60_000);

  const CONSUMER = `import { createClient, QueryError, type CatalogItem, type ClearanceRecord } from 'device-510k-client';

const client = createClient({ baseUrl: 'http://127.0.0.1:8080' });

/** A catalog of either kind: the items are a union that item.kind narrows. */
export async function names(kind: 'clearance' | 'product-code'): Promise<string[]> {
  const page = await client.query('device-510k.catalog', { kind, limit: 10, cursor: null });
  return page.data.items.map((item) => (item.kind === 'clearance' ? item.kNumber : item.productCode));
}

/** A catalog of one kind: its items need no narrowing. */
export async function firstClearance(): Promise<ClearanceRecord | undefined> {
  const page = await client.query('device-510k.catalog', { kind: 'clearance', limit: 1, cursor: null });
  return page.data.items[0];
}

export async function detail(): Promise<string> {
  const answer = await client.query('device-510k.detail', { id: 'K802527' });
  // @ts-expect-error a detail answer has no page
  void answer.page;
  return answer.data.record.kNumber;
}

// @ts-expect-error an item not narrowed may be a product-code entry, which has no kNumber
export const unnarrowed = (item: CatalogItem): string => item.kNumber;

// @ts-expect-error top-product-codes takes a limit
void client.query('device-510k.top-product-codes', { count: 3 });

export const isQueryError = (err: unknown): string | null => (err instanceof QueryError ? err.code : null);
`;

  it.each([
    ['Node (NodeNext)', { module: 'nodenext', moduleResolution: 'nodenext' }],
    ['a bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ])('type-checks a consumer that reads item.kNumber after narrowing, resolved as %s', async (_name, resolution) => {
    await writeFile(join(scratch, 'consumer.ts'), CONSUMER);
    const config = {
      compilerOptions: { ...resolution, target: 'es2022', lib: ['es2022', 'dom'], types: [], strict: true, noEmit: true, skipLibCheck: false, skipDefaultLibCheck: true },
      files: ['consumer.ts'],
    };
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify(config));
    const checked = await run(process.execPath, [TSC, '-p', 'tsconfig.json'], scratch);
    expect(checked.stdout + checked.stderr).toBe('');
    expect(checked.code).toBe(0);
  }, 60_000);

  it('bundles for the browser with no Node module and no package left to import', async () => {
    await writeFile(join(scratch, 'page.js'), `import { createClient } from 'device-510k-client';\nglobalThis.client = createClient({ baseUrl: location.origin });\n`);
    const result = await build({
      absWorkingDir: scratch,
      entryPoints: ['page.js'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
    expect(imports).toEqual([]);
  });
});
