import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSearchChunks, type ChunkFiles } from '../../build/index/chunks.ts';
import { FACET_FIELDS, SORTS } from '../../src/contract/index.ts';
import type { SearchIndexData } from '../../src/search/codec.ts';
import { ChunkCache } from '../../src/search/chunk-cache.ts';
import { FilePlans, missingFiles } from '../../src/search/chunk-needs.ts';
import { ChunkedIndex } from '../../src/search/chunked.ts';
import type { SearchRequest } from '../../src/search/engine.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import type { SearchIndex } from '../../src/search/model.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';

/*
 * The chunked index keeps, per request shape, the files a request reads (FilePlans): a kept plan must name exactly the
 * files that working them out afresh names, for every request and whatever is loaded, or a request would read over
 * an index that lacks a file it needs (or read files it does not need).
 */

const BASE = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 20 };

/** Each query in many shapes: every filter, sort, facet and statistics, with and without, one after the other. */
function requests(index: SearchIndex): Omit<SearchRequest, 'page' | 'pageSize'>[] {
  const step = Math.max(1, Math.floor(index.terms.length / 12));
  const words = index.terms.filter((_, i) => i % step === 0);
  const d = index.docApplicant.findIndex((a, i) => a !== 0xffffffff && index.docCode[i] !== 0xffff);
  const applicant = index.applicants[index.docApplicant[d]!]!;
  const code = index.codes[index.docCode[d]!]!;
  const queries = [
    '', ...words, ...words.map((w) => w.slice(0, 2)), `${words[0]} ${words[1]}`, `"${words[0]} ${words[1]}"`, `-${words[2]}`,
    `${words[3]} OR ${words[4]}`, code.toLowerCase(), code.toLowerCase().slice(0, 2), 'k0', 'k1', `applicant:${applicant.split(/\W+/)[0]!.toLowerCase()}`,
    `code:${code}`, 'class:2', 'panel:cardio', 'decided:2020', 'received:>=2020-01', 'reviewdays:>90', 'country:US', 'thirdparty:yes',
    `device:"${words[0]} ${words[1]}"`, '"unterminated', 'zzzz',
  ];
  const out: Omit<SearchRequest, 'page' | 'pageSize'>[] = [];
  for (const query of queries) {
    out.push({ ...BASE, query });
    out.push({ ...BASE, query, applicant });
    out.push({ ...BASE, query, productCode: code });
    out.push({ ...BASE, query, yearFrom: 2000 });
    out.push({ ...BASE, query, yearTo: 2020, stats: true });
    for (const sort of SORTS) out.push({ ...BASE, query, sort });
    for (const field of FACET_FIELDS) if (field !== 'predicate') out.push({ ...BASE, query, facets: [{ field, size: 3, order: 'count' }] });
    out.push({ ...BASE, query, facets: [] });
  }
  return out;
}

function files(built: ChunkFiles) {
  const map = new Map(built.files.map((f) => [f.path, f.bytes]));
  return async (path: string) => new Uint8Array(gunzipSync(map.get(path)!));
}

describe('the file plans of the chunked index', () => {
  let data: SearchIndexData;
  let index: SearchIndex;
  let built: ChunkFiles;

  beforeAll(async () => {
    const dir = await buildFixtureSnapshot();
    index = await loadSearchIndex((p) => readFile(join(dir, p)));
    data = index as unknown as SearchIndexData;
    built = await buildSearchChunks(data, '0'.repeat(64), { targetBytes: 300, idTargetBytes: 20, kBlockDocs: 16 });
  }, 120_000);

  for (const [label, budget, limit] of [
    ['with every file kept', Number.POSITIVE_INFINITY, 256],
    ['with files let go of, and few plans kept', 40_000, 5],
  ] as const) {
    it(`name the files that working them out afresh names, for every request and state of the cache (${label})`, async () => {
      const dir = built.directory;
      const cache = new ChunkCache(budget);
      const chunked = new ChunkedIndex(dir, files(built), cache);
      const plans = new FilePlans(dir, limit);
      const reqs = requests(index);
      // The shapes decide something: the same query reads different files in different shapes.
      const shapes = new Map<string, Set<string>>();
      let compared = 0;
      for (const whole of [false, true]) {
        for (const req of reqs) {
          // Before, between and after the rounds that load the request's files: the cache's state changes each time.
          for (let round = 0; round < 4; round++) {
            const fresh = missingFiles(dir, cache, req, whole);
            expect([req, whole, missingFiles(dir, cache, req, whole, undefined, plans)]).toEqual([req, whole, fresh]);
            compared++;
            if (fresh.length === 0) break;
            const lease = chunked.lease();
            await chunked.load(fresh, lease);
            lease.release();
          }
          const all = missingFiles(dir, new ChunkCache(0), req, whole).sort().join(' ');
          let sets = shapes.get(req.query);
          if (!sets) shapes.set(req.query, (sets = new Set()));
          sets.add(all);
        }
      }
      expect(compared).toBeGreaterThan(reqs.length * 2);
      expect([...shapes.values()].filter((s) => s.size >= 4).length).toBeGreaterThan(10);
      expect(plans.size).toBe(Math.min(limit, plans.size));
      expect(plans.size).toBeGreaterThan(0);
    }, 120_000);
  }

  it('keep one plan per shape: a page, a page size or the value a filter names do not make another', () => {
    const dir = built.directory;
    const plans = new FilePlans(dir);
    const cache = new ChunkCache(Number.POSITIVE_INFINITY);
    const word = index.terms[3]!;
    plans.of({ ...BASE, query: word, applicant: 'A' }, false, cache);
    plans.of({ ...BASE, query: word, applicant: 'B', page: 3 } as SearchRequest, false, cache);
    expect(plans.size).toBe(1);
    plans.of({ ...BASE, query: word }, false, cache);
    plans.of({ ...BASE, query: word }, true, cache);
    plans.of({ ...BASE, query: `${word} ` }, true, cache);
    expect(plans.size).toBe(4);
  });
});
