import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMirror } from '../../build/mirror/run.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { startS3, type S3Server } from '../helpers/s3-server.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * `npm run publish-snapshot` against a local S3-compatible server (s3rver, in a process of its own on a loopback port) and to a
 * folder: every object and its metadata read back over plain HTTP and checked against the snapshot's own files, the
 * manifest sent after every file it lists, a second run that sends nothing again, pruning, and a damaged snapshot
 * refused before anything is sent.
 */
const run = promisify(execFile);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const TEXT = /\.(json|m?js|css|html?|txt|svg)$/;

let snapshot: string;
let snapshotDir: string;
let manifest: { snapshotId: string; files: { path: string; bytes: number; sha256: string }[] };
let page: string;
let work: string;
let s3: S3Server;
let port: number;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/')).sort();
}

/** GET over plain node:http: the bytes as stored (nothing inflated) and the headers. */
function fetchRaw(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function publishCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'build/upload.ts', ...args], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const toBucket = (extra: string[] = []) => publishCli(['--to', 's3://site/pub', '--endpoint', `http://127.0.0.1:${port}`, '--snapshot', snapshot, '--page', page, ...extra]);

beforeAll(async () => {
  snapshot = await buildFixtureSnapshot();
  snapshotDir = await realpath(snapshot);
  manifest = JSON.parse(await readFile(join(snapshotDir, 'manifest.json'), 'utf8'));
  work = await testTempDir('publish-');
  // A page folder as a build leaves it: files, and gzip copies beside the text ones.
  page = join(work, 'public');
  await mkdir(join(page, 'js'), { recursive: true });
  const html = `<!doctype html><title>t</title>${'<p>x</p>'.repeat(400)}`;
  const js = `export const a = ${JSON.stringify('y'.repeat(3000))};\n`;
  await writeFile(join(page, 'index.html'), html);
  await writeFile(join(page, 'index.html.gz'), gzipSync(html));
  await writeFile(join(page, 'js', 'app.js'), js);
  await writeFile(join(page, 'js', 'app.js.gz'), gzipSync(js));
  await writeFile(join(page, 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
  s3 = await startS3(join(work, 's3'), 'site');
  port = s3.port;
}, 180_000);

afterAll(async () => {
  await s3?.close();
  await rm(work, { recursive: true, force: true });
});

describe('publish-snapshot to an S3-compatible bucket', () => {
  it('sends every file with its type, caching and encoding, the manifest after every file it lists, then the page', async () => {
    const result = await toBucket();
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`published snapshot ${manifest.snapshotId}`);
    await s3.sync();
    const { created } = s3;
    const keys = new Set(created);
    const expected = [...manifest.files.map((f) => `pub/snapshot/${f.path}`), 'pub/snapshot/manifest.json', 'pub/index.html', 'pub/js/app.js', 'pub/icon.png'];
    expect([...keys].sort()).toEqual([...expected].sort());
    expect(created).toHaveLength(expected.length);
    // The manifest after every file it lists, the page after the manifest.
    const at = created.indexOf('pub/snapshot/manifest.json');
    expect(at).toBe(manifest.files.length);
    expect(created.slice(at + 1).sort()).toEqual(['pub/icon.png', 'pub/index.html', 'pub/js/app.js']);

    let encoded = 0;
    for (const f of manifest.files) {
      const got = await fetchRaw(`/site/pub/snapshot/${f.path}`);
      expect(got.status, f.path).toBe(200);
      const copy = await readFile(join(snapshotDir, `${f.path}.gz`)).catch(() => null);
      if (TEXT.test(f.path) && copy) {
        // The gzip copy under the file's own name: what a browser inflates is the manifest's bytes.
        expect(got.headers['content-encoding'], f.path).toBe('gzip');
        expect(got.body.equals(copy), f.path).toBe(true);
        expect(sha256(gunzipSync(got.body)), f.path).toBe(f.sha256);
        encoded++;
      } else {
        expect(got.headers['content-encoding'], f.path).toBeUndefined();
        expect(sha256(got.body), f.path).toBe(f.sha256);
      }
      if (f.path.endsWith('.json')) expect(got.headers['content-type'], f.path).toBe('application/json; charset=utf-8');
      expect(got.headers['cache-control'], f.path).toBe(f.path.startsWith('search/chunks/') ? 'public, max-age=31536000, immutable' : 'public, no-cache');
    }
    // Record shards have host copies, meta.json a sibling: both kinds are sent encoded.
    expect(encoded).toBeGreaterThan(10);
    expect(manifest.files.some((f) => /^records\/K.*\.json$/.test(f.path))).toBe(true);
    const record = manifest.files.find((f) => /^records\/K.*\.json$/.test(f.path))!;
    expect((await fetchRaw(`/site/pub/snapshot/${record.path}`)).headers['content-encoding']).toBe('gzip');

    const manifestObject = await fetchRaw('/site/pub/snapshot/manifest.json');
    expect(manifestObject.body.equals(await readFile(join(snapshotDir, 'manifest.json')))).toBe(true);
    const html = await fetchRaw('/site/pub/index.html');
    expect(html.headers['content-encoding']).toBe('gzip');
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(gunzipSync(html.body).equals(await readFile(join(page, 'index.html')))).toBe(true);
    const png = await fetchRaw('/site/pub/icon.png');
    expect(png.headers['content-encoding']).toBeUndefined();
    expect(png.body.equals(await readFile(join(page, 'icon.png')))).toBe(true);
  }, 180_000);

  it('a mirror of the bucket gets every file and verifies it against the manifest', async () => {
    const to = join(work, 'mirror', 'snapshot');
    await mkdir(join(work, 'mirror'), { recursive: true });
    const result = await runMirror({ from: `http://127.0.0.1:${port}/site/pub/snapshot`, to, retries: 0 });
    expect(result.snapshotId).toBe(manifest.snapshotId);
    for (const f of manifest.files) expect(sha256(await readFile(join(to, f.path))), f.path).toBe(f.sha256);
  }, 180_000);

  it('a second run sends none of the snapshot files again, only the manifest and the page', async () => {
    s3.created.length = 0;
    const result = await toBucket();
    expect(result.code, result.stderr).toBe(0);
    await s3.sync();
    const { created } = s3;
    expect(result.stdout).toContain(`${manifest.files.length.toLocaleString('en-US')} unchanged`);
    expect(created.sort()).toEqual(['pub/icon.png', 'pub/index.html', 'pub/js/app.js', 'pub/snapshot/manifest.json']);
  }, 180_000);

  it('--prune removes the snapshot files the manifest does not list, and nothing else', async () => {
    // More keys than one page of a listing (1,000): the listing is followed page by page.
    expect(manifest.files.length).toBeGreaterThan(1000);
    // An object under the prefix that the manifest does not list (a file of an older snapshot).
    const client = new S3Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await client.send(new PutObjectCommand({ Bucket: 'site', Key: 'pub/snapshot/records/K999.json', Body: '[]' }));
    expect((await fetchRaw('/site/pub/snapshot/records/K999.json')).status).toBe(200);
    const result = await toBucket(['--prune']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('1 pruned');
    expect((await fetchRaw('/site/pub/snapshot/records/K999.json')).status).toBe(404);
    expect((await fetchRaw('/site/pub/snapshot/manifest.json')).status).toBe(200);
    expect((await fetchRaw('/site/pub/index.html')).status).toBe(200);
  }, 180_000);
});

describe('publish-snapshot to a folder', () => {
  it('copies every file as it is with its copies beside it, the host copies checked, and a second run copies none again', async () => {
    const site = join(work, 'site');
    const first = await publishCli(['--to', site, '--snapshot', snapshot, '--page', page]);
    expect(first.code, first.stderr).toBe(0);
    for (const f of manifest.files) expect(sha256(await readFile(join(site, 'snapshot', f.path))), f.path).toBe(f.sha256);
    expect((await readFile(join(site, 'snapshot', 'manifest.json'))).equals(await readFile(join(snapshotDir, 'manifest.json')))).toBe(true);
    // Every host copy of the snapshot is there, inflating to its file.
    const copies = (await filesUnder(snapshotDir)).filter((p) => p.endsWith('.gz') && !manifest.files.some((f) => f.path === p));
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) expect(gunzipSync(await readFile(join(site, 'snapshot', c))).equals(await readFile(join(snapshotDir, c.slice(0, -3)))), c).toBe(true);
    expect(await filesUnder(site).then((all) => all.filter((p) => !p.startsWith('snapshot/')))).toEqual(['icon.png', 'index.html', 'index.html.gz', 'js/app.js', 'js/app.js.gz']);
    const again = await publishCli(['--to', site, '--snapshot', snapshot, '--page', page]);
    expect(again.code, again.stderr).toBe(0);
    // The manifest and the page's five files; every snapshot file (and host copy) unchanged.
    expect(again.stdout).toMatch(/: 6 files sent \([\d,]+ bytes\), [\d,]+ unchanged/);
    expect(Number(/([\d,]+) unchanged/.exec(again.stdout)![1]!.replace(/,/g, ''))).toBe(manifest.files.length + copies.length);
  }, 180_000);

  it('a snapshot whose file does not match its manifest is refused, naming the file, before anything is sent', async () => {
    const broken = join(work, 'broken');
    await cp(snapshotDir, broken, { recursive: true });
    const victim = manifest.files.find((f) => f.path === 'meta.json')!;
    const bytes = await readFile(join(broken, victim.path));
    bytes[10] = bytes[10] === 0x41 ? 0x42 : 0x41;
    await writeFile(join(broken, victim.path), bytes);
    const site = join(work, 'never');
    const result = await publishCli(['--to', site, '--snapshot', broken, '--page', 'none']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('meta.json does not have the sha256 the manifest lists');
    expect(await stat(site).catch(() => null)).toBeNull();
  }, 180_000);

  it('bad options are refused with one line and exit 2', async () => {
    for (const args of [['--to', 'ftp://host/x'], ['--to', 's3://Bad_Bucket/x'], ['--to', join(work, 'x'), '--endpoint', 'http://127.0.0.1:1'], ['--to', 's3://site/x', '--concurrency', '0'], []]) {
      const result = await publishCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  }, 180_000);
});

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe("docs/deploy.md's publish-snapshot commands, as written", () => {
  it('publish to an R2-style bucket (the local server in its place) and to a folder, every file checked', async () => {
    const text = await readFile(join(ROOT, 'docs/deploy.md'), 'utf8');
    const m = /<!-- example: not run: [^\n]*test\/build\/upload\.test\.ts[^\n]* -->\n```sh\n([\s\S]*?)\n```/.exec(text);
    if (!m) throw new Error('docs/deploy.md has no publish-snapshot example naming test/build/upload.test.ts');
    // Only the account's endpoint and the folder change: the local server stands in for R2.
    const folder = join(work, 'documented-site');
    const endpoint = 'https://ACCOUNT.r2.cloudflarestorage.com';
    expect(m[1]).toContain(endpoint);
    expect(m[1]).toContain('/srv/www/device-510k');
    const script = m[1]!.replaceAll(endpoint, `http://127.0.0.1:${port}`).replaceAll('/srv/www/device-510k', folder);
    // The repository's folder as the commands expect it: its scripts and code, and the `snapshot` link.
    const repo = join(work, 'repository');
    await mkdir(repo);
    for (const name of ['package.json', 'node_modules', 'build', 'src', 'public']) await symlink(join(ROOT, name), join(repo, name));
    await symlink(snapshotDir, join(repo, 'snapshot'));
    const client = new S3Client({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await client.send(new CreateBucketCommand({ Bucket: 'bucket' }));
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('npm_'))), AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: repo, env, timeout: 240_000 });

    const pageFiles = (await filesUnder(join(ROOT, 'public'))).filter((p) => !/\.(gz|br)$/.test(p));
    expect(pageFiles).toContain('index.html');
    for (const f of manifest.files) {
      const got = await fetchRaw(`/bucket/site/snapshot/${f.path}`);
      expect(got.status, f.path).toBe(200);
      const body = got.headers['content-encoding'] === 'gzip' ? gunzipSync(got.body) : got.body;
      expect(sha256(body), f.path).toBe(f.sha256);
      expect(sha256(await readFile(join(folder, 'snapshot', f.path))), f.path).toBe(f.sha256);
    }
    expect((await fetchRaw('/bucket/site/snapshot/manifest.json')).body.equals(await readFile(join(snapshotDir, 'manifest.json')))).toBe(true);
    expect((await readFile(join(folder, 'snapshot', 'manifest.json'))).equals(await readFile(join(snapshotDir, 'manifest.json')))).toBe(true);
    for (const p of pageFiles) {
      const got = await fetchRaw(`/bucket/site/${p}`);
      expect(got.status, p).toBe(200);
      const body = got.headers['content-encoding'] === 'gzip' ? gunzipSync(got.body) : got.body;
      expect(body.equals(await readFile(join(ROOT, 'public', p))), p).toBe(true);
      expect((await readFile(join(folder, p))).equals(await readFile(join(ROOT, 'public', p))), p).toBe(true);
    }
  }, 300_000);
});
