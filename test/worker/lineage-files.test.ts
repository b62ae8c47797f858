import { createHash } from 'node:crypto';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, LINEAGE_DIRECTIONS, LINEAGE_INDEX_PATH, LineageIndex, Manifest, lineageClosurePath, lineageShardPath } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { rawRequest } from '../server/helpers.ts';
import { startNodeAndWorkers } from './hosts.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The lineage closure files (`lineage/closure/<direction>/<shard>.bin`) are files of the snapshot like any other: the
 * Node server, the Worker over R2 and the Worker over static assets each send the very bytes on disk for every one
 * the manifest lists, with the headers each host gives its other snapshot files, and 404 for one it does not list,
 * even when a file of that name lies in the snapshot's folder or bucket.
 */
type Host = { name: string; url: string };
let hosts: Host[];
let close: (() => Promise<void>) | undefined;
let dir: string;
let manifest: Manifest;
let index: LineageIndex;
/** A closure path the manifest does not list, with a real closure file's bytes at it in the folder and the bucket. */
let planted: string;

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const get = (url: string, path: string, headers: Record<string, string> = {}) => rawRequest(url, { path: `/snapshot/${path}`, headers });
/** The body as sent, decoded from the coding the host chose. */
const decoded = (res: { headers: Record<string, unknown>; body: Buffer }) =>
  res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body) : res.headers['content-encoding'] === 'br' ? brotliDecompressSync(res.body) : res.body;
/** What a browser sends for a file. */
const BROWSER = { 'accept-encoding': 'gzip, deflate, br' };

beforeAll(async () => {
  dir = join(await testTempDir('device-510k-lineage-files-'), 'snapshot');
  await cp(await buildFixtureSnapshot(), dir, { recursive: true, dereference: true });
  manifest = Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8')));
  index = LineageIndex.parse(JSON.parse(await readFile(join(dir, LINEAGE_INDEX_PATH), 'utf8')));
  const listed = new Set(manifest.files.map((f) => f.path));
  // A shard id no device of the fixture is in: the last K shard, plus one.
  const last = index.shards.predicates.map((s) => s.id).filter((id) => id.startsWith('K')).sort().at(-1) ?? 'K000';
  planted = lineageClosurePath('predicates', `K${String(Number(last.slice(1)) + 1).padStart(3, '0')}`);
  expect(listed.has(planted)).toBe(false);
  await cp(join(dir, lineageClosurePath('predicates', last)), join(dir, planted));
  const started = await startNodeAndWorkers(dir);
  close = started.close;
  hosts = [{ name: 'node', url: started.node.url }, ...started.workers.map((w) => ({ name: `worker over ${w.name}`, url: w.worker.url }))];
}, 120_000);
afterAll(async () => {
  await close?.();
});

describe('lineage closure files on every host', () => {
  it('the manifest lists one closure file for each shard of the lineage header, in each direction', () => {
    const closures = manifest.files.filter((f) => f.path.startsWith('lineage/closure/')).map((f) => f.path);
    const want = LINEAGE_DIRECTIONS.flatMap((d) => index.shards.predicates.map((s) => lineageClosurePath(d, s.id)));
    expect(closures.sort()).toEqual(want.sort());
    expect(closures.length).toBeGreaterThan(100);
  });

  it('each host sends every listed closure file with the bytes on disk and the sha256 the manifest gives', async () => {
    const closures = manifest.files.filter((f) => f.path.startsWith('lineage/closure/'));
    for (const host of hosts) {
      for (const f of closures) {
        const onDisk = await readFile(join(dir, f.path));
        expect(sha256(onDisk)).toBe(f.sha256);
        const res = await get(host.url, f.path, BROWSER);
        expect({ host: host.name, path: f.path, status: res.status }).toEqual({ host: host.name, path: f.path, status: 200 });
        const body = decoded(res);
        expect(body.equals(onDisk), `${host.name} ${f.path}`).toBe(true);
        // Asked for with no coding: the bytes on disk as they are.
        expect((await get(host.url, f.path)).body.equals(onDisk), `${host.name} ${f.path}`).toBe(true);
      }
    }
  }, 120_000);

  it("each host gives a closure file the headers of its other snapshot files: a binary type, the same caching and validators", async () => {
    const closure = manifest.files.find((f) => f.path === lineageClosurePath('descendants', index.shards.descendants[0]!.id))!;
    const shard = lineageShardPath('descendants', index.shards.descendants[0]!.id);
    for (const host of hosts) {
      const [a, b, header] = await Promise.all([get(host.url, closure.path), get(host.url, shard), get(host.url, LINEAGE_INDEX_PATH)]);
      expect(a.headers['content-type'], host.name).toBe('application/octet-stream');
      const policy = (h: Record<string, unknown>) => ({ cache: h['cache-control'], etag: typeof h.etag, cors: h['access-control-allow-origin'] });
      expect(policy(a.headers), host.name).toEqual(policy(b.headers));
      expect(policy(a.headers), host.name).toEqual(policy(header.headers));
      expect(a.headers['cache-control'], host.name).toMatch(/no-cache|max-age=0, must-revalidate/);
      if (typeof a.headers.etag === 'string') {
        // A client holding the file revalidates it without its bytes.
        const again = await get(host.url, closure.path, { 'if-none-match': a.headers.etag });
        expect({ host: host.name, status: again.status, bytes: again.body.length }).toEqual({ host: host.name, status: 304, bytes: 0 });
      }
    }
    // The Node server's validators are the manifest's: the file's sha256 as a strong ETag, the build time.
    const node = await get(hosts[0]!.url, closure.path);
    expect(node.headers.etag).toBe(`"${closure.sha256}"`);
    expect(Date.parse(String(node.headers['last-modified']))).toBe(Math.floor(Date.parse(manifest.generatedAt) / 1000) * 1000);
    expect(Number(node.headers['content-length'])).toBe(closure.bytes);
    // The Worker over R2 gives the manifest's validators too, and refuses a precondition naming another version.
    const r2 = await get(hosts[1]!.url, closure.path);
    expect(r2.headers.etag).toBe(`"${closure.sha256}"`);
    expect(Date.parse(String(r2.headers['last-modified']))).toBe(Math.floor(Date.parse(manifest.generatedAt) / 1000) * 1000);
    const stale = await get(hosts[1]!.url, closure.path, { 'if-match': '"0000"' });
    expect({ status: stale.status, etag: stale.headers.etag }).toEqual({ status: 412, etag: `"${closure.sha256}"` });
    expect((await get(hosts[1]!.url, closure.path, { 'if-match': `"${closure.sha256}"` })).status).toBe(200);
    // The static assets hold the closure files with validators of their own.
    expect(typeof (await get(hosts[2]!.url, closure.path)).headers.etag).toBe('string');
    // Every host lets any page read the snapshot's files.
    for (const host of hosts) expect((await get(host.url, closure.path)).headers['access-control-allow-origin'], host.name).toBe('*');
  });

  it('a closure file the manifest does not list answers 404 not_found on each host, even where its bytes lie beside the others', async () => {
    for (const host of hosts) {
      for (const path of [planted, lineageClosurePath('descendants', 'K999'), 'lineage/closure/sideways/K000.bin', 'lineage/closure/predicates/K000.bin.gz']) {
        const res = await get(host.url, path);
        expect({ host: host.name, path, status: res.status }).toEqual({ host: host.name, path, status: 404 });
        expect(JSON.parse(decoded(res).toString('utf8')), `${host.name} ${path}`).toMatchObject({ error: { code: 'not_found' } });
      }
    }
  });
});
