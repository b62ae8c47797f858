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
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * The chunk cache's count of what the chunked index holds, checked against V8's own count of the memory held in
 * ArrayBuffers (every typed array the index, its views and the engine's kept values are made of): after a run of
 * requests of every kind, the memory the index holds (what goes when it is dropped) is within what the cache counts,
 * and so within its budget once every request is answered.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes held in ArrayBuffers now, after a full collection. */
function arrayBuffers(): number {
  gc();
  gc();
  return process.memoryUsage().arrayBuffers;
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

  beforeAll(async () => {
    const dir = await buildFixtureSnapshot();
    const index = await loadSearchIndex((p) => readFile(join(dir, p)));
    files = await buildSearchChunks(index as unknown as SearchIndexData, '0'.repeat(64));
    reqs = requests(index);
  }, 120_000);

  for (const share of [1, 0.5]) {
    it(`holds no more than it counts, with a budget ${share === 1 ? 'that keeps everything' : 'of half of that'}`, async () => {
      // The bytes counted with no bound: the budget of the second run is half of them.
      const all = new ChunkedIndex(files.directory, reader(files));
      await answerAll(all, reqs);
      const budget = share === 1 ? Number.POSITIVE_INFINITY : Math.floor(all.cache.bytes * share);

      const before = arrayBuffers();
      let chunked: ChunkedIndex | null = new ChunkedIndex(files.directory, reader(files), new ChunkCache(budget));
      expect(await answerAll(chunked, reqs)).toBeGreaterThan(0);
      const counted = chunked.cache.bytes;
      const alive = arrayBuffers();
      chunked = null;
      const held = alive - arrayBuffers();
      // The measure sees the index: most of what it holds is typed arrays.
      expect(held).toBeGreaterThan(counted / 4);
      expect(alive - before).toBeGreaterThanOrEqual(held * 0.9);
      expect(held).toBeLessThanOrEqual(counted);
      expect(held).toBeLessThanOrEqual(budget);
    });
  }
});
