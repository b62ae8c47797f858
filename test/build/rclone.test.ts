import { execFile, spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join, relative, sep } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { startS3, type S3Server } from '../helpers/s3-server.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * docs/deploy.md's rclone configuration for an object store behind a CDN, run as written against a local
 * S3-compatible server (s3rver, in a process of its own on a loopback port): every object read back over plain HTTP with its headers. rclone
 * is Debian's `rclone` package, not an npm dependency: without it on PATH the test is skipped, saying so.
 */
const run = promisify(execFile);
const rclone = spawnSync('rclone', ['version'], { encoding: 'utf8' });
const skip = rclone.status === 0 ? null : 'rclone is not installed (Debian: apt-get install -y rclone)';
if (skip) console.warn(`test/build/rclone.test.ts skipped: ${skip}`);

/**
 * The examples the docs give, found by the markers that name this test: the bucket behind a CDN (the marker ends at
 * "local S3 server"), and the Worker's bucket (the marker says "the Worker's bucket").
 */
async function documentedCommands(which: 'cdn' | 'worker'): Promise<string> {
  const text = await readFile(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
  const tail = which === 'cdn' ? 'local S3 server\\)' : "local S3 server: the Worker's bucket\\)";
  const m = new RegExp(`<!-- example: not run: [^\\n]*test/build/rclone\\.test\\.ts runs it against a ${tail} -->\\n\`\`\`bash\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (!m) throw new Error(`docs/deploy.md has no rclone example (${which}) naming test/build/rclone.test.ts`);
  return m[1]!;
}

/** rclone's settings for the remotes the docs name (`remote:` and `r2:`), both the local server at `port`. */
function rcloneEnv(work: string, port: number): NodeJS.ProcessEnv {
  const remote = (name: string) => ({
    [`RCLONE_CONFIG_${name}_TYPE`]: 's3',
    [`RCLONE_CONFIG_${name}_PROVIDER`]: 'Other',
    [`RCLONE_CONFIG_${name}_ENDPOINT`]: `http://127.0.0.1:${port}`,
    [`RCLONE_CONFIG_${name}_ACCESS_KEY_ID`]: 'S3RVER',
    [`RCLONE_CONFIG_${name}_SECRET_ACCESS_KEY`]: 'S3RVER',
    [`RCLONE_CONFIG_${name}_REGION`]: 'us-east-1',
    [`RCLONE_CONFIG_${name}_FORCE_PATH_STYLE`]: 'true',
  });
  // Only these remotes' settings: an AWS_CA_BUNDLE or other AWS_ setting of the machine is not the local server's.
  return {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && !k.startsWith('RCLONE_'))),
    RCLONE_CONFIG: join(work, 'rclone.conf'),
    // rclone's own account of what it sent: one "Copied" line per file it put up (see copiedOnce).
    RCLONE_LOG_LEVEL: 'INFO',
    ...remote('REMOTE'),
    ...remote('R2'),
  };
}

/**
 * Checks that rclone sent each key once, by its own log: one "Copied" line per key. The server may still have stored a
 * key twice when rclone's HTTP client retried a request whose first answer was lost under load (a low-level retry,
 * not a second copy): that is the transport's business, and the store's final bytes are what the other checks read.
 * When a command's first attempt failed under load and a later one succeeded ("Attempt 2/3 succeeded", rclone's
 * `--retries`), that attempt copies again what the failed one left unsure: then there are at least as many copies as
 * keys, and at most as many as the attempts allow (the store's listing, checked by the caller, has each key once).
 */
function copiedOnce(log: string, keys: Set<string>): void {
  const lines = log.split('\n');
  const copied = lines.filter((line) => / INFO {2}: .*: Copied \((new|replaced existing)\)$/.test(line));
  const attempts = Math.max(1, ...lines.map((line) => Number(/ Attempt (\d+)\/\d+ succeeded/.exec(line)?.[1] ?? 1)));
  const context = `rclone's log:\n${log.slice(-4000)}`;
  if (attempts === 1) {
    expect(copied, context).toHaveLength(keys.size);
    return;
  }
  expect(copied.length, context).toBeGreaterThanOrEqual(keys.size);
  expect(copied.length, context).toBeLessThanOrEqual(keys.size * attempts);
}

/** The local S3 server with one bucket, `bucket`, and an empty rclone configuration beside it. */
async function startBucket(work: string): Promise<S3Server> {
  const s3 = await startS3(join(work, 's3'), 'bucket');
  await writeFile(join(work, 'rclone.conf'), '');
  return s3;
}

/** Runs the docs' commands (`which`) in `work` against the local server at `port`; returns rclone's log. */
async function runDocumented(which: 'cdn' | 'worker', work: string, port: number): Promise<string> {
  const script = await documentedCommands(which);
  const env = rcloneEnv(work, port);
  const { stderr } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, env, timeout: 240_000, maxBuffer: 64 << 20 });
  return stderr;
}

const fetchFrom = (port: number, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> =>
  new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: `/bucket/${path}` }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/')).sort();
}

describe.skipIf(skip !== null)("docs/deploy.md's rclone configuration, against a local S3 server", () => {
  let work: string;
  let snapshotDir: string;
  let s3: S3Server;
  let port: number;
  let log = '';
  const fetchRaw = (path: string) => fetchFrom(port, path);

  beforeAll(async () => {
    snapshotDir = await realpath(await buildFixtureSnapshot());
    work = await testTempDir('rclone-');
    // The repository's folder as the docs' commands expect it: the `snapshot` link and the page with its gzip copies.
    await symlink(snapshotDir, join(work, 'snapshot'));
    await mkdir(join(work, 'public', 'js'), { recursive: true });
    const html = `<!doctype html><title>t</title>${'<p>x</p>'.repeat(400)}`;
    await writeFile(join(work, 'public', 'index.html'), html);
    await writeFile(join(work, 'public', 'index.html.gz'), gzipSync(html));
    await writeFile(join(work, 'public', 'js', 'app.js'), 'export const a = 1;\n');
    await writeFile(join(work, 'public', 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
    s3 = await startBucket(work);
    port = s3.port;
    log = await runDocumented('cdn', work, port);
  }, 300_000);

  afterAll(async () => {
    await s3?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('puts every file of the snapshot up: compressed where it has a gzip copy, the chunks for a year, the rest revalidated', async () => {
    const manifest = JSON.parse(await readFile(join(snapshotDir, 'manifest.json'), 'utf8')) as { files: { path: string }[] };
    const onDisk = new Set(await filesUnder(snapshotDir));
    let compressed = 0;
    for (const { path } of manifest.files) {
      const got = await fetchRaw(`snapshot/${path}`);
      const bytes = await readFile(join(snapshotDir, path));
      expect(got.status, path).toBe(200);
      if (path.startsWith('search/chunks/')) {
        expect(got.headers['cache-control'], path).toBe('public, max-age=31536000, immutable');
        expect(got.headers['content-encoding'], path).toBeUndefined();
        expect(got.body.equals(bytes), path).toBe(true);
      } else if (onDisk.has(`${path}.gz`)) {
        expect(got.headers['content-encoding'], path).toBe('gzip');
        expect(got.headers['cache-control'], path).toBe('public, no-cache');
        expect(gunzipSync(got.body).equals(bytes), path).toBe(true);
        compressed++;
      } else {
        expect(got.headers['content-encoding'], path).toBeUndefined();
        expect(got.headers['cache-control'], path).toBe('public, no-cache');
        expect(got.body.equals(bytes), path).toBe(true);
      }
      if (path.endsWith('.json')) expect(String(got.headers['content-type']), path).toMatch(/^application\/json/);
    }
    expect(compressed).toBeGreaterThan(10);
    // Every object is a file of the snapshot's folder under its own name (the .gz and .br copies too, which a
    // mirror may read), or of the page without its copies; each once.
    await s3.sync();
    const keys = new Set(s3.created);
    copiedOnce(log, keys);
    expect([...keys].sort()).toEqual([...[...onDisk].map((p) => `snapshot/${p}`), 'index.html', 'js/app.js', 'icon.png'].sort());
  });

  it('puts the manifest up last, and the page with its gzip copies as Content-Encoding', async () => {
    await s3.sync();
    expect(s3.created.at(-1)).toBe('snapshot/manifest.json');
    const manifest = await fetchRaw('snapshot/manifest.json');
    expect(manifest.body.equals(await readFile(join(snapshotDir, 'manifest.json')))).toBe(true);
    const html = await fetchRaw('index.html');
    expect(html.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(html.body).toString()).toBe(await readFile(join(work, 'public', 'index.html'), 'utf8'));
    const icon = await fetchRaw('icon.png');
    expect(icon.headers['content-encoding']).toBeUndefined();
    expect(icon.body.equals(await readFile(join(work, 'public', 'icon.png')))).toBe(true);
  });
});

describe.skipIf(skip !== null)("docs/deploy.md's rclone commands for the Worker's R2 bucket, against a local S3 server", () => {
  let work: string;
  let snapshotDir: string;
  let s3: S3Server;
  let port: number;
  let log = '';

  beforeAll(async () => {
    snapshotDir = await realpath(await buildFixtureSnapshot());
    work = await testTempDir('rclone-r2-');
    await symlink(snapshotDir, join(work, 'snapshot'));
    s3 = await startBucket(work);
    port = s3.port;
    log = await runDocumented('worker', work, port);
  }, 300_000);

  afterAll(async () => {
    await s3?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('stores every file of the snapshot as it is (the bytes the Worker reads), each once, the manifest last', async () => {
    const onDisk = await filesUnder(snapshotDir);
    const manifest = JSON.parse(await readFile(join(snapshotDir, 'manifest.json'), 'utf8')) as { files: { path: string }[] };
    for (const path of [...manifest.files.map((f) => f.path), 'manifest.json']) {
      const got = await fetchFrom(port, `snapshot/${path}`);
      expect(got.status, path).toBe(200);
      expect(got.headers['content-encoding'], path).toBeUndefined();
      expect(got.body.equals(await readFile(join(snapshotDir, path))), path).toBe(true);
    }
    await s3.sync();
    const { created } = s3;
    const keys = new Set(created);
    copiedOnce(log, keys);
    expect([...keys].sort()).toEqual(onDisk.map((p) => `snapshot/${p}`).sort());
    expect(created.at(-1)).toBe('snapshot/manifest.json');
  });
});
