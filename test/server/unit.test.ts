import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Manifest, ShardIndex } from '../../src/contract/index.ts';
import { pageAfter } from '../../src/operations/catalog.ts';
import { findSorted, firstShardAfter, lowerBound, shardHolding } from '../../src/snapshot/keys.ts';
import { LruCache } from '../../src/snapshot/lru.ts';
import { indexLines } from '../../src/snapshot/lines.ts';
import { jsonLinesBytes } from '../../build/write/json.ts';
import { parseSyncState } from '../../src/snapshot/sync-state.ts';
import { safeRelPath } from '../../src/snapshot/files.ts';
import { CursorCodec } from '../../src/operations/index.ts';
import { pathOf } from '../../src/api/issues.ts';
import { isJsonContentType, pickEncoding } from '../../src/api/media.ts';
import { failedLastSync, sourceStateOf } from '../../src/api/source-state.ts';
import { cacheControlFor } from '../../src/server/static.ts';

/** The server's pure parts, with tables of cases and properties. */

describe('pickEncoding', () => {
  it.each([
    [undefined, 'identity'],
    ['', 'identity'],
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, br', 'br'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0, gzip;q=0', 'identity'],
    ['*', 'br'],
    ['*;q=0', 'identity'],
    ['*, br;q=0', 'gzip'],
    ['deflate', 'identity'],
    ['x-gzip', 'gzip'],
    ['BR', 'br'],
  ])('%j → %s', (header, expected) => {
    expect(pickEncoding(header)).toBe(expected);
  });
});

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['application/json; charset=utf-8', true],
    ['APPLICATION/JSON ; charset=UTF-8', true],
    [' application/json', true],
    [undefined, false],
    ['', false],
    ['text/json', false],
    ['application/jsonp', false],
    ['application/ld+json', false],
    ['text/plain; application/json', false],
  ])('%j → %s', (header, expected) => {
    expect(isJsonContentType(header)).toBe(expected);
  });
});

describe('CursorCodec', () => {
  const codec = new CursorCodec('test secret');
  const payload = fc.constantFrom('clearance' as const, 'product-code' as const).chain((k) =>
    fc.record({
      v: fc.constant(1 as const),
      k: fc.constant(k),
      a: k === 'clearance' ? fc.stringMatching(/^K\d{6}$/) : fc.stringMatching(/^[A-Z]{3}$/),
      s: fc.stringMatching(/^[0-9a-f]{16}$/),
    }),
  );

  it('decodes what it encodes, and the cursor is URL-safe', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const cursor = codec.encode(p);
        expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(codec.decode(cursor)).toEqual(p);
      }),
    );
  });

  it('refuses any change of one character', () => {
    fc.assert(
      fc.property(payload, fc.nat(), fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'), (p, at, ch) => {
        const cursor = codec.encode(p);
        const i = at % cursor.length;
        fc.pre(cursor[i] !== ch);
        expect(codec.decode(cursor.slice(0, i) + ch + cursor.slice(i + 1))).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('refuses cursors of another key, truncated ones, and garbage', () => {
    const cursor = codec.encode({ v: 1, k: 'clearance', a: 'K123456', s: '0123456789abcdef' });
    expect(new CursorCodec('other secret').decode(cursor)).toBeNull();
    expect(codec.decode(cursor.slice(0, -2))).toBeNull();
    expect(codec.decode(`${cursor}A`)).toBeNull();
    for (const junk of ['', '=', 'a=b', 'AAAA', '😀', ' '.repeat(20)]) expect(codec.decode(junk)).toBeNull();
  });

  it('the built-in key works when no secret is configured', () => {
    const builtIn = new CursorCodec();
    const cursor = builtIn.encode({ v: 1, k: 'product-code', a: 'DXY', s: '0123456789abcdef' });
    expect(builtIn.decode(cursor)).toMatchObject({ a: 'DXY' });
    expect(() => new CursorCodec('')).toThrow(/secret/);
  });
});

/** A shard of entries `{"id": key}`, one per line, as the build writes them. */
const linesOf = (keys: readonly string[]) => indexLines(jsonLinesBytes(keys.map((id) => ({ id }))).bytes);

describe('keyset helpers', () => {
  const sortedKeys = fc.uniqueArray(fc.stringMatching(/^K\d{3}$/), { minLength: 0, maxLength: 60 }).map((a) => a.sort());

  /** Cuts sorted keys into shards of random sizes, as an index and its shards. */
  const sharded = sortedKeys.chain((keys) =>
    fc.array(fc.integer({ min: 1, max: 7 }), { minLength: keys.length, maxLength: keys.length }).map((sizes) => {
      const shards: string[][] = [];
      for (let i = 0, s = 0; i < keys.length; i += sizes[s++] ?? 1) shards.push(keys.slice(i, i + (sizes[s] ?? 1)));
      const index: ShardIndex = {
        total: keys.length,
        shards: shards.map((items, n) => ({ id: String(n), path: `${n}.json`, count: items.length, first: items[0] as string, last: items[items.length - 1] as string })),
      };
      return { keys, shards, index };
    }),
  );

  it('lowerBound and findSorted agree with a scan', () => {
    fc.assert(
      fc.property(sortedKeys, fc.stringMatching(/^K\d{3}$/), fc.boolean(), (keys, key, inclusive) => {
        const expected = keys.findIndex((k) => (inclusive ? k >= key : k > key));
        expect(lowerBound(keys, key, (k) => k, inclusive)).toBe(expected === -1 ? keys.length : expected);
        expect(findSorted(keys, key, (k) => k)).toBe(keys.includes(key) ? key : undefined);
      }),
    );
  });

  it('shardHolding finds the shard of a key, and only then', () => {
    fc.assert(
      fc.property(sharded, fc.stringMatching(/^K\d{3}$/), ({ shards, index }, key) => {
        const holder = shards.findIndex((s) => (s[0] as string) <= key && key <= (s[s.length - 1] as string));
        expect(shardHolding(index, key)?.id).toBe(holder === -1 ? undefined : String(holder));
        const after = shards.findIndex((s) => (s[s.length - 1] as string) > key);
        expect(firstShardAfter(index, key)).toBe(after === -1 ? shards.length : after);
      }),
    );
  });

  it('pageAfter returns the next entries after any key, for any limit', async () => {
    await fc.assert(
      fc.asyncProperty(sharded, fc.option(fc.stringMatching(/^K\d{3}$/), { nil: null }), fc.integer({ min: 1, max: 20 }), async ({ keys, shards, index }, after, limit) => {
        const loads: number[] = [];
        const page = await pageAfter(index, async (i) => (loads.push(i), linesOf(shards[i] ?? [])), after, limit);
        const rest = after === null ? keys : keys.filter((k) => k > after);
        expect(page.items.map((b) => (JSON.parse(new TextDecoder().decode(b)) as { id: string }).id)).toEqual(rest.slice(0, limit));
        expect(page.hasMore).toBe(rest.length > limit);
        expect(new Set(loads).size).toBe(loads.length);
      }),
      { numRuns: 300 },
    );
  });
});

describe('LruCache', () => {
  it('keeps the most recently used entries', () => {
    const lru = new LruCache<string, number>(2);
    lru.set('a', 1);
    lru.set('b', 2);
    expect(lru.get('a')).toBe(1);
    lru.set('c', 3);
    expect(lru.get('b')).toBeUndefined();
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
    expect(() => new LruCache(0)).toThrow(/capacity/);
  });
});

describe('sourceStateOf', () => {
  const manifest = {
    sourceRevision: `sha256:${'a'.repeat(64)}`,
    generatedAt: '2026-08-10T00:00:00.000Z',
    lastSuccessfulSyncAt: null,
    decisionDateMax: '2026-08-07',
    sources: [{ name: 'data/fda/510k/x/pmn7680.txt' }],
  } as unknown as Manifest;
  const now = new Date('2026-08-20T12:00:00.000Z');
  const base = { manifest, sync: null, now, maxAgeHours: 48 };

  it('no sync: unknown, with the evidence the contract gives as its example', () => {
    expect(sourceStateOf(base)).toEqual({
      mode: 'corpus',
      availability: 'available',
      freshness: 'unknown',
      freshnessEvidence: 'built from bundled files; no sync recorded; newest decision 2026-08-07',
      sourceRevision: manifest.sourceRevision,
      snapshotGeneratedAt: manifest.generatedAt,
      lastSuccessfulSyncAt: null,
      servedAt: '2026-08-20T12:00:00.000Z',
      warnings: [],
    });
  });

  it.each([
    ['2026-08-20T11:00:00.000Z', 'current'],
    ['2026-08-18T12:00:00.000Z', 'current'],
    ['2026-08-18T11:59:59.999Z', 'stale'],
    ['2026-01-01T00:00:00.000Z', 'stale'],
  ])('last sync %s → %s', (at, freshness) => {
    const state = sourceStateOf({ ...base, sync: { lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null } });
    expect(state.freshness).toBe(freshness);
    expect(state.lastSuccessfulSyncAt).toBe(at);
    expect(state.warnings).toHaveLength(freshness === 'stale' ? 1 : 0);
  });

  it('takes the newer of the manifest and the state file', () => {
    const older = '2026-08-01T00:00:00.000Z';
    const newer = '2026-08-20T00:00:00.000Z';
    const m = { ...manifest, lastSuccessfulSyncAt: newer } as Manifest;
    expect(sourceStateOf({ ...base, manifest: m, sync: { lastAttemptAt: older, lastSuccessfulSyncAt: older, lastFailure: null } }).lastSuccessfulSyncAt).toBe(newer);
    expect(sourceStateOf({ ...base, manifest: { ...manifest, lastSuccessfulSyncAt: older } as Manifest, sync: { lastAttemptAt: newer, lastSuccessfulSyncAt: newer, lastFailure: null } }).lastSuccessfulSyncAt).toBe(newer);
  });

  it('no snapshot: unavailable, with nulls', () => {
    expect(sourceStateOf({ ...base, manifest: null })).toMatchObject({ availability: 'unavailable', freshness: 'unknown', sourceRevision: null, snapshotGeneratedAt: null, lastSuccessfulSyncAt: null });
  });

  it('adds the operation warnings after its own', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const state = sourceStateOf({ ...base, sync: { lastAttemptAt: at, lastSuccessfulSyncAt: at, lastFailure: null }, warnings: ['Cursor sentence.'] });
    expect(state.warnings).toHaveLength(2);
    expect(state.warnings[1]).toBe('Cursor sentence.');
  });

  it.each([
    [{ lastAttemptAt: '2026-08-20T00:00:00Z', lastSuccessfulSyncAt: '2026-08-19T00:00:00Z', lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, true],
    [{ lastAttemptAt: '2026-08-20T00:00:00Z', lastSuccessfulSyncAt: '2026-08-20T00:00:00Z', lastFailure: { at: '2026-08-19T00:00:00Z', reason: 'x' } }, false],
    [{ lastAttemptAt: '2026-08-21T00:00:00Z', lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, false],
    [{ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'x' } }, true],
    [{ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: null }, false],
  ])('failedLastSync(%j) → %s', (sync, failed) => {
    expect(failedLastSync(sync) !== null).toBe(failed);
  });
});

describe('parseSyncState', () => {
  it('reads the members the server needs and ignores the rest', () => {
    expect(parseSyncState(JSON.stringify({ lastAttemptAt: '2026-08-20T02:00:00+02:00', lastSuccessfulSyncAt: null, lastFailure: { at: '2026-08-20T00:00:00Z', reason: 'r', code: 5 }, files: {} }))).toEqual({
      lastAttemptAt: '2026-08-20T00:00:00.000Z',
      lastSuccessfulSyncAt: null,
      lastFailure: { at: '2026-08-20T00:00:00.000Z', reason: 'r' },
    });
    expect(parseSyncState('{}')).toEqual({ lastAttemptAt: null, lastSuccessfulSyncAt: null, lastFailure: null });
  });

  it.each(['', '{', '[]', '{"lastAttemptAt":"yesterday"}', '{"lastFailure":{"at":"2026-08-20T00:00:00Z"}}'])('%j is not usable', (text) => {
    expect(typeof parseSyncState(text)).toBe('string');
  });
});

describe('paths', () => {
  it.each([
    ['records/K1234.json', 'records/K1234.json'],
    ['manifest.json', 'manifest.json'],
    ['../x', null],
    ['records/../../x', null],
    ['/etc/passwd', null],
    ['records//x', null],
    ['./x', null],
    ['a\\b', null],
    ['a\0b', null],
    ['', null],
    ['.', null],
  ])('safeRelPath(%j) → %j', (path, expected) => {
    expect(safeRelPath(path)).toBe(expected);
  });

  it.each([
    ['input', ['pageSize'], 'input.pageSize'],
    ['input', [], 'input'],
    ['input', ['a', 0, 'b'], 'input.a[0].b'],
    ['input', ['odd key'], 'input["odd key"]'],
  ] as const)('pathOf(%j, %j) → %s', (prefix, path, expected) => {
    expect(pathOf(prefix, path)).toBe(expected);
  });

  it.each([
    ['records/K1234.json', 'public, no-cache'],
    ['manifest.json', 'public, no-cache'],
    ['pagefind/pagefind-entry.json', 'public, no-cache'],
    ['pagefind/fragment/en_6a3c1f2.pf_fragment', 'public, max-age=31536000, immutable'],
    ['pagefind/index/en_a1b2c3d4e5.pf_index', 'public, max-age=31536000, immutable'],
    ['search/part-0a1b2c3d4e5f.bin', 'public, max-age=31536000, immutable'],
    ['product-codes/A.json', 'public, no-cache'],
  ])('cacheControlFor(%j) → %s', (path, expected) => {
    expect(cacheControlFor(path)).toBe(expected);
  });
});
