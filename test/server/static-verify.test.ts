import { createHash, randomBytes } from 'node:crypto';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAYOUT, Manifest, snapshotIdOf } from '../../src/contract/index.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';
import { startServer, type Running } from './helpers.ts';

/**
 * Large snapshot files are verified to the last byte while they stream, and `If-Match` is honoured. The snapshot is a
 * fixture build with one large file added to its manifest (24 MiB: more than the loopback socket's buffers can take
 * while a client does not read, so the server is still reading the file when it is edited).
 */

const BIG = 'big.bin';
const BIG_BYTES = 24 * 1024 * 1024;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let dir: string;
let server: Running;
let manifest: Manifest;

beforeAll(async () => {
  const built = await buildFixture();
  dir = built.dir;
  const big = randomBytes(BIG_BYTES);
  await writeFile(join(dir, BIG), big);
  const files = [...built.manifest.files, { path: BIG, bytes: big.length, sha256: sha256(big) }];
  manifest = { ...built.manifest, files, snapshotId: snapshotIdOf(files, sha256) };
  await writeFile(join(dir, LAYOUT.manifest), JSON.stringify(manifest));
  server = await startServer({ snapshotPath: built.out });
}, 120_000);
afterAll(async () => {
  await server?.close();
  if (dir) await rm(dirname(dirname(dir)), { recursive: true, force: true });
});

/** A GET over a plain socket: the status, the declared length, and the body bytes that arrived before the socket closed. */
function slowGet(path: string, whilePaused: () => Promise<void>): Promise<{ status: number; length: number; received: number; complete: boolean }> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let head = Buffer.alloc(0);
    let headerEnd = -1;
    let received = 0;
    let paused = false;
    socket.on('error', () => {});
    socket.write(`GET /snapshot/${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    socket.on('data', (chunk: Buffer) => {
      if (headerEnd < 0) {
        head = Buffer.concat([head, chunk]);
        headerEnd = head.indexOf('\r\n\r\n');
        if (headerEnd < 0) return;
        received = head.length - headerEnd - 4;
      } else received += chunk.length;
      if (!paused) {
        // The first bytes are in: stop reading, so the server blocks, change the file, then read on.
        paused = true;
        socket.pause();
        whilePaused().then(() => socket.resume(), reject);
      }
    });
    socket.on('close', () => {
      const text = head.subarray(0, Math.max(0, headerEnd)).toString('latin1');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(text)?.[1] ?? -1);
      resolve({ status, length, received, complete: received === length });
    });
  });
}

describe('a large snapshot file is verified to the last byte', () => {
  it('sends the whole file when it is unchanged', async () => {
    const res = await fetch(`${server.url}/snapshot/${BIG}`);
    const body = new Uint8Array(await res.arrayBuffer());
    expect(res.status).toBe(200);
    expect(sha256(body)).toBe(manifest.files.find((f) => f.path === BIG)?.sha256);
    const range = await fetch(`${server.url}/snapshot/${BIG}`, { headers: { range: 'bytes=1000-1999' } });
    expect(range.status).toBe(206);
    expect(Buffer.from(await range.arrayBuffer())).toEqual((await readFile(join(dir, BIG))).subarray(1000, 2000));
  });

  it('a file edited while a slow client downloads it: the client never receives a complete body', async () => {
    const result = await slowGet(BIG, async () => {
      // In place, same size: the server's open descriptor sees the new bytes.
      const handle = await open(join(dir, BIG), 'r+');
      await handle.write(Buffer.from('edited while it was being sent'), 0, undefined, BIG_BYTES - 100);
      await handle.close();
    });
    expect(result.status).toBe(200);
    expect(result.length).toBe(BIG_BYTES);
    expect(result.complete).toBe(false);
    expect(result.received).toBeLessThan(BIG_BYTES);
    // And the snapshot knows the file is damaged: the next request is refused, and it was reported.
    const next = await fetch(`${server.url}/snapshot/${BIG}`);
    expect(next.status).toBeGreaterThanOrEqual(500);
    expect(server.logger.errors.map((e) => e.message)).toContain('snapshot file does not match its sha256; it is not served');
  });
});

describe('If-Match on /snapshot/ files', () => {
  const get = (path: string, ifMatch: string) => fetch(`${server.url}/snapshot/${path}`, { headers: { 'if-match': ifMatch, 'accept-encoding': 'identity' } });
  it.each([
    ['its own entity tag', (etag: string) => etag, 200],
    ['one of a list', (etag: string) => `"0000", ${etag}`, 200],
    ['*', () => '*', 200],
    ['another entity tag', () => '"0123456789abcdef"', 412],
    ['its own tag, weak (If-Match compares strongly)', (etag: string) => `W/${etag}`, 412],
  ])('%s', async (_, header, status) => {
    const entry = manifest.files.find((f) => f.path === 'meta.json');
    const etag = `"${entry?.sha256}"`;
    const res = await get('meta.json', header(etag));
    expect(res.status).toBe(status);
    const body = await res.text();
    if (status === 412) {
      expect(res.headers.get('etag')).toBe(etag);
      expect(body).toBe(`The file's current entity tag is ${etag}; the request's precondition names another.\n`);
    } else expect(sha256(Buffer.from(body))).toBe(entry?.sha256);
  });
});
