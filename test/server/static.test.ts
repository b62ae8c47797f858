import { createHash } from 'node:crypto';
import { cp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync, gzipSync, brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, type FileEntry } from '../../src/contract/index.ts';
import { contentTypeFor, ifRangeHolds, notModified, parseRange } from '../../src/api/file-http.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { rawRequest, startServer, type Running } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * GET /snapshot/…: only bytes checked against the manifest during the request are sent, whatever happens to the
 * files on disk after the first read; and the HTTP a CDN origin owes its clients (validators, ranges, types).
 */
let source: string;
let manifest: Manifest;
let shard: FileEntry;

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  // With a Pagefind index (an option of the build), so that its kinds of file are served too.
  source = (await buildFixture({ pagefind: true })).out;
  manifest = Manifest.parse(JSON.parse(await readFile(join(source, LAYOUT.manifest), 'utf8')));
  shard = manifest.files.filter((f) => /^records\/K\d+\.json$/.test(f.path)).sort((a, b) => b.bytes - a.bytes)[0] as FileEntry;
});

async function copyOfSnapshot(): Promise<string> {
  const dir = join(await testTempDir('device-510k-static-'), 'snapshot');
  await cp(source, dir, { recursive: true, dereference: true });
  return dir;
}

/** The same length, other bytes: a letter of a device name turned into the next one. */
async function editSameLength(file: string): Promise<void> {
  const bytes = await readFile(file);
  const at = bytes.indexOf('"deviceName":"') + 14;
  bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
  await writeFile(file, bytes);
}

const get = (url: string, path: string, headers: Record<string, string> = {}) => rawRequest(url, { path: `/snapshot/${path}`, headers });

describe('what is on disk after the first read', () => {
  it('a same-length edit: the verified bytes or 503, never the edited ones', async () => {
    const dir = await copyOfSnapshot();
    // One server keeps what it verified in memory; the other (a one-byte cache) must read the disk each time.
    const cached = await startServer({ snapshotPath: dir });
    const uncached = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    try {
      for (const s of [cached, uncached]) expect(sha256((await get(s.url, shard.path)).body)).toBe(shard.sha256);
      await editSameLength(join(dir, shard.path));
      const fromMemory = await get(cached.url, shard.path);
      expect(fromMemory.status).toBe(200);
      expect(sha256(fromMemory.body)).toBe(shard.sha256);
      const fromDisk = await get(uncached.url, shard.path);
      expect(fromDisk.status).toBe(503);
      expect(JSON.parse(fromDisk.body.toString('utf8'))).toMatchObject({ error: { code: 'source_unavailable' } });
      expect(fromDisk.headers.etag).toBeUndefined();
    } finally {
      await Promise.all([cached.close(), uncached.close()]);
    }
  });

  it('a symbolic link swapped in for a file is never followed', async () => {
    const dir = await copyOfSnapshot();
    const s = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    try {
      expect((await get(s.url, shard.path)).status).toBe(200);
      await rm(join(dir, shard.path));
      await symlink('/etc/passwd', join(dir, shard.path));
      const res = await get(s.url, shard.path);
      expect(res.status).toBe(503);
      expect(res.body.toString('utf8')).not.toContain('root:');
    } finally {
      await s.close();
    }
  });

  it('a folder on the way that is a symbolic link is never followed, even to the very bytes the manifest lists', async () => {
    const dir = await copyOfSnapshot();
    // The shards' folder moved outside the snapshot, and a link to it left in its place: the files behind it match.
    const outside = await testTempDir('device-510k-outside-');
    const folder = shard.path.slice(0, shard.path.indexOf('/'));
    await rename(join(dir, folder), join(outside, folder));
    await symlink(join(outside, folder), join(dir, folder));
    expect(sha256(await readFile(join(dir, shard.path)))).toBe(shard.sha256);
    // From memory once checked (the default) and streamed from disk (every file counts as large).
    const inMemory = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    const streamed = await startServer({ snapshotPath: dir, cacheBytes: 1, fileMemoryMaxBytes: 0 });
    try {
      for (const s of [inMemory, streamed]) {
        const res = await get(s.url, shard.path);
        expect(res.status).toBe(503);
        expect(res.body.includes(await readFile(join(source, shard.path)))).toBe(false);
      }
    } finally {
      await Promise.all([inMemory.close(), streamed.close()]);
    }
  });

  it('large files are streamed only while their identity is the one that matched; an edit or a link is caught', async () => {
    const dir = await copyOfSnapshot();
    // Every file counts as large here, so each one takes the streaming path.
    const s = await startServer({ snapshotPath: dir, cacheBytes: 1, fileMemoryMaxBytes: 0 });
    try {
      const first = await get(s.url, shard.path);
      expect(first.status).toBe(200);
      expect(sha256(first.body)).toBe(shard.sha256);
      const part = await get(s.url, shard.path, { range: 'bytes=10-19' });
      expect(part.status).toBe(206);
      expect(part.body.equals(first.body.subarray(10, 20))).toBe(true);
      await editSameLength(join(dir, shard.path));
      expect((await get(s.url, shard.path)).status).toBe(503);
      expect((await get(s.url, shard.path, { range: 'bytes=0-9' })).status).toBe(503);
      await cp(join(source, shard.path), join(dir, shard.path));
      expect(sha256((await get(s.url, shard.path)).body)).toBe(shard.sha256);
      await rm(join(dir, shard.path));
      await symlink('/etc/passwd', join(dir, shard.path));
      const linked = await get(s.url, shard.path);
      expect(linked.status).toBe(503);
      expect(linked.body.toString('utf8')).not.toContain('root:');
    } finally {
      await s.close();
    }
  });
});

describe('compressed copies', () => {
  it('unlisted .br and .gz files beside a file are neither sent for it nor served by name', async () => {
    const dir = await copyOfSnapshot();
    const plain = await readFile(join(dir, shard.path));
    // The build's own host copy (an unlisted gzip beside each record shard, for static hosts) is replaced by a plant.
    await rm(join(dir, `${shard.path}.gz`), { force: true });
    await writeFile(join(dir, `${shard.path}.br`), brotliCompressSync(Buffer.from('{"planted":true}')));
    await symlink('/etc/passwd', join(dir, `${shard.path}.gz`));
    const s = await startServer({ snapshotPath: dir });
    try {
      const br = await get(s.url, shard.path, { 'accept-encoding': 'br' });
      expect(br.status).toBe(200);
      // Compressed on the fly from the verified file: record shards have no siblings.
      expect(br.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(br.body).equals(plain)).toBe(true);
      const gz = await get(s.url, shard.path, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gz.body).equals(plain)).toBe(true);
      for (const planted of [`${shard.path}.br`, `${shard.path}.gz`]) expect((await get(s.url, planted)).status).toBe(404);
    } finally {
      await s.close();
    }
  });

  it('a listed sibling is checked like any other file: a damaged one answers 503', async () => {
    const dir = await copyOfSnapshot();
    const rel = `${LAYOUT.topProductCodes}.gz`;
    expect(manifest.files.some((f) => f.path === rel)).toBe(true);
    const s = await startServer({ snapshotPath: dir, cacheBytes: 1 });
    try {
      const good = await get(s.url, LAYOUT.topProductCodes, { 'accept-encoding': 'gzip' });
      expect(good.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(good.body).equals(await readFile(join(dir, LAYOUT.topProductCodes)))).toBe(true);
      const bytes = await readFile(join(dir, rel));
      await writeFile(join(dir, rel), gzipSync(Buffer.alloc(bytes.length - 20, 32)).subarray(0, bytes.length));
      expect((await get(s.url, LAYOUT.topProductCodes, { 'accept-encoding': 'gzip' })).status).toBe(503);
      // The file itself is still good.
      expect((await get(s.url, LAYOUT.topProductCodes)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('HTTP', () => {
  let s: Running;
  beforeAll(async () => {
    s = await startServer({ snapshotPath: source });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('names a content type for every kind of file the snapshot holds', async () => {
    const expected: [RegExp, string][] = [
      [/\.json$/, 'application/json; charset=utf-8'],
      [/\.atom$/, 'application/atom+xml; charset=utf-8'],
      [/\.ndjson$/, 'application/x-ndjson; charset=utf-8'],
      [/\.js$/, 'text/javascript; charset=utf-8'],
      [/\.css$/, 'text/css; charset=utf-8'],
      [/\.gz$/, 'application/gzip'],
      [/\.parquet$/, 'application/vnd.apache.parquet'],
      [/\.sqlite$/, 'application/vnd.sqlite3'],
      [/\.(pf_fragment|pf_index|pf_filter|pf_meta|pagefind|bin|br)$/, 'application/octet-stream'],
    ];
    const kinds = new Set<string>();
    for (const f of manifest.files) {
      const kind = f.path.replace(/^.*\./, '');
      if (kinds.has(kind)) continue;
      kinds.add(kind);
      const res = await get(s.url, f.path);
      expect(res.status).toBe(200);
      const type = expected.find(([p]) => p.test(f.path))?.[1];
      expect({ path: f.path, type: res.headers['content-type'] }).toEqual({ path: f.path, type });
      expect(contentTypeFor(f.path)).toBe(type);
    }
    for (const kind of ['json', 'js', 'css', 'pf_fragment', 'pf_index', 'pagefind', 'bin', 'br', 'gz', 'parquet', 'sqlite']) expect(kinds).toContain(kind);
  });

  it('serves the Parquet download by ranges, as a reader over HTTP asks: the length of the footer, then the footer', async () => {
    const path = LAYOUT.downloadsParquet;
    const whole = (await get(s.url, path)).body;
    const tail = await get(s.url, path, { range: 'bytes=-8' });
    expect(tail.status).toBe(206);
    expect(tail.body.subarray(4).toString('latin1')).toBe('PAR1');
    const footer = tail.body.readUInt32LE(0);
    expect(footer).toBeGreaterThan(0);
    const start = whole.length - 8 - footer;
    const part = await get(s.url, path, { range: `bytes=${start}-${whole.length - 9}` });
    expect({ status: part.status, range: part.headers['content-range'] }).toEqual({ status: 206, range: `bytes ${start}-${whole.length - 9}/${whole.length}` });
    expect(part.body.equals(whole.subarray(start, whole.length - 8))).toBe(true);
    // Sent as stored: a compressed copy would have other byte offsets.
    expect((await get(s.url, path, { 'accept-encoding': 'gzip, br' })).headers['content-encoding']).toBeUndefined();
  });

  it('validators: the whole sha256 as a strong ETag, If-None-Match before If-Modified-Since', async () => {
    const first = await get(s.url, shard.path);
    expect(first.headers.etag).toBe(`"${shard.sha256}"`);
    const lastModified = String(first.headers['last-modified']);
    expect(Date.parse(lastModified)).toBe(Math.floor(Date.parse(manifest.generatedAt) / 1000) * 1000);
    expect((await get(s.url, shard.path, { 'if-modified-since': lastModified })).status).toBe(304);
    expect((await get(s.url, shard.path, { 'if-modified-since': new Date(Date.now() + 86_400_000).toUTCString() })).status).toBe(304);
    expect((await get(s.url, shard.path, { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() })).status).toBe(200);
    expect((await get(s.url, shard.path, { 'if-modified-since': 'not a date' })).status).toBe(200);
    // If-None-Match decides when both are sent.
    expect((await get(s.url, shard.path, { 'if-none-match': '"other"', 'if-modified-since': lastModified })).status).toBe(200);
    const hit = await get(s.url, shard.path, { 'if-none-match': `"x", W/"${shard.sha256}"` });
    expect(hit.status).toBe(304);
    expect(hit.body.length).toBe(0);
    expect(hit.headers.etag).toBe(`"${shard.sha256}"`);
  });

  it('ranges: single, open-ended and suffix; 416 with Content-Range bytes */N; If-Range', async () => {
    const whole = (await get(s.url, shard.path)).body;
    const n = whole.length;
    const cases: [string, number, number][] = [
      ['bytes=0-9', 0, 9],
      ['bytes=100-', 100, n - 1],
      ['bytes=-5', n - 5, n - 1],
      [`bytes=${n - 3}-${n + 100}`, n - 3, n - 1],
      [`bytes=-${n + 10}`, 0, n - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await get(s.url, shard.path, { range });
      expect({ range, status: res.status, contentRange: res.headers['content-range'] }).toEqual({ range, status: 206, contentRange: `bytes ${start}-${end}/${n}` });
      expect(res.body.equals(whole.subarray(start, end + 1))).toBe(true);
      expect(Number(res.headers['content-length'])).toBe(end - start + 1);
    }
    for (const range of [`bytes=${n}-`, `bytes=${n + 5}-${n + 9}`, 'bytes=-0']) {
      const res = await get(s.url, shard.path, { range });
      expect({ range, status: res.status }).toEqual({ range, status: 416 });
      expect(res.headers['content-range']).toBe(`bytes */${n}`);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.body.toString('utf8')).toContain(String(n));
    }
    // Not one valid byte range: the whole file, as RFC 9110 allows.
    for (const range of ['bytes=0-1,5-9', 'items=0-1', 'bytes=9-2']) {
      const res = await get(s.url, shard.path, { range });
      expect({ range, status: res.status }).toEqual({ range, status: 200 });
      expect(res.body.equals(whole)).toBe(true);
    }
    expect((await get(s.url, shard.path, { range: 'bytes=0-9', 'if-range': `"${shard.sha256}"` })).status).toBe(206);
    expect((await get(s.url, shard.path, { range: 'bytes=0-9', 'if-range': '"stale"' })).status).toBe(200);
  });

  it('HEAD: the headers of a GET, no body', async () => {
    const head = await rawRequest(s.url, { method: 'HEAD', path: `/snapshot/${shard.path}` });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(Number(head.headers['content-length'])).toBe(shard.bytes);
    expect(head.headers.etag).toBe(`"${shard.sha256}"`);
  });

  it('encoded separators answer 404, even where the decoded path is a listed file', async () => {
    for (const path of ['records%2Findex.json', 'records%2findex.json', 'records%5Cindex.json', `records/${shard.path.slice(8)}%00`]) {
      expect({ path, status: (await get(s.url, path)).status }).toEqual({ path, status: 404 });
    }
    expect((await get(s.url, 'records/index.json')).status).toBe(200);
  });

  it('the manifest goes out compressed too, from the bytes the server checked at open', async () => {
    const res = await get(s.url, LAYOUT.manifest, { 'accept-encoding': 'gzip' });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.body).equals(await readFile(join(source, LAYOUT.manifest)))).toBe(true);
    expect(res.headers.etag).toMatch(/^W\/"[0-9a-f]{64}-gz"$/);
  });
});

describe('the header rules as functions', () => {
  const at = new Date('2026-01-01T00:00:00.500Z');
  it.each([
    [{}, false],
    [{ 'if-none-match': '*' }, true],
    [{ 'if-none-match': '"a", "b"' }, true],
    [{ 'if-none-match': 'W/"b"' }, true],
    [{ 'if-none-match': '"c"', 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' }, false],
    [{ 'if-modified-since': 'Thu, 01 Jan 2026 00:00:00 GMT' }, true],
    [{ 'if-modified-since': 'Wed, 31 Dec 2025 23:59:59 GMT' }, false],
  ])('notModified(%o) is %s', (headers, expected) => {
    expect(notModified(headers, '"b"', at)).toBe(expected);
  });

  it.each([
    [undefined, 100, { kind: 'none' }],
    ['bytes=0-0', 100, { kind: 'range', start: 0, end: 0 }],
    ['bytes=-1', 100, { kind: 'range', start: 99, end: 99 }],
    ['bytes=50-', 100, { kind: 'range', start: 50, end: 99 }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=-', 100, { kind: 'none' }],
    ['bytes=0-1,3-4', 100, { kind: 'none' }],
    ['bytes=5-1', 100, { kind: 'none' }],
  ])('parseRange(%s, %i)', (header, size, expected) => {
    expect(parseRange(header, size)).toEqual(expected);
  });

  it('If-Range needs a strong tag that matches, or the exact date', () => {
    expect(ifRangeHolds(undefined, '"a"', at)).toBe(true);
    expect(ifRangeHolds('"a"', '"a"', at)).toBe(true);
    expect(ifRangeHolds('W/"a"', '"a"', at)).toBe(false);
    expect(ifRangeHolds('"a"', 'W/"a"', at)).toBe(false);
    expect(ifRangeHolds('Thu, 01 Jan 2026 00:00:00 GMT', '"a"', at)).toBe(true);
    expect(ifRangeHolds('Thu, 01 Jan 2026 00:00:01 GMT', '"a"', at)).toBe(false);
  });
});
