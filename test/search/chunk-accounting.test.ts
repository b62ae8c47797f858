import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSearchChunks, type ChunkFiles } from '../../build/index/chunks.ts';
import { FACET_FIELDS, SORTS } from '../../src/contract/index.ts';
import { ChunkCache } from '../../src/search/chunk-cache.ts';
import { ChunkedIndex } from '../../src/search/chunked.ts';
import type { SearchIndexData } from '../../src/search/codec.ts';
import { runSearch, type SearchRequest } from '../../src/search/engine.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import type { SearchIndex } from '../../src/search/model.ts';
import { answerQuery } from '../../src/api/query-answer.ts';
import { createService, ISOLATE_HEAP_BYTES } from '../../src/worker/service.ts';
import { ROUTES, type RouteContext } from '../../src/api/routes.ts';
import { defaultExportTables } from '../../src/operations/export-tables.ts';
import { LAYOUT, ShardIndex } from '../../src/contract/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';

/**
 * The chunk cache's count of what the chunked index holds, checked against V8's own count of the memory held in
 * ArrayBuffers (every typed array the index, its views and the engine's kept values are made of): after a run of
 * requests of every kind, the memory the index holds (what came with it and is alive) is within what the cache counts,
 * and so within its budget once every request is answered.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Bytes held in ArrayBuffers, after full collections until two reads agree (V8 frees the backing stores of collected
 * buffers on a thread of its own, so one read may still count some): at most 50 rounds.
 */
async function arrayBuffers(): Promise<number> {
  let last = -1;
  for (let round = 0; round < 50; round++) {
    gc();
    await new Promise((ok) => setTimeout(ok, 0));
    const now = process.memoryUsage().arrayBuffers;
    if (now === last) return now;
    last = now;
  }
  throw new Error('the ArrayBuffers in use did not settle after 50 collections');
}

const BASE = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };

/** Requests of every kind that keeps something beyond itself: sorts, facets, filters by column, dates, exclusions. */
function requests(index: SearchIndex): SearchRequest[] {
  const word = index.terms[Math.floor(index.terms.length / 2)]!;
  const common = index.terms.reduce((best, _, t) => (index.termDocOffsets[t + 1]! - index.termDocOffsets[t]! > index.termDocOffsets[best + 1]! - index.termDocOffsets[best]! ? t : best), 0);
  const queries = ['', word, index.terms[common]!, `${word} ${index.terms[common]!}`, `-${index.terms[common]!}`, `${word} OR pump`, `"${index.terms[common]!} system"`, 'panel:cardio', 'class:2', 'type:trad', 'country:US', 'state:ca', 'decided:2020', 'received:>=2010-01', 'reviewdays:>90', `code:${index.codes[0]!}`, 'thirdparty:no'];
  const out: SearchRequest[] = [];
  for (const query of queries) {
    out.push({ ...BASE, query, facets: FACET_FIELDS.filter((f) => f !== 'predicate').map((field) => ({ field, size: 5, order: 'count' as const })) });
    for (const sort of SORTS) out.push({ ...BASE, query, sort, facets: [] });
  }
  return out;
}

/** Reads a file from memory, as a host would serve it, inflated. */
function reader(files: ChunkFiles): (path: string) => Promise<Uint8Array> {
  const map = new Map(files.files.map((f) => [f.path, f.bytes]));
  return async (path) => new Uint8Array(gunzipSync(map.get(path)!));
}

/** Answers each request as the Worker does: its files held by a lease, over the index it gets, then let go of. */
async function answerAll(chunked: ChunkedIndex, reqs: readonly SearchRequest[]): Promise<number> {
  let total = 0;
  for (const req of reqs) {
    const lease = chunked.lease();
    try {
      const ix = await chunked.ensure(req, true, undefined, lease);
      total += runSearch(ix, req).total;
    } finally {
      lease.release();
    }
    expect(chunked.cache.bytes).toBeLessThanOrEqual(chunked.cache.budget);
  }
  return total;
}

describe('the chunk cache’s count of what the chunked index holds', () => {
  let files: ChunkFiles;
  let reqs: SearchRequest[];
  let whole: SearchIndex;

  beforeAll(async () => {
    const dir = await buildFixtureSnapshot();
    const index = await loadSearchIndex((p) => readFile(join(dir, p)));
    whole = index;
    files = await buildSearchChunks(index as unknown as SearchIndexData, '0'.repeat(64));
    reqs = requests(index);
  }, 120_000);

  it('holds no more in ArrayBuffers than it counts, after requests of every kind', async () => {
    const before = await arrayBuffers();
    const chunked = new ChunkedIndex(files.directory, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    expect(await answerAll(chunked, reqs)).toBeGreaterThan(0);
    const counted = chunked.cache.bytes;
    // What the index holds: the ArrayBuffers that came with it and are still alive (the index still is).
    const held = (await arrayBuffers()) - before;
    expect(chunked.cache.size).toBeGreaterThan(0);
    // The measure sees the index: most of what it holds is typed arrays.
    expect(held).toBeGreaterThan(counted / 4);
    expect(held).toBeLessThanOrEqual(counted);
  });

  it('makes the decision dates only for a request that reads them, and keeps them with their file', async () => {
    const chunked = new ChunkedIndex(files.directory, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    const decided = files.directory.files.decided.path;
    const made = () => [...(chunked.cache.peek(decided)?.derived.keys() ?? [])].sort();
    // Every search reads the years (the default facet); a word searched by relevance reads no date.
    await answerAll(chunked, [{ ...BASE, query: whole.terms[0]!, facets: [] }]);
    expect(made()).toEqual(['years']);
    const before = chunked.cache.bytes;
    await answerAll(chunked, [{ ...BASE, query: 'decided:>=2000-01-01', facets: [] }]);
    expect(made()).toEqual(['days', 'years']);
    // Counted with the file: four bytes a document, and the same dates as the whole index's.
    expect(chunked.cache.bytes - before).toBeGreaterThanOrEqual(4 * whole.docCount);
    const ix = await chunked.ensure({ ...BASE, query: 'decided:>=2000-01-01', facets: [] }, true);
    expect(ix.docDecided).toEqual(whole.docDecided);
    expect(ix.docYear).toEqual(whole.docYear);
  });
});

/** The snapshot folder as a Worker's static assets binding: plain GETs, a Range header for a record. */
function assetsOf(dir: string): { fetch(request: Request): Promise<Response> } {
  return {
    async fetch(request) {
      const path = decodeURIComponent(new URL(request.url).pathname.replace(/^\/snapshot\//, ''));
      const bytes = await readFile(join(dir, path)).catch(() => null);
      if (!bytes) return new Response(null, { status: 404 });
      const range = /^bytes=(\d+)-(\d+)$/.exec(request.headers.get('range') ?? '');
      return range ? new Response(bytes.subarray(Number(range[1]), Number(range[2]) + 1), { status: 206 }) : new Response(bytes);
    },
  };
}

describe('the Worker’s one budget for what its isolate keeps', () => {
  it('counts the record and answer caches with the search files, lets files go for them, and holds no more than it counts', async () => {
    const dir = await buildFixtureSnapshot();
    const records = await allRecords(dir);
    // The isolate's own heap is counted first; 900 KB are left for the caches. Record caches (and the 512 KB of
    // buffers records are read into) large enough that the search files must make room for them.
    const budget = ISOLATE_HEAP_BYTES + 900 * 1024;
    const service = createService({ ASSETS: assetsOf(dir), SEARCH_CACHE_BYTES: String(budget), SHARD_CACHE_BYTES: String(200 * 1024), RECORD_TABLE_CACHE_BYTES: String(64 * 1024), ANSWER_CACHE_BYTES: String(64 * 1024) });
    const ask = async (operation: string, input: unknown) => {
      const snapshot = await service.watch.current(Date.now());
      const body = new TextEncoder().encode(JSON.stringify({ version: 1, operation: `device-510k.${operation}`, input }));
      const answer = await answerQuery(service.deps, snapshot, body, 'application/json');
      service.settle();
      expect(answer.status).toBe(200);
      expect(service.searchCache.bytes).toBeLessThanOrEqual(budget);
      return snapshot!;
    };
    // The snapshot opened and its small files read: what the isolate holds before any cache fills.
    await ask('meta', {});
    const before = await arrayBuffers();
    const facets = FACET_FIELDS.filter((f) => f !== 'predicate').map((field) => ({ field, size: 5, order: 'count' as const }));
    for (const query of ['catheter', 'system', 'pump', 'panel:cardio', 'decided:>=2010-01-01']) await ask('search', { ...BASE, query, facets });
    const searchFiles = service.searchCache.size;
    let snapshot = await ask('meta', {});
    for (const r of records) snapshot = await ask('detail', { id: r.kNumber });
    // The record caches hold what the details read, counted against the budget: search files went to make room.
    const others = snapshot.keptBytes + service.deps.answerCache!.weightFor(snapshot);
    expect(others).toBeGreaterThan((budget - ISOLATE_HEAP_BYTES) / 4);
    expect(service.searchCache.size).toBeLessThan(searchFiles);
    expect(service.searchCache.bytes).toBeGreaterThanOrEqual(ISOLATE_HEAP_BYTES + others);
    // V8's count of what came since (ArrayBuffers: the files, the records, the answers) is within the cache's count.
    const held = (await arrayBuffers()) - before;
    const caches = service.searchCache.bytes - ISOLATE_HEAP_BYTES;
    expect(held).toBeGreaterThan(caches / 4);
    expect(held).toBeLessThanOrEqual(caches);
  });

  it('counts the record table’s parts an export keeps, its own and not the process’s, and stays within the budget', async () => {
    const dir = await buildFixtureSnapshot();
    const budget = ISOLATE_HEAP_BYTES + 900 * 1024;
    const service = createService({ ASSETS: assetsOf(dir), SEARCH_CACHE_BYTES: String(budget) });
    const snapshot = (await service.watch.current(Date.now()))!;
    const route = ROUTES.find((r) => r.id === 'export')!;
    const url = '/v1/export?format=csv&sort=decisionDate%3Adesc';
    const context = { snapshot, problem: null, deps: service.deps, lendsChunks: false, turn: (work) => work(), onOperation: () => {}, body: async () => new Uint8Array(0) } as RouteContext;
    const shared = defaultExportTables().bytes;
    const answer = await route.handler({ method: 'GET', path: '/v1/export', url, origin: 'http://worker', query: new URL(url, 'http://worker').searchParams, rest: '', header: () => undefined }, context);
    if (answer.kind !== 'stream') throw new Error(`expected a stream, got ${answer.kind}`);
    let rows = 0;
    for await (const chunk of answer.chunks) rows += chunk.reduce((n, b) => n + (b === 0x0a ? 1 : 0), 0);
    service.settle();
    // Every record, a header line first: counted from the shard index, not from the export.
    const index = ShardIndex.parse(JSON.parse(await readFile(join(dir, LAYOUT.recordIndex), 'utf8')));
    expect(rows).toBe(index.shards.reduce((n, sh) => n + sh.count, 0) + 1);
    const tables = service.deps.exportTables!;
    expect(tables.bytes).toBeGreaterThan(0);
    expect(defaultExportTables().bytes).toBe(shared);
    expect(service.searchCache.bytes).toBeGreaterThanOrEqual(ISOLATE_HEAP_BYTES + tables.bytes);
    expect(service.searchCache.bytes).toBeLessThanOrEqual(budget);
  });

  it('refuses an export table cache of no bytes, naming the variable, as Node does', async () => {
    const dir = await buildFixtureSnapshot();
    for (const bad of ['0', '0.5', '-1', 'lots']) {
      expect(() => createService({ ASSETS: assetsOf(dir), EXPORT_TABLE_CACHE_BYTES: bad })).toThrow(/EXPORT_TABLE_CACHE_BYTES/);
    }
    expect(createService({ ASSETS: assetsOf(dir), EXPORT_TABLE_CACHE_BYTES: '1024' }).deps.exportTables!.capacity).toBe(1024);
  });
});
