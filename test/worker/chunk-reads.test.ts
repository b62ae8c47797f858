import { beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_PATH_PATTERN, SEARCH_CHUNKS_PATH, type SearchChunks } from '../../src/contract/search-chunks.ts';
import type { ExportInput, SearchInput } from '../../src/contract/index.ts';
import { catalog } from '../../src/operations/catalog.ts';
import { classification } from '../../src/operations/classification.ts';
import { CursorCodec } from '../../src/operations/cursor.ts';
import { detail } from '../../src/operations/detail.ts';
import { meta } from '../../src/operations/meta.ts';
import { prepareExport } from '../../src/operations/export.ts';
import { parseQuery } from '../../src/search/grammar.ts';
import { prepareSearch, search, searchFromChunks } from '../../src/operations/search.ts';
import { JsonBytes, type OperationContext } from '../../src/operations/types.ts';
import { ChunkCache } from '../../src/search/chunk-cache.ts';
import { Snapshot } from '../../src/snapshot/index.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allProductCodes, allRecords } from '../server/helpers.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { countingStorage } from '../helpers/counting-storage.ts';

/**
 * What a Worker reads of the search index, through the operations it runs (src/worker/source.ts opens each snapshot
 * with searchFromChunks): only the chunk directory before the first request, no search file for the operations
 * that do not search, and for a search only the chunks its words reach and the columns its facets count, each once.
 */
let path: string;
let directory: SearchChunks;

beforeAll(async () => {
  path = await buildFixtureSnapshot();
  directory = JSON.parse(await readFile(join(path, SEARCH_CHUNKS_PATH), 'utf8')) as SearchChunks;
});

/** A snapshot over the folder, every read of a file listed. */
async function opened(budget: number | null): Promise<{ snapshot: Snapshot; reads: string[] }> {
  const { storage, reads } = countingStorage(path);
  const snapshot = await Snapshot.fromStorage(storage, await readFile(join(path, 'manifest.json')));
  if (budget !== null) await searchFromChunks(snapshot, new ChunkCache(budget));
  return { snapshot, reads };
}

const ctx = (snapshot: Snapshot): OperationContext => ({ snapshot, servedAt: new Date(0), cursors: new CursorCodec('x'.repeat(32)) });
const INPUT: SearchInput = { query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 10 };
const searchFiles = (reads: readonly string[]) => reads.filter((p) => p.startsWith('search/'));

/** The answer's bytes as sent (the data and the page). */
async function answerOf(snapshot: Snapshot, input: SearchInput): Promise<string> {
  const result = await search(prepareSearch(input), ctx(snapshot));
  return JSON.stringify({ data: new TextDecoder().decode(result.data instanceof JsonBytes ? result.data.bytes : new TextEncoder().encode(JSON.stringify(result.data))), page: result.page, facets: result.facets instanceof JsonBytes ? new TextDecoder().decode(result.facets.bytes) : result.facets });
}

/** The term chunks a word's prefix range meets, found by reading the directory's word ranges. */
function termChunksOf(word: string): string[] {
  return directory.termChunks.filter((c) => c.last >= word && (c.first <= word || c.first.startsWith(word))).map((c) => c.file.path);
}

describe('the Worker reads only what a request needs of the chunked index', () => {
  it('reads the chunk directory at start, and no search file for detail, meta, classification and catalog', async () => {
    const { snapshot, reads } = await opened(24 * 1024 * 1024);
    expect(searchFiles(reads)).toEqual([SEARCH_CHUNKS_PATH]);
    reads.length = 0;
    const [record] = await allRecords(path);
    const [code] = await allProductCodes(path);
    await detail({ id: record!.kNumber }, ctx(snapshot));
    await meta({}, ctx(snapshot));
    await classification({ productCode: code!.productCode }, ctx(snapshot));
    await catalog({ kind: 'clearance', limit: 20, cursor: null }, ctx(snapshot));
    await catalog({ kind: 'product-code', limit: 20, cursor: null }, ctx(snapshot));
    expect(reads.length).toBeGreaterThan(0);
    expect(searchFiles(reads)).toEqual([]);
  });

  it('reads a search’s word chunks, its facets’ columns and its page’s K number blocks, each once, and answers as the whole index does', async () => {
    const whole = await opened(null);
    const want = await answerOf(whole.snapshot, INPUT);
    expect(searchFiles(whole.reads).some((p) => p.startsWith('search/part-'))).toBe(true);

    const { snapshot, reads } = await opened(24 * 1024 * 1024);
    reads.length = 0;
    expect(await answerOf(snapshot, INPUT)).toBe(want);
    const read = searchFiles(reads);
    expect(new Set(read).size).toBe(read.length);
    const words = termChunksOf('catheter');
    expect(words.length).toBeGreaterThan(0);
    const f = directory.files;
    // The word's chunks, the dictionaries, and the columns the default facets count (codes, applicants).
    for (const p of [...words, f.dicts.path, f.docCode.path, f.docApplicant.path, f.applicants.path]) expect(read).toContain(p);
    // Nothing a plain word and the default facets do not read: no other word's chunk, no phrase lists, no whole K numbers.
    const otherTerms = directory.termChunks.map((c) => c.file.path).filter((p) => !words.includes(p));
    for (const p of [...otherTerms, f.docTerms.path, f.docSeq.path, f.docKNumber.path]) expect(read).not.toContain(p);
    const blocks = read.filter((p) => directory.kBlocks.some((b) => b.path === p));
    expect(blocks.length).toBeGreaterThan(0);
    expect(blocks.length).toBeLessThanOrEqual(INPUT.pageSize);
    expect(read.length).toBeLessThan(directory.termChunks.length + directory.kBlocks.length + Object.keys(f).length);

    // The same search again reads nothing: its files are in the cache.
    reads.length = 0;
    expect(await answerOf(snapshot, INPUT)).toBe(want);
    expect(searchFiles(reads)).toEqual([]);
  });

  it('with a budget of 0 bytes reads every file again for every request, keeps nothing after it, and answers the same', async () => {
    const whole = await opened(null);
    const inputs: SearchInput[] = [INPUT, { ...INPUT, query: 'pump', page: 2, pageSize: 5 }, { ...INPUT, query: '', yearFrom: 2000, yearTo: 2020 }];
    const cache = new ChunkCache(0);
    const { snapshot, reads } = await opened(null);
    await searchFromChunks(snapshot, cache);
    for (const input of inputs) {
      const want = await answerOf(whole.snapshot, input);
      reads.length = 0;
      expect(await answerOf(snapshot, input)).toBe(want);
      const first = searchFiles(reads);
      expect(first.length).toBeGreaterThan(0);
      expect([cache.size, cache.bytes]).toEqual([0, 0]);
      reads.length = 0;
      expect(await answerOf(snapshot, input)).toBe(want);
      expect(searchFiles(reads).sort()).toEqual([...first].sort());
    }
  });
  it('exports over the chunked index: the query’s files and the whole date and K number columns, never a part of the whole index, the same bytes', async () => {
    const exports: ExportInput[] = [
      { query: 'catheter', applicant: null, productCode: null, yearFrom: null, yearTo: null, format: 'ndjson', limit: null, cursor: null, after: null },
      { query: '', applicant: null, productCode: null, yearFrom: 2000, yearTo: 2020, sort: 'receivedDate:desc', format: 'csv', limit: 40, cursor: null, after: null },
      { query: 'pump', applicant: null, productCode: null, yearFrom: null, yearTo: null, sort: 'kNumber:asc', format: 'ndjson', limit: null, cursor: null, after: null },
    ];
    const text = async (snapshot: Snapshot, input: ExportInput) => {
      const prepared = await prepareExport({ ...input, parsed: parseQuery(input.query) }, snapshot);
      let out = `${prepared.total} ${prepared.count} ${prepared.nextCursor}\n`;
      for await (const chunk of prepared.chunks) out += new TextDecoder().decode(chunk);
      return out;
    };
    const whole = await opened(null);
    for (const budget of [24 * 1024 * 1024, 0]) {
      const { snapshot, reads } = await opened(budget);
      for (const input of exports) {
        const want = await text(whole.snapshot, input);
        expect(want.split('\n').length).toBeGreaterThan(3);
        reads.length = 0;
        expect(await text(snapshot, input)).toBe(want);
        const read = searchFiles(reads);
        if (budget === 0) for (const p of [directory.files.decided.path, directory.files.docKNumber.path]) expect(read).toContain(p);
        expect(read.filter((p) => !CHUNK_PATH_PATTERN.test(p))).toEqual([]);
      }
    }
  });
});
