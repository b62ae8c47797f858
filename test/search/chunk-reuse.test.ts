import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSearchChunks, type ChunkFiles } from '../../build/index/chunks.ts';
import { ChunkCache } from '../../src/search/chunk-cache.ts';
import { chunksOfPrefix } from '../../src/search/chunk-directory.ts';
import { ChunkedIndex } from '../../src/search/chunked.ts';
import type { SearchIndexData } from '../../src/search/codec.ts';
import { runSearch, runSearchSliced, type SearchRequest } from '../../src/search/engine.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import type { SearchIndex } from '../../src/search/model.ts';
import { countKept } from '../../src/search/kept.ts';
import { markArrays, prepareWord, TierLoans } from '../../src/search/words.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/**
 * What the chunked index makes again and what it reuses while the same requests come back: the index over every
 * loaded file, and the engine's per-document mark arrays. Answers are checked against the whole index, which reads
 * forward lists where the chunked one reads marks.
 */
const BASE = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };

function reader(files: ChunkFiles): (path: string) => Promise<Uint8Array> {
  const map = new Map(files.files.map((f) => [f.path, f.bytes]));
  return async (path) => new Uint8Array(gunzipSync(map.get(path)!));
}

/** A request answered as the Worker answers it: its files held by a lease, over the index it gets. */
async function answer(chunked: ChunkedIndex, req: SearchRequest): Promise<unknown> {
  const lease = chunked.lease();
  try {
    const { kNumbers: _k, ...rest } = runSearch(await chunked.ensure(req, true, undefined, lease), req);
    return rest;
  } finally {
    lease.release();
  }
}

function without(index: SearchIndex, req: SearchRequest): unknown {
  const { kNumbers: _k, ...rest } = runSearch(index, req);
  return rest;
}

describe('the chunked index while the same requests come back', () => {
  let index: SearchIndex;
  let files: ChunkFiles;
  let snapshotDir: string;

  beforeAll(async () => {
    snapshotDir = await buildFixtureSnapshot();
    index = await loadSearchIndex((p) => readFile(join(snapshotDir, p)));
    files = await buildSearchChunks(index as unknown as SearchIndexData, '0'.repeat(64), { targetBytes: 300, idTargetBytes: 20, kBlockDocs: 16 });
  }, 120_000);

  it('makes its index over everything again once a file it lacks is read twice, not an index per request', async () => {
    const dir = files.directory;
    const chunked = new ChunkedIndex(dir, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    // Two words in term chunks of their own: the second comes in after the index over the first was made.
    const first = index.terms[0]!;
    const second = index.terms.find((t) => !chunksOfPrefix(dir, t).some((c) => chunksOfPrefix(dir, first).includes(c)))!;
    expect(second).toBeDefined();
    const req = (query: string): SearchRequest => ({ ...BASE, query, facets: [] });
    expect(await answer(chunked, req(first))).toEqual(without(index, req(first)));
    const made = chunked.indexesMade;
    for (let i = 0; i < 8; i++) expect(await answer(chunked, req(second))).toEqual(without(index, req(second)));
    // One of its own for the first request that read the new chunk, the index over everything for the next.
    expect(chunked.indexesMade - made).toBe(2);
    const after = chunked.indexesMade;
    expect(await answer(chunked, req(first))).toEqual(without(index, req(first)));
    expect(chunked.indexesMade).toBe(after);
  });

  it('still makes an index of a request’s own while files come and go, and answers as the whole index does', async () => {
    const dir = files.directory;
    // A budget below one request's files: every request reads its files again and lets the others go.
    const chunked = new ChunkedIndex(dir, reader(files), new ChunkCache(1));
    const words = index.terms.filter((_, t) => t % Math.max(1, Math.floor(index.terms.length / 12)) === 0);
    for (const word of words) {
      const r: SearchRequest = { ...BASE, query: word, facets: [{ field: 'productCode', size: 3, order: 'count' }] };
      expect([word, await answer(chunked, r)]).toEqual([word, without(index, r)]);
      expect(chunked.cache.bytes).toBeLessThanOrEqual(chunked.cache.budget);
    }
    expect(chunked.indexesMade).toBeGreaterThan(1);
  });

  it('lends a checked word the mark arrays of earlier words, zeroed: answers stay the whole index’s', async () => {
    const chunked = new ChunkedIndex(files.directory, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    const postings = (t: number) => index.termDocs.subarray(index.termDocOffsets[t]!, index.termDocOffsets[t + 1]!);
    // Common words and prefixes (one letter, two), each checked on the documents of a rarer word found with it (and
    // elsewhere too): the marks of one word's terms, and of a range of terms, cleared for the next.
    const docsOf = (prefix: string) => new Set(index.terms.flatMap((term, t) => (term.startsWith(prefix) ? [...postings(t)] : [])));
    const counts = index.terms.map((_, t) => postings(t).length);
    const commons = index.terms.map((_, t) => t).sort((a, b) => counts[b]! - counts[a]!).slice(0, 4).map((t) => index.terms[t]!);
    const reqs: SearchRequest[] = [];
    for (const common of [...commons, ...commons.map((w) => w.slice(0, 1)), ...commons.map((w) => w.slice(0, 2))]) {
      const withCommon = docsOf(common);
      const partners = index.terms.filter((term, t) => !term.startsWith(common) && counts[t]! * 12 <= withCommon.size && postings(t).some((d) => withCommon.has(d)) && postings(t).some((d) => !withCommon.has(d)));
      for (const p of partners.slice(0, 3)) reqs.push({ ...BASE, query: `${p} ${common}`, facets: [{ field: 'productCode', size: 5, order: 'count' }] });
    }
    expect(reqs.length).toBeGreaterThan(8);
    // Every file in first, so that all requests read one index over everything.
    for (const r of reqs) await chunked.ensure(r, true);
    const { lent, made } = markArrays;
    let found = 0;
    for (const r of [...reqs, ...reqs]) {
      const want = without(index, r) as { total: number };
      expect([r.query, await answer(chunked, r)]).toEqual([r.query, want]);
      found += want.total;
    }
    expect(found).toBeGreaterThan(0);
    // Most requests checked their common word by marks, taken from the index’s pool but for the first.
    expect(markArrays.lent - lent).toBeGreaterThanOrEqual(reqs.length);
    expect(markArrays.made - made).toBeLessThanOrEqual(1);
  });

  it('answers searches that overlap as the whole index does, making no index and counting no more as they come back', async () => {
    const chunked = new ChunkedIndex(files.directory, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    // Words scanned and words checked, each search paused at every yield point so that they overlap.
    const words = index.terms.filter((_, t) => t % Math.max(1, Math.floor(index.terms.length / 16)) === 0);
    const reqs: SearchRequest[] = words.flatMap((w) => [{ ...BASE, query: w }, { ...BASE, query: `${w} ${w.slice(0, 1)} s` }]);
    for (const r of reqs) await chunked.ensure(r, true);
    const pause = () => new Promise<void>((ok) => setImmediate(ok));
    const pass = () =>
      Promise.all(
        reqs.map(async (r) => {
          const lease = chunked.lease();
          try {
            const { kNumbers: _k, ...got } = await runSearchSliced(await chunked.ensure(r, true, undefined, lease), r, { pause, sliceSteps: 1 });
            expect([r.query, got]).toEqual([r.query, without(index, r)]);
          } finally {
            lease.release();
          }
        }),
      );
    const made = chunked.indexesMade;
    const bytes: number[] = [];
    for (let i = 0; i < 5; i++) {
      await pass();
      bytes.push(chunked.cache.bytes);
    }
    expect(chunked.indexesMade).toBe(made);
    // What is counted does not grow while the same searches come back: arrays let go of are no longer counted.
    expect(bytes.slice(1)).toEqual(bytes.slice(1).map(() => bytes[1]));
  });

  it('answers a request whose files are in without a promise: the index and K numbers the reads would give', async () => {
    const chunked = new ChunkedIndex(files.directory, reader(files), new ChunkCache(Number.POSITIVE_INFINITY));
    const words = index.terms.filter((_, t) => t % Math.max(1, Math.floor(index.terms.length / 8)) === 0);
    let warm = 0;
    for (const w of words) {
      for (const req of [{ ...BASE, query: w }, { ...BASE, query: w, page: 2, pageSize: 3, sort: 'decisionDate:asc' as const }]) {
        const expected = runSearch(index, req);
        const lease = chunked.lease();
        try {
          // Cold, `ready` names no index (a file is to be read) and holds nothing it lacks; once read, it does.
          const before = chunked.ready(req, true, lease);
          const ix = before ?? (await chunked.ensure(req, true, undefined, lease));
          if (before) warm++;
          expect(chunked.ready(req, true, lease)).not.toBeNull();
          const page = new Uint32Array(expected.kNumbers.map((k) => index.docKNumber.indexOf(Number(k.slice(1)))));
          const now = chunked.kNumbersLoaded(page, lease);
          const read = await chunked.kNumbers(page, lease);
          expect([w, read]).toEqual([w, expected.kNumbers]);
          // Null only while a block is to be read; else the same K numbers.
          if (now !== null) expect(now).toEqual(read);
          expect(chunked.kNumbersLoaded(page, lease)).toEqual(read);
          const { kNumbers: _k, ...rest } = runSearch(ix, req);
          const { kNumbers: _e, ...whole } = expected;
          expect([w, rest]).toEqual([w, whole]);
        } finally {
          lease.release();
        }
      }
    }
    // The second request of a word finds its files in: at least one answered without a read.
    expect(warm).toBeGreaterThan(0);
  });

  it('counts for an index exactly the tier arrays its pool keeps, whatever order searches give them back in', async () => {
    // An index of its own (the pool is per index), with a counter of what is kept for it.
    const own = await loadSearchIndex((p) => readFile(join(snapshotDir, p)));
    let counted = 0;
    countKept(own, (bytes) => (counted += bytes));
    const w = prepareWord(own, index.terms[0]!);
    const lend = (n: number) => Array.from({ length: n }, () => {
      const loans = new TierLoans(own);
      loans.scan(w, 0, own.docCount);
      return loans;
    });
    for (const l of lend(2)) l.giveBack();
    expect(counted).toBe(2 * own.docCount);
    for (let round = 0; round < 3; round++) {
      // Two taken from the pool and one made; the made one back first, then the two: the pool keeps two.
      const [a, b, made] = lend(3);
      for (const l of [made!, a!, b!]) l.giveBack();
      expect([round, counted]).toEqual([round, 2 * own.docCount]);
    }
  });
});
