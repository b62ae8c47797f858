import { beforeAll, describe, expect, it } from 'vitest';
import { answerFeed } from '../../src/api/feed.ts';
import { jsonHeaders } from '../../src/api/json-headers.ts';
import { openSnapshotDirectory } from '../../src/node/index.ts';
import type { Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * A feed's ETag names its question with enough bits that two questions never share one, and names the coding it was
 * sent in: a 304 only for a tag of the same question, in a coding the request takes.
 */
let snapshot: Snapshot;
beforeAll(async () => {
  snapshot = await openSnapshotDirectory(await buildFixtureSnapshot());
});

const request = (url: string, headers: Record<string, string> = {}) => {
  const lower = Object.fromEntries(Object.entries({ host: 'feeds.example', ...headers }).map(([k, v]) => [k.toLowerCase(), v]));
  return { url, query: new URL(url, 'http://x').searchParams, header: (name: string) => lower[name.toLowerCase()] };
};

/** The tag the service wrote before: FNV-1a of 32 bits over the origin and the URL. */
function fnv32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** Two feed URLs whose 32-bit tags were equal at this origin (found by a search over feeds of two words). */
const COLLIDED = ['/v1/feed?query=stent%20kit&yearFrom=1978&limit=479', '/v1/feed?query=stent%20needle&yearFrom=2002&limit=466'] as const;

describe('feed ETags', () => {
  it('two feeds whose tags collided before have tags of their own; one\'s tag is not a 304 for the other', async () => {
    const [a, b] = COLLIDED;
    expect(fnv32(`https://feeds.example ${a}`)).toBe(fnv32(`https://feeds.example ${b}`));
    const tagA = (await answerFeed(request(a), snapshot)).headers.ETag!;
    const tagB = (await answerFeed(request(b), snapshot)).headers.ETag!;
    expect(tagA).toMatch(/^"[0-9a-f]{16}-[0-9a-f]{32}"$/);
    expect(tagA).not.toBe(tagB);
    expect((await answerFeed(request(a, { 'If-None-Match': tagA }), snapshot)).status).toBe(304);
    expect((await answerFeed(request(b, { 'If-None-Match': tagA }), snapshot)).status).toBe(200);
  });

  it('an answer sent compressed carries a tag naming its coding, apart from identity\'s', () => {
    const own = { ETag: '"abc-123"' };
    expect(jsonHeaders(10, 'identity', own).ETag).toBe('"abc-123"');
    expect(jsonHeaders(10, 'gzip', own).ETag).toBe('"abc-123-gzip"');
    expect(jsonHeaders(10, 'br', own).ETag).toBe('"abc-123-br"');
  });

  it('a 304 for a coded tag only when the request takes that coding', async () => {
    const url = '/v1/feed?productCode=DQY';
    const tag = (await answerFeed(request(url), snapshot)).headers.ETag!;
    const gzipTag = `${tag.slice(0, -1)}-gzip"`;
    expect((await answerFeed(request(url, { 'If-None-Match': gzipTag, 'Accept-Encoding': 'gzip' }), snapshot)).status).toBe(304);
    expect((await answerFeed(request(url, { 'If-None-Match': `W/${gzipTag}`, 'Accept-Encoding': 'gzip, br' }), snapshot)).status).toBe(304);
    expect((await answerFeed(request(url, { 'If-None-Match': gzipTag }), snapshot)).status).toBe(200);
    expect((await answerFeed(request(url, { 'If-None-Match': gzipTag, 'Accept-Encoding': 'br' }), snapshot)).status).toBe(200);
    expect((await answerFeed(request(url, { 'If-None-Match': tag }), snapshot)).status).toBe(304);
  });
});
