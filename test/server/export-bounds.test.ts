import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { randomFillSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorBody } from '../../src/contract/index.ts';
import { newExportFlow, pumpExport, SLICE_BYTES } from '../../src/server/export-stream.ts';
import type { ExportFlow } from '../../src/server/export-stream.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { until } from '../helpers/until.ts';
import { allRecords, startServer, type Running } from './helpers.ts';

/** A GET with the body's bytes as they came over the wire (fetch would decode them). */
function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /v1/export within bounds', () => {
  let server: Running;
  let count: number;
  const flows: ExportFlow[] = [];
  const at = (query: string) => `${server.url}/v1/export?${query}`;

  beforeAll(async () => {
    const snapshotPath = await buildFixtureSnapshot();
    count = (await allRecords(snapshotPath)).length;
    // Batches of 16 records: the fixture's export spans many chunks, as a large one does.
    server = await startServer({ snapshotPath, exportConcurrency: 2, exportHooks: { batchSize: 16, onFlow: (f) => flows.push(f) } });
  });
  afterAll(() => server?.close());

  it('answers 503 overloaded with Retry-After once EXPORT_CONCURRENCY exports run, and streams again once one ends', async () => {
    const held = [server.app.exports.tryTake()!, server.app.exports.tryTake()!];
    expect(server.app.exports.tryTake()).toBeNull();
    const refused = await rawGet(at('format=csv'));
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    const body = ErrorBody.parse(JSON.parse(refused.body.toString('utf8')));
    expect(body.error.code).toBe('overloaded');
    expect(body.error.message).toMatch(/at most 2 exports at once/);
    // The snapshot is there: only the export is refused.
    expect(body.sourceState.availability).not.toBe('unavailable');
    held[0]!();
    const served = await rawGet(at('format=ndjson'));
    expect(served.status).toBe(200);
    expect(served.body.toString('utf8').split('\n').filter(Boolean).length).toBe(count);
    // The export gave its slot back: one is free again, the test's other one still held.
    await until(() => server.app.exports.active === 1, 'the export to hold its slot');
    held[1]!();
    expect(server.app.exports.active).toBe(0);
  });

  it('refuses an altered cursor (400 invalid_cursor) and a __proto__ parameter (400 invalid_input)', async () => {
    const first = await rawGet(at('format=ndjson&limit=5'));
    const cursor = first.headers['x-next-cursor'] as string;
    expect(cursor).toBeTruthy();
    const resumed = await rawGet(at(`format=ndjson&cursor=${cursor}`));
    expect(resumed.status).toBe(200);
    const altered = cursor.slice(0, -3) + (cursor.at(-3) === 'A' ? 'B' : 'A') + cursor.slice(-2);
    const tampered = await rawGet(at(`format=ndjson&cursor=${altered}`));
    expect(tampered.status).toBe(400);
    expect(ErrorBody.parse(JSON.parse(tampered.body.toString('utf8'))).error.code).toBe('invalid_cursor');
    for (const query of ['__proto__=x', '__proto__[admin]=1', 'format=csv&__proto__=']) {
      const proto = await rawGet(at(query));
      expect(proto.status, query).toBe(400);
      const error = ErrorBody.parse(JSON.parse(proto.body.toString('utf8'))).error;
      expect(error.code).toBe('invalid_input');
      expect(error.message).toContain('__proto__');
    }
  });

  describe.each(['csv', 'ndjson'])('compressed %s', (format) => {
    it.each<[string, 'gzip' | 'br', (b: Buffer) => Buffer]>([
      ['gzip', 'gzip', gunzipSync],
      ['br, gzip', 'br', brotliDecompressSync],
      ['gzip;q=0.5, br;q=0.9', 'br', brotliDecompressSync],
      ['br;q=0, gzip', 'gzip', gunzipSync],
    ])('Accept-Encoding %s: %s whose bytes decode to the identity export, byte for byte, with the same headers and cursor', async (accept, coding, decode) => {
      for (const query of [`format=${format}&sort=kNumber:asc`, `format=${format}&query=catheter&limit=7`]) {
        const plain = await rawGet(at(query), { 'accept-encoding': 'identity' });
        expect(plain.status).toBe(200);
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.headers.vary).toBe('Accept-Encoding');
        const packed = await rawGet(at(query), { 'accept-encoding': accept });
        expect(packed.status).toBe(200);
        expect(packed.headers['content-encoding']).toBe(coding);
        expect(packed.headers.vary).toBe('Accept-Encoding');
        expect(packed.body.length).toBeLessThan(plain.body.length);
        expect(decode(packed.body).equals(plain.body)).toBe(true);
        for (const h of ['content-type', 'x-total-count', 'x-export-count', 'x-next-cursor', 'link']) expect(packed.headers[h], h).toBe(plain.headers[h]);
      }
      const head = await rawGet(at(`format=${format}`), { 'accept-encoding': accept }, 'HEAD');
      expect(head.headers['content-encoding']).toBe(coding);
      expect(head.body.length).toBe(0);
    });
  });

  it('sends identity when the client accepts neither br nor gzip', async () => {
    for (const accept of ['', 'deflate', 'gzip;q=0, br;q=0', '*;q=0']) {
      const res = await rawGet(at('format=csv&limit=3'), accept ? { 'accept-encoding': accept } : {});
      expect(res.headers['content-encoding'], accept).toBeUndefined();
      expect(res.body.subarray(0, 3).toString('hex')).toBe('efbbbf');
    }
  });
});

describe('an export to a client that stops reading', () => {
  const CHUNK = 256 * 1024;
  /** What the kernel's buffers would take before the client's window closes. */
  const TAKEN = 512 * 1024;

  /** A response whose client reads `TAKEN` bytes and then nothing: later writes are never acknowledged. */
  function stalledClient() {
    const client = { received: 0, withheld: 0 };
    const res = new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _enc, callback) {
        client.received += chunk.length;
        if (client.received <= TAKEN) callback();
        else client.withheld++;
      },
    });
    return { res, client };
  }

  /** An export without end, of bytes that do not compress, lent as the real one's are (one buffer reused). */
  function endless(counter: { pulled: number }) {
    const lent = new Uint8Array(CHUNK);
    return async (): Promise<IteratorResult<Uint8Array>> => {
      counter.pulled++;
      randomFillSync(lent);
      return { done: false, value: lent };
    };
  }

  it.each(['identity', 'gzip', 'br'] as const)('holds a bounded number of bytes and asks for no more chunks (%s), and lets go once cut', async (encoding) => {
    const { res, client } = stalledClient();
    const counter = { pulled: 0 };
    const flow = newExportFlow();
    const pumping = pumpExport(endless(counter), res, encoding, flow);
    await until(() => client.withheld > 0, 'the client to withhold bytes');
    // Give the pump, the thread pool's compression and the pipe every chance to go on: none may take it further.
    for (let i = 0; i < 40; i++) await new Promise((r) => setTimeout(r, 2));
    const pulledWhenStalled = counter.pulled;
    for (let i = 0; i < 40; i++) await new Promise((r) => setTimeout(r, 2));
    expect(counter.pulled).toBe(pulledWhenStalled);
    // What the client took, plus what the encoder keeps of its input before it writes output (br's 1 MiB window,
    // deflate's 32 KiB), one chunk and what zlib and the response may hold: nothing grows with time.
    const lag = encoding === 'br' ? 1024 * 1024 : encoding === 'gzip' ? 64 * 1024 : 0;
    expect(counter.pulled).toBeLessThanOrEqual(Math.ceil((TAKEN + lag) / CHUNK) + 3);
    expect(flow.peak).toBeLessThanOrEqual(CHUNK + 4 * SLICE_BYTES);
    expect(flow.buffered).toBeLessThanOrEqual(CHUNK + 4 * SLICE_BYTES);
    // The connection's stall limit cuts it (http-server.ts): the export ends and gives its slot back.
    res.destroy();
    await expect(pumping).resolves.toBe(false);
  });
});
