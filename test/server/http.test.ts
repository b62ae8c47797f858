import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { ask, envelope, post, rawRequest, startServer, type Running } from './helpers.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * HTTP of the Node host around the operations: compression, the snapshot's files, the page, request logs. CORS,
 * health and the OpenAPI document are the contract's, on every host (test/contract/http.test.ts).
 */
let server: Running;
let snapshotPath: string;
let manifest: Manifest;

beforeAll(async () => {
  snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
  manifest = Manifest.parse(JSON.parse(await readFile(join(snapshotPath, LAYOUT.manifest), 'utf8')));
});
afterAll(async () => {
  await server?.close();
});

describe('compression', () => {
  const catalogBody = JSON.stringify(envelope('device-510k.catalog', { kind: 'clearance', limit: 100, cursor: null }));
  const send = (acceptEncoding: string | null, body = catalogBody) =>
    rawRequest(server.url, {
      method: 'POST',
      path: '/v1/query',
      headers: { 'content-type': 'application/json', ...(acceptEncoding === null ? {} : { 'accept-encoding': acceptEncoding }) },
      body,
    });

  it.each([
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['*', 'br'],
    ['identity', undefined],
    [null, undefined],
  ])('Accept-Encoding %j → %s', async (accept, expected) => {
    const res = await send(accept);
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBe(expected);
    expect(res.headers.vary).toBe('Accept-Encoding');
    const plain = expected === 'br' ? brotliDecompressSync(res.body) : expected === 'gzip' ? gunzipSync(res.body) : res.body;
    const json = JSON.parse(plain.toString('utf8'));
    expect(json.data.items).toHaveLength(100);
    if (expected) expect(res.body.length).toBeLessThan(plain.length);
  });

  it('answers of 1 KiB or less go out as they are', async () => {
    const res = await send('br, gzip', JSON.stringify(envelope('device-510k.top-product-codes', { limit: 1 })));
    expect(res.body.length).toBeLessThanOrEqual(1024);
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});

describe('GET /snapshot/…', () => {
  it('serves the manifest and every kind of listed file byte for byte, with an ETag from its content', async () => {
    const picks = ['manifest.json', LAYOUT.meta, LAYOUT.recordIndex, LAYOUT.topProductCodes, manifest.files.find((f) => f.path.startsWith('records/K'))?.path as string];
    for (const path of picks) {
      const res = await rawRequest(server.url, { path: `/snapshot/${path}` });
      expect(res.status).toBe(200);
      expect(res.body.equals(await readFile(join(snapshotPath, path)))).toBe(true);
      const entry = manifest.files.find((f) => f.path === path);
      // The ETag is the file's whole sha256 (the manifest's own, for the manifest).
      expect(res.headers.etag).toBe(`"${entry?.sha256 ?? createHash('sha256').update(res.body).digest('hex')}"`);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('public, no-cache');

      const again = await rawRequest(server.url, { path: `/snapshot/${path}`, headers: { 'if-none-match': String(res.headers.etag) } });
      expect(again.status).toBe(304);
      expect(again.body.length).toBe(0);
    }
  });

  it('serves only what the manifest lists, and nothing outside the snapshot', async () => {
    const copy = join(await testTempDir('device-510k-static-'), 'snapshot');
    await cp(snapshotPath, copy, { recursive: true, dereference: true });
    await writeFile(join(copy, 'unlisted.json'), '{"secret":true}');
    const s = await startServer({ snapshotPath: copy });
    try {
      const paths = [
        '/snapshot/unlisted.json',
        '/snapshot/../package.json',
        '/snapshot/%2e%2e/package.json',
        '/snapshot/%2E%2E%2Fpackage.json',
        '/snapshot/records/../../package.json',
        '/snapshot/..%2f..%2fpackage.json',
        '/snapshot//etc/passwd',
        '/snapshot/%00manifest.json',
        '/snapshot/records/',
        '/../package.json',
        '/%2e%2e/package.json',
      ];
      for (const path of paths) {
        const res = await rawRequest(s.url, { path });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ error: { code: 'not_found' } });
        expect(res.body.toString('utf8')).not.toMatch(/secret|"name": ?"device-510k"|root:/);
      }
    } finally {
      await s.close();
    }
  });

  it('sends the precompressed sibling the manifest lists when the client takes it', async () => {
    const rel = LAYOUT.recordIndex;
    const sibling = manifest.files.find((f) => f.path === `${rel}.br`);
    expect(sibling).toBeDefined();
    const compressed = await rawRequest(server.url, { path: `/snapshot/${rel}`, headers: { 'accept-encoding': 'gzip, br' } });
    expect(compressed.status).toBe(200);
    expect(compressed.headers['content-encoding']).toBe('br');
    expect(compressed.headers['content-type']).toMatch(/^application\/json/);
    expect(compressed.headers.vary).toBe('Accept-Encoding');
    expect(compressed.body.equals(await readFile(join(snapshotPath, `${rel}.br`)))).toBe(true);
    expect(brotliDecompressSync(compressed.body).equals(await readFile(join(snapshotPath, rel)))).toBe(true);
    expect(compressed.headers.etag).toBe(`"${sibling?.sha256}"`);
    const identity = await rawRequest(server.url, { path: `/snapshot/${rel}` });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.body.equals(await readFile(join(snapshotPath, rel)))).toBe(true);
    // Two representations, two validators.
    expect(compressed.headers.etag).not.toBe(identity.headers.etag);
    const notModified = await rawRequest(server.url, { path: `/snapshot/${rel}`, headers: { 'accept-encoding': 'br', 'if-none-match': String(compressed.headers.etag) } });
    expect(notModified.status).toBe(304);
  });
});

describe('GET / and public files', () => {
  it('serves the page folder, and nothing hidden or outside it', async () => {
    const publicDir = await testTempDir('device-510k-public-');
    await writeFile(join(publicDir, 'index.html'), '<!doctype html><title>510(k)</title>');
    await writeFile(join(publicDir, '.env'), 'SECRET=1');
    await mkdir(join(publicDir, 'js'));
    await writeFile(join(publicDir, 'js', 'app.js'), 'export {};');
    const s = await startServer({ snapshotPath, publicDir });
    try {
      const root = await rawRequest(s.url, { path: '/' });
      expect(root.status).toBe(200);
      expect(root.headers['content-type']).toMatch(/^text\/html/);
      expect(root.body.toString()).toContain('<title>510(k)</title>');
      expect((await rawRequest(s.url, { path: '/js/app.js' })).status).toBe(200);
      for (const path of ['/.env', '/../package.json', '/%2e%2e/package.json', '/js/../../package.json', '/nope.html']) {
        const res = await rawRequest(s.url, { path });
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.body.toString()).not.toContain('SECRET');
      }
      // The page goes out compressed when the client takes it, and decompresses to the file's bytes.
      const script = 'export const rows = ' + JSON.stringify(Array.from({ length: 200 }, (_, i) => `row ${i}`)) + ';\n';
      await writeFile(join(publicDir, 'js', 'big.js'), script);
      const s2 = await startServer({ snapshotPath, publicDir });
      try {
        const br = await rawRequest(s2.url, { path: '/js/big.js', headers: { 'accept-encoding': 'br' } });
        expect(br.status).toBe(200);
        expect(br.headers['content-encoding']).toBe('br');
        expect(brotliDecompressSync(br.body).toString()).toBe(script);
        const plain = await rawRequest(s2.url, { path: '/js/big.js' });
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.body.toString()).toBe(script);
      } finally {
        await s2.close();
      }
      // Only GET and HEAD reach the files.
      expect((await rawRequest(s.url, { method: 'POST', path: '/index.html' })).status).toBe(404);
    } finally {
      await s.close();
    }
  });
});

describe('request logs', () => {
  it('one structured line per request, without bodies', async () => {
    const s = await startServer({ snapshotPath });
    try {
      await ask(s.url, 'device-510k.classification', { productCode: 'qzx' });
      await ask(s.url, 'device-510k.meta', {});
      await post(s.url, '{"not json');
      await fetch(`${s.url}/healthz`);
      await vi.waitFor(() => expect(s.logger.requests).toHaveLength(4));
      expect(s.logger.requests.map(({ ms: _ms, ...rest }) => rest)).toEqual([
        { method: 'POST', path: '/v1/query', operation: 'device-510k.classification', status: 404 },
        { method: 'POST', path: '/v1/query', operation: 'device-510k.meta', status: 200 },
        { method: 'POST', path: '/v1/query', operation: null, status: 400 },
        { method: 'GET', path: '/healthz', operation: null, status: 200 },
      ]);
      for (const line of s.logger.requests) expect(line.ms).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(s.logger.requests).toLowerCase()).not.toContain('qzx');
    } finally {
      await s.close();
    }
  });
});
