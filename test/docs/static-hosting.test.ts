import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNginx } from '../../bench/lib/nginx.ts';
import { documentedConfig, startDocumentedNginx } from '../../bench/lib/static-hosting.ts';
import { freePort, stop, waitForHttp } from '../../bench/lib/procs.ts';
import { writePageCopies } from '../../build/page/copies.ts';
import { prepareAssets } from '../../build/worker/assets.ts';
import { Manifest } from '../../src/contract/index.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };

/** A GET whose body is kept as sent (fetch would decode it). */
function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((done, fail) => {
    request(url, { headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', fail);
    })
      .on('error', fail)
      .end();
  });
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true, recursive: true }))
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

let work: string;
let snapshot: string;
let site: string;
let manifest: Manifest;

beforeAll(async () => {
  work = await testTempDir('device-510k-static-');
  snapshot = await realpath((await buildFixture({ out: join(work, 'snapshot') })).out);
  manifest = Manifest.parse(JSON.parse(await readFile(join(snapshot, 'manifest.json'), 'utf8')));
  // The page as a static host gets it: public/ with the copies the build writes (into a copy, not the repository).
  site = join(work, 'public');
  await cp(join(ROOT, 'public'), site, { recursive: true, filter: (src) => !/\.(br|gz)$/.test(src) });
  await writePageCopies(site);
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the precompressed copies a build writes', () => {
  it('every record shard and lineage shard has a gzip copy beside it that undoes to it, and the manifest lists none of them', async () => {
    const listed = new Set(manifest.files.map((f) => f.path));
    const shards = manifest.files.filter((f) => /^records\/K[^/]*\.json$|^lineage\/(predicates|descendants)\/[^/]*\.bin$/.test(f.path));
    expect(shards.filter((f) => f.path.startsWith('records/')).length).toBeGreaterThan(3);
    expect(shards.filter((f) => f.path.startsWith('lineage/')).length).toBeGreaterThan(3);
    for (const shard of shards) {
      const copy = await readFile(join(snapshot, `${shard.path}.gz`));
      expect(gunzipSync(copy).equals(await readFile(join(snapshot, shard.path)))).toBe(true);
      // No time in the gzip header: the same shard gives the same copy.
      expect([...copy.subarray(4, 8)]).toEqual([0, 0, 0, 0]);
      expect(listed.has(`${shard.path}.gz`)).toBe(false);
    }
    const onDisk = await filesUnder(snapshot);
    const unlisted = onDisk.filter((f) => !listed.has(f) && f !== 'manifest.json');
    expect(unlisted.filter((f) => !/^records\/K[^/]*\.json\.gz$|^lineage\/(predicates|descendants)\/[^/]*\.bin\.gz$/.test(f))).toEqual([]);
  });

  it("public/'s scripts, styles and page get .gz and .br copies; a stale copy is removed", async () => {
    const files = await filesUnder(site);
    for (const page of ['index.html', 'js/app.js', 'styles.css']) {
      for (const suffix of ['.gz', '.br']) expect(files, `${page}${suffix}`).toContain(`${page}${suffix}`);
      expect(gunzipSync(await readFile(join(site, `${page}.gz`))).equals(await readFile(join(site, page)))).toBe(true);
    }
    const dir = await mkdtemp(join(work, 'page-'));
    await writeFile(join(dir, 'gone.js.gz'), 'stale');
    await writeFile(join(dir, 'a.js'), 'x'.repeat(5000));
    await writeFile(join(dir, 'a.js.gz'), 'stale');
    expect(await writePageCopies(dir)).toEqual(['a.js.br', 'a.js.gz']);
    expect(await filesUnder(dir)).toEqual(['a.js', 'a.js.br', 'a.js.gz']);
    expect(gunzipSync(await readFile(join(dir, 'a.js.gz'))).toString()).toBe('x'.repeat(5000));
  });

  it("the Worker's assets leave the host copies out", async () => {
    const out = await prepareAssets({ snapshotPath: snapshot, publicDir: site, out: join(work, 'assets') });
    const files = await filesUnder(out);
    expect(files.filter((f) => /^snapshot\/records\/K[^/]*\.json\.gz$/.test(f))).toEqual([]);
    expect(files.filter((f) => !f.startsWith('snapshot/') && /\.(br|gz)$/.test(f))).toEqual([]);
    // Every listed file but the bulk downloads (which the Worker's assets leave out too), and the manifest.
    const listed = manifest.files.filter((f) => !f.path.startsWith('downloads/'));
    expect(files.filter((f) => f.startsWith('snapshot/')).length).toBe(listed.length + 1);
  });
});

/** A host started on a free port with the configuration docs/deploy.md shows, its paths and port put in. */
type Host = { url: string; alive: () => boolean; close: () => Promise<void> };

const hosts: Record<string, { binary: () => Promise<string | null>; start: (binary: string) => Promise<Host> }> = {
  nginx: {
    binary: findNginx,
    async start() {
      const nginx = await startDocumentedNginx(snapshot, site);
      return { url: nginx.url, alive: () => true, close: nginx.close };
    },
  },
  caddy: {
    binary: async () => (existsSync('/usr/bin/caddy') ? '/usr/bin/caddy' : null),
    async start(binary) {
      const dir = await mkdtemp(join(work, 'caddy-'));
      const port = await freePort();
      const site = documentedConfig('caddy')
        .replaceAll('/srv/device-510k/public', join(work, 'public'))
        .replaceAll('/srv/device-510k/snapshot', snapshot)
        .replace(/^:80 \{/m, `http://127.0.0.1:${port} {`);
      await writeFile(join(dir, 'Caddyfile'), `{\n  admin off\n  auto_https off\n  storage file_system ${dir}/data\n}\n${site}\n`);
      await mkdir(join(dir, 'home'), { recursive: true });
      const child = spawn(binary, ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
        stdio: 'ignore',
        env: { ...process.env, HOME: join(dir, 'home'), XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') },
      });
      return { url: `http://127.0.0.1:${port}`, alive: () => child.exitCode === null, close: () => stop(child, 3000) };
    },
  },
};

describe.each(Object.keys(hosts))('%s with the configuration docs/deploy.md shows', (name) => {
  let host: Host | null = null;
  let missing: string | null = null;

  beforeAll(async () => {
    const binary = await hosts[name]!.binary();
    // In CI nginx is installed (.ci/browser-deps.sh); Caddy when it can be. A missing host is said, not hidden.
    if (!binary) {
      missing = `${name} is not installed`;
      if (process.env.CI && name === 'nginx') throw new Error(missing);
      console.warn(`skipping the ${name} checks: ${missing}`);
      return;
    }
    host = await hosts[name]!.start(binary);
    await waitForHttp(`${host.url}/index.html`, 200, 15_000, host.alive);
  }, 60_000);
  afterAll(async () => {
    await host?.close();
  });

  it('sends the page, the record shards and the JSON the page reads as their gzip copies to a client that takes gzip, whole to one that does not', async (ctx) => {
    if (!host) return ctx.skip(missing ?? undefined);
    const shard = manifest.files.find((f) => /^records\/K[^/]*\.json$/.test(f.path))!.path;
    const json = ['meta.json', 'search/chunks.json', shard].filter((p) => existsSync(join(snapshot, `${p}.gz`)));
    expect(json).toContain(shard);
    expect(json.length).toBeGreaterThan(1);
    const cases = [
      ...['index.html', 'js/app.js', 'styles.css'].map((p) => ({ url: `/${p}`, file: join(site, p) })),
      ...json.map((p) => ({ url: `/snapshot/${p}`, file: join(snapshot, p) })),
    ];
    for (const { url, file } of cases) {
      const plain = await readFile(file);
      const zipped = await get(`${host.url}${url}`, { 'Accept-Encoding': 'gzip' });
      expect(zipped.status, url).toBe(200);
      expect(zipped.headers['content-encoding'], url).toBe('gzip');
      expect(zipped.body.equals(await readFile(`${file}.gz`)), `${url}: the copy as written`).toBe(true);
      expect(gunzipSync(zipped.body).equals(plain), url).toBe(true);
      expect(String(zipped.headers.vary), url).toMatch(/Accept-Encoding/i);
      expect(zipped.headers['access-control-allow-origin'], url).toBe('*');
      expect(zipped.headers['cache-control'], url).toBe('public, no-cache');
      if (url.endsWith('.json')) expect(zipped.headers['content-type'], url).toMatch(/^application\/json; ?charset=utf-8$/i);
      const whole = await get(`${host.url}${url}`);
      expect(whole.headers['content-encoding'], url).toBeUndefined();
      expect(whole.body.equals(plain), url).toBe(true);
    }
  });

  it("sends the chunked index's files as they are (gzip bytes), cached for a year", async (ctx) => {
    if (!host) return ctx.skip(missing ?? undefined);
    const chunk = manifest.files.find((f) => f.path.startsWith('search/chunks/') && f.path.endsWith('.bin.gz'));
    expect(chunk).toBeDefined();
    const got = await get(`${host.url}/snapshot/${chunk!.path}`, { 'Accept-Encoding': 'gzip' });
    expect(got.status).toBe(200);
    expect(got.body.equals(await readFile(join(snapshot, chunk!.path)))).toBe(true);
    expect(got.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(got.headers['access-control-allow-origin']).toBe('*');
  });
});
