import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceStateOf } from '../../src/api/source-state.ts';
import { answerOpenFda } from '../../src/openfda/answer.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { joinBytes } from '../../src/utils/join-bytes.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { startServer, type Running } from '../server/helpers.ts';

/**
 * openFDA answers over Node's HTTP server, where a 200 answer is sent as the pieces it is made of (the cached parts
 * around the request's source state): the bytes received are the whole answer, as computed below HTTP, with a
 * Content-Length that counts them all, for every coding and for HEAD.
 */
let server: Running;
let snapshot: Snapshot;
const deps = { now: () => new Date(), sourceState: (s: Snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };

beforeAll(async () => {
  const snapshotPath = await buildFixtureSnapshot();
  server = await startServer({ snapshotPath });
  snapshot = await openSnapshotDirectory(snapshotPath);
});
afterAll(async () => {
  await server?.close();
  snapshot?.close();
});

type Raw = { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer };
function raw(method: 'GET' | 'HEAD', path: string, acceptEncoding: string, host?: string): Promise<Raw> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, headers: { 'accept-encoding': acceptEncoding, ...(host && { host }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const blank = (text: string) => text.replace(/"servedAt":"[^"]*"/g, '"servedAt":""');

const PATHS = [
  // A timeseries of every day: far more than the 1 KiB under which nothing is compressed.
  '/device/510k.json?count=decision_date',
  '/device/510k.json?search=product_code:DTB&limit=3',
  '/device/510k.json?count=product_code&limit=3',
  '/device/classification.json?search=device_class:3&limit=2',
  '/device/510k.json?search=device_name:zzzznotaword',
  '/device/510k.json?bogus=1',
];

describe('openFDA answers sent in pieces over HTTP', () => {
  it.each(PATHS)('GET %s: every byte, counted by Content-Length, plain and gzip, twice (computed, then cached)', async (path) => {
    const endpoint = path.startsWith('/device/510k.json') ? '510k' : 'classification';
    const want = blank(new TextDecoder().decode(joinBytes((await answerOpenFda(deps, snapshot, endpoint, new URL(`http://x${path}`))).chunks)));
    for (let round = 0; round < 2; round++) {
      const plain = await raw('GET', path, 'identity');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(Number(plain.headers['content-length'])).toBe(plain.body.length);
      expect(blank(plain.body.toString('utf8'))).toBe(want);

      const zipped = await raw('GET', path, 'gzip');
      if (plain.body.length > 1024) expect(zipped.headers['content-encoding']).toBe('gzip');
      expect(Number(zipped.headers['content-length'])).toBe(zipped.body.length);
      const text = zipped.headers['content-encoding'] === 'gzip' ? gunzipSync(zipped.body).toString('utf8') : zipped.body.toString('utf8');
      expect(blank(text)).toBe(want);

      const head = await raw('HEAD', path, 'identity');
      expect(head.status).toBe(plain.status);
      expect(head.body.length).toBe(0);
      expect(Number(head.headers['content-length'])).toBe(plain.body.length);
    }
  });
});

describe('the coding of an answer in pieces', () => {
  const path = '/device/510k.json?count=decision_date';
  it.each([
    ['gzip, deflate, br', 'gzip'],
    ['br;q=1, gzip;q=1', 'gzip'],
    ['br;q=1, gzip;q=0.5', 'br'],
    ['br', 'br'],
  ])('Accept-Encoding %s: %s (gzip when taken as gladly as br: its pieces are compressed once)', async (accept, coding) => {
    const plain = await raw('GET', path, 'identity');
    const coded = await raw('GET', path, accept);
    expect(coded.headers['content-encoding']).toBe(coding);
    const { brotliDecompressSync } = await import('node:zlib');
    const text = (coding === 'gzip' ? gunzipSync(coded.body) : brotliDecompressSync(coded.body)).toString('utf8');
    expect(blank(text)).toBe(blank(plain.body.toString('utf8')));
  });
});

describe('the Link header of the next page over HTTP', () => {
  it.each([
    // The lane reads this request; one with a fragment is Node's to read (and the fragment no part of the URL asked).
    ['the fast lane', '', 0],
    ['Node', '#frag', 1],
  ])('through %s: the request\'s own parameters at its origin, written as the URL standard writes one', async (_name, fragment, handedOver) => {
    const url = new URL(server.url);
    const lane = server.app.fastLane!;
    const before = lane.handedOver;
    const link = await new Promise<string | undefined>((resolve, reject) => {
      const path = `/device/510k.json?search=product_code:%22DTB%22+&limit=2&api_key=a%2Bb${fragment}`;
      const req = request({ host: url.hostname, port: url.port, path, headers: { host: 'LocalHost:80' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers.link === undefined ? undefined : String(res.headers.link)));
      });
      req.on('error', reject);
      req.end();
    });
    // By hand: the host in lower case and the default port left out; every parameter kept, as form encoding writes it.
    expect(link).toBe('<http://localhost/device/510k.json?search=product_code%3A%22DTB%22+&limit=2&api_key=a%2Bb&skip=2>; rel="next"');
    expect(lane.handedOver - before).toBe(handedOver);
  });
});
