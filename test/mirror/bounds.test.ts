import { readFile, readlink, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMirror, type MirrorOptions } from '../../build/mirror/run.ts';
import { LAYOUT, Manifest } from '../../src/contract/index.ts';
import { buildFixture, FIXTURE_SOURCES } from '../helpers/fixture-snapshot.ts';
import { PMN, writeEditedPmn } from '../sync/edit-fixture.ts';
import { until } from '../helpers/until.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/**
 * The mirror against an origin that sends more than its manifest lists: a gzip bomb in place of a file, and a body
 * that never ends. The origin here is a plain file server over a fixture snapshot that gzips every answer when asked,
 * and counts the bytes it sends, so the bytes on the wire are known independently of the mirror.
 */

const MiB = 1024 * 1024;
type Trick = 'bomb' | 'endless';

let work: string;
let originDir: string;
let manifest: Manifest;
let server: Server;
let base: string;
const tricks = new Map<string, Trick>();
/** Bytes of each 200 answer's body as written to the socket, by path. */
const sent = new Map<string, number>();

function serve(): Promise<void> {
  server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/snapshot\//, ''));
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const trick = tricks.get(path);
    if (trick === 'bomb') {
      // 1 MiB of zeros packed in about 1 KiB (within what the file may take on the wire), as the file, gzipped.
      const body = gzipSync(Buffer.alloc(MiB), { level: 9 });
      sent.set(path, body.length);
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length }).end(body);
      return;
    }
    if (trick === 'endless') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let n = 0;
      const pump = (): void => {
        while (n < 256 * MiB && !res.destroyed) {
          n += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        if (!res.destroyed) res.end();
      };
      res.on('close', () => sent.set(path, n));
      pump();
      return;
    }
    readFile(join(originDir, path)).then(
      (bytes) => {
        const body = gzip ? gzipSync(bytes) : bytes;
        sent.set(path, body.length);
        res.writeHead(200, { 'content-length': body.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) }).end(body);
      },
      () => res.writeHead(404).end(),
    );
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

const options = (to: string, extra: Partial<MirrorOptions> = {}): MirrorOptions => ({
  from: `${base}/snapshot`,
  to,
  timeoutMs: 20_000,
  retries: 0,
  baseDelayMs: 1,
  maxDelayMs: 2,
  ...extra,
});

let older: { dir: string; manifest: Manifest };
let newer: { dir: string; manifest: Manifest };

beforeAll(async () => {
  work = await testTempDir('mirror-bounds-');
  const a = await buildFixture({ out: join(work, 'a', 'snapshot'), epoch: 1_786_924_800 });
  const edited = join(work, 'pmn-edited.txt');
  await writeEditedPmn(FIXTURE_SOURCES[1] as string, edited, { set: { K770121: { [PMN.APPLICANT]: 'Hostile Origin, Inc.' } } });
  const b = await buildFixture({ out: join(work, 'b', 'snapshot'), epoch: 1_786_924_800 + 86_400, sources: FIXTURE_SOURCES.map((s, i) => (i === 1 ? edited : s)) });
  older = { dir: a.dir, manifest: a.manifest };
  newer = { dir: b.dir, manifest: b.manifest };
  originDir = older.dir;
  await serve();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(work, { recursive: true, force: true });
});

/** A mirror of the older snapshot, then the origin switched to the newer one with `path` answered by a trick. */
async function hostileUpdate(name: string, trick: Trick): Promise<{ error: Error; before: string; listed: number; path: string }> {
  const to = join(work, name, 'snapshot');
  originDir = older.dir;
  expect((await runMirror(options(to))).outcome).toBe('updated');
  const before = await readlink(to);
  // A file that changed between the two, so the mirror must download it: the shard of the edited record.
  const path = 'records/K7701.json';
  const entry = newer.manifest.files.find((f) => f.path === path);
  const old = older.manifest.files.find((f) => f.path === path);
  expect(entry && old && entry.sha256 !== old.sha256).toBe(true);
  originDir = newer.dir;
  tricks.set(path, trick);
  sent.clear();
  try {
    const error = await runMirror(options(to)).then(
      () => new Error('the mirror finished'),
      (err: Error) => err,
    );
    return { error, before, listed: entry?.bytes ?? 0, path };
  } finally {
    tricks.clear();
    originDir = older.dir;
  }
}

const n = (v: number) => v.toLocaleString('en-US');

describe('the mirror under hostile downloads', () => {
  it('counts the bytes on the wire and the bytes written, separately', async () => {
    sent.clear();
    const to = join(work, 'honest', 'snapshot');
    const result = await runMirror(options(to));
    const downloaded = [...sent.keys()].filter((p) => p !== LAYOUT.manifest);
    expect(downloaded.length).toBe(result.counts.origin);
    const sizes = new Map(older.manifest.files.map((f) => [f.path, f.bytes]));
    const written = downloaded.reduce((sum, p) => sum + (sizes.get(p) ?? NaN), 0);
    const wire = downloaded.reduce((sum, p) => sum + (sent.get(p) ?? NaN), 0);
    expect(result.writtenBytes).toBe(written);
    expect(result.wireBytes).toBe(wire);
    expect(wire).toBeLessThan(written);
  });

  it('a gzip bomb in place of a file is cut off at the size the manifest lists; the copy is left as it was', async () => {
    const { error, before, listed, path } = await hostileUpdate('bomb', 'bomb');
    expect(error.message).toBe(
      `1 file sent more than the manifest lists: ${path} (the body is more than ${n(listed)} bytes once its gzip encoding is undone, past the limit (the manifest's ${n(listed)} bytes); reading stopped there); the local copy was left as it was`,
    );
    expect(await readlink(join(work, 'bomb', 'snapshot'))).toBe(before);
  });

  it('a gzip bomb in place of the manifest is cut off at --max-manifest-bytes', async () => {
    const to = join(work, 'manifest-bomb', 'snapshot');
    tricks.set(LAYOUT.manifest, 'bomb');
    try {
      await expect(runMirror(options(to, { maxManifestBytes: 100_000 }))).rejects.toThrow(
        `manifest.json could not be downloaded from ${base}/snapshot/manifest.json: the body is more than 100,000 bytes once its gzip encoding is undone, past the limit (--max-manifest-bytes); reading stopped there`,
      );
    } finally {
      tricks.clear();
    }
  });

  it('a body longer than the manifest lists (never ending, no declared length) is cut off there', async () => {
    const { error, before, listed, path } = await hostileUpdate('endless', 'endless');
    expect(error.message).toMatch(
      new RegExp(`^1 file sent more than the manifest lists: ${path.replace('.', '\\.')} \\(more than [\\d,]+ bytes were sent, past the limit \\(the manifest's ${n(listed)} bytes\\); reading stopped there\\); the local copy was left as it was$`),
    );
    expect(await readlink(join(work, 'endless', 'snapshot'))).toBe(before);
    // The mirror hung up: the origin did not get to send its 256 MiB.
    await until(() => sent.has(path), 'the origin to count what it sent', 5_000);
    expect(sent.get(path) ?? Infinity).toBeLessThan(64 * MiB);
  });
});
