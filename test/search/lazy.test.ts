import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSearchIndexData } from '../../build/index/search.ts';
import { FACET_FIELDS, SORTS } from '../../src/contract/index.ts';
import { PREDICATE_SECTIONS, SEARCH_BLOCKS_PATH, SEARCH_INDEX_PATH, SEARCH_SECTION_NAMES, type SearchSectionName } from '../../src/contract/search-index.ts';
import { blockTable, decodeSearchIndex, encodeSearchIndex, SearchIndexFormatError, sectionOf } from '../../src/search/codec.ts';
import { LazySearchIndex, loadSearchIndex, type BlockSource } from '../../src/search/load.ts';
import { emptySearchIndex, hasSection, openSearchIndex, PredicatesNotIndexed, SectionNotLoaded, type SearchIndex } from '../../src/search/model.ts';
import { sectionsFor } from '../../src/search/needs.ts';
import { runSearch, type SearchRequest } from '../../src/search/engine.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { record } from './naive.ts';
import { refusingCostlyQueries } from '../../src/operations/errors.ts';
import { lineageNumber } from '../../src/contract/lineage.ts';

const sha256 = (b: Uint8Array): Uint8Array => createHash('sha256').update(b).digest();

class Corrupt extends Error {}

/** A BlockSource over files in memory (or on disk), counting what it reads. */
function sourceOf(read: (path: string) => Promise<Uint8Array>) {
  const ranges: string[] = [];
  const source: BlockSource = {
    readFile: read,
    readRange: async (path, offset, length) => {
      ranges.push(`${path}@${offset}+${length}`);
      return (await read(path)).subarray(offset, offset + length);
    },
    sha256,
    corrupt: async (path) => {
      throw new Corrupt(path);
    },
  };
  return { source, ranges };
}

const BASE = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 20 };

/** Every kind of request: plain words and filters, each qualifier, phrases, OR and exclusions, each sort and facet, stats. */
function requests(word: string, applicant: string, code: string, year: number, cited: string): SearchRequest[] {
  const queries = [
    '', word, `${word.slice(0, 3)}`, `${word} system`, 'k0', 'k1', `"${word} system"`, `-${word}`, `${word} OR pump`,
    `applicant:${applicant.split(/\W+/)[0]!.toLowerCase()}`, `applicant:"${applicant}"`, `device:${word}`, `device:"${word} system"`,
    `code:${code}`, 'class:2', 'panel:cardio', 'type:trad', 'decision:SESE', 'decision:substantially', 'thirdparty:yes',
    'expedited:no', 'summary:yes', 'country:US', 'state:ca', 'decided:2020', 'decided:<2000', 'received:>=2020-01', 'reviewdays:>90',
    `-code:${code} ${word}`, `"${word}" OR code:${code}`, `predicate:${cited}`, `predicate:${cited} kind:named`, `-predicate:${cited} ${word}`,
    'kind:predicate', `${word} OR predicate:${cited}`,
  ];
  const out: SearchRequest[] = [];
  for (const query of queries) {
    out.push({ ...BASE, query });
    out.push({ ...BASE, query, page: 2, pageSize: 3 });
  }
  out.push({ ...BASE, query: '', applicant });
  out.push({ ...BASE, query: word, productCode: code });
  out.push({ ...BASE, query: '', yearFrom: year, yearTo: year });
  out.push({ ...BASE, query: word, yearFrom: year });
  for (const sort of SORTS) {
    out.push({ ...BASE, query: word, sort });
    out.push({ ...BASE, query: '', sort });
    out.push({ ...BASE, query: 'decided:2020', sort });
  }
  for (const field of FACET_FIELDS) {
    out.push({ ...BASE, query: '', facets: [{ field, size: null, order: 'count' }] });
    out.push({ ...BASE, query: word, facets: [{ field, size: 3, order: 'value' }] });
  }
  out.push({ ...BASE, query: '', stats: true });
  out.push({ ...BASE, query: `${word} thirdparty:no`, stats: true });
  out.push({ ...BASE, query: 'colour:red' });
  return out;
}

/** The outcome, or the error's name and message: a query error must be the same error either way. */
function outcome(index: SearchIndex, req: SearchRequest): unknown {
  try {
    return runSearch(index, req);
  } catch (err) {
    if (err instanceof SectionNotLoaded) throw err;
    return { error: String(err) };
  }
}

describe('the search index loaded by sections', () => {
  describe('over the fixture snapshot', () => {
    let dir: string;
    let eager: SearchIndex;
    let reqs: SearchRequest[];
    const read = (p: string) => readFile(join(dir, p));

    beforeAll(async () => {
      dir = await buildFixtureSnapshot();
      eager = await loadSearchIndex(read);
      // Words and values the fixture holds, so that every request decides something.
      const d = eager.docApplicant.findIndex((a, i) => a !== 0xffffffff && eager.docCode[i] !== 0xffff && eager.docTermIds.length > 0);
      const word = eager.terms[eager.docTermIds[eager.docTermOffsets[d]!]!]!;
      // A device some clearance of the fixture names.
      const cited = lineageNumber(eager.predCodes[eager.docPreds[0]!]!);
      reqs = requests(word, eager.applicants[eager.docApplicant[d]!]!, eager.codes[eager.docCode[d]!]!, eager.docYear[d]!, cited);
    }, 120_000);

    it('answers every kind of request as the whole index does, with only the sections the request declares', async () => {
      let nonEmpty = 0;
      for (const req of reqs) {
        // A fresh index per request: a section another request loaded must not hide a missing declaration.
        const lazy = await LazySearchIndex.open(sourceOf(read).source);
        const index = await lazy.ensure(sectionsFor(req));
        const want = outcome(eager, req);
        expect([req, outcome(index, req)]).toEqual([req, want]);
        if ((want as { total?: number }).total) nonEmpty++;
      }
      expect(nonEmpty).toBeGreaterThan(reqs.length / 2);
    });

    it('reads only what a request needs: a plain word leaves the phrase and qualifier columns unread', async () => {
      const lazy = await LazySearchIndex.open(sourceOf(read).source);
      await lazy.ensure(sectionsFor(reqs[2]!));
      for (const name of ['docSeq', 'docSeqOffsets', 'docPanel', 'docReceived', 'docFlags'] as const) expect([name, hasSection(lazy.index, name)]).toEqual([name, false]);
      expect(hasSection(lazy.index, 'termDocs')).toBe(true);
      await lazy.ensure(sectionsFor({ ...BASE, query: '"a phrase"' }));
      expect(hasSection(lazy.index, 'docSeq')).toBe(true);
    });

    it('fails loudly, not with an answer, when a request lacks a section it reads', async () => {
      const lazy = await LazySearchIndex.open(sourceOf(read).source);
      const index = await lazy.ensure(sectionsFor({ ...BASE, query: '' }));
      expect(() => runSearch(index, { ...BASE, query: '"heart valve"' })).toThrow(SectionNotLoaded);
      expect(() => runSearch(index, { ...BASE, query: 'panel:cardio' })).toThrow(/docPanel was read before it was loaded/);
    });
  });

  it('throws on any section not loaded, and on none once it is', () => {
    const index = emptySearchIndex(3);
    for (const name of SEARCH_SECTION_NAMES) expect(() => index[name]).toThrow(SectionNotLoaded);
    expect(() => index.byKNumber).toThrow(/docKNumber/);
    expect(index.docCount).toBe(3);
  });

  describe('in blocks and parts smaller than its sections', () => {
    const RECORDS = Array.from({ length: 60 }, (_, i) =>
      record(`K${String(100_000 + i * 37).padStart(6, '0')}`, `${['Infusion Pump', 'Catheter Kit', 'Pacemaker Lead'][i % 3]} model ${i}`, {
        applicant: ['Acme', 'Beta Corp', null][i % 3]!,
        productCode: ['FRN', 'DQY', null][i % 3]!,
        decisionDate: `20${String(10 + (i % 9)).padStart(2, '0')}-0${1 + (i % 8)}-15`,
      }),
    );
    const TYPES = new Map<string, string | null>([['FRN', 'Pump, Infusion'], ['DQY', 'Catheter, Percutaneous']]);
    const files = () => {
      const { header, parts, blob } = encodeSearchIndex(buildSearchIndexData(RECORDS, TYPES), 256, 64);
      const map = new Map<string, Uint8Array>([
        [SEARCH_INDEX_PATH, new TextEncoder().encode(JSON.stringify(header))],
        [SEARCH_BLOCKS_PATH, blockTable(blob, header.blockBytes, sha256)],
        ...parts.map((p, n): [string, Uint8Array] => [header.parts[n]!.path, p.slice()]),
      ]);
      return { header, map, read: async (p: string) => map.get(p) ?? Promise.reject(new Error(`no ${p}`)) };
    };

    it('reads sections across blocks and parts, one range per part, and answers as the whole index', async () => {
      const { header, read } = files();
      expect(header.parts.length).toBeGreaterThan(3);
      const { source, ranges } = sourceOf(read);
      const lazy = await LazySearchIndex.open(source);
      const termDocs = sectionOf(header, 'termDocs');
      expect(Math.floor((termDocs.offset + termDocs.bytes) / 256)).toBeGreaterThan(Math.floor(termDocs.offset / 256)); // spans parts
      const index = await lazy.ensure(SEARCH_SECTION_NAMES);
      const whole = openSearchIndex(buildSearchIndexData(RECORDS, TYPES));
      for (const name of SEARCH_SECTION_NAMES) expect([name, Array.from(index[name] as ArrayLike<unknown>)]).toEqual([name, Array.from(whole[name] as ArrayLike<unknown>)]);
      for (const req of requests('pump', 'Acme', 'FRN', 2012, 'K000001')) expect(outcome(index, req)).toEqual(outcome(whole, req));
      // Loaded once: asking again reads nothing.
      const before = ranges.length;
      await lazy.ensure(SEARCH_SECTION_NAMES);
      expect(ranges.length).toBe(before);
    });

    it('opens an index written before predicates were indexed: other queries answer as before, predicate ones are told to rebuild', async () => {
      const { header, map, read } = files();
      // The same index as an older build wrote it: the header lists no predicate section and no predicate count.
      const { predicates: _count, ...counts } = header.counts;
      const older = { ...header, counts, sections: header.sections.filter((x) => !(PREDICATE_SECTIONS as readonly string[]).includes(x.name)) };
      map.set(SEARCH_INDEX_PATH, new TextEncoder().encode(JSON.stringify(older)));
      const lazy = await LazySearchIndex.open(sourceOf(read).source);
      const whole = openSearchIndex(buildSearchIndexData(RECORDS, TYPES));
      for (const req of requests('pump', 'Acme', 'FRN', 2012, 'K000001')) {
        const needs = sectionsFor(req);
        if ([...needs].some((n) => (PREDICATE_SECTIONS as readonly string[]).includes(n))) {
          await expect(lazy.ensure(needs)).rejects.toThrow(PredicatesNotIndexed);
          await expect(lazy.ensure(needs)).rejects.toThrow(/built before predicates were indexed.*npm run build/);
        } else expect([req, outcome(await lazy.ensure(needs), req)]).toEqual([req, outcome(whole, req)]);
      }
      // Whole, as the page once read it: the sections are absent, and reading one says why.
      const decoded = openSearchIndex(decodeSearchIndex(older, header.parts.map((p) => map.get(p.path)!)));
      expect(() => runSearch(decoded, { ...BASE, query: 'predicate:K000001' })).toThrow(PredicatesNotIndexed);
      // The export and the feeds run the engine through this: a 503 saying to rebuild, not a 500.
      expect(() => refusingCostlyQueries(() => runSearch(decoded, { ...BASE, query: 'kind:named' }))).toThrow(expect.objectContaining({ code: 'source_unavailable', message: expect.stringMatching(/build/) }));
      expect(runSearch(decoded, { ...BASE, query: 'pump' })).toEqual(runSearch(whole, { ...BASE, query: 'pump' }));
    });

    it('refuses a damaged block for the sections in it, reports the part, and still loads the others', async () => {
      const { header, map, read } = files();
      const s = sectionOf(header, 'docYear');
      const part = header.parts[Math.floor(s.offset / header.partBytes)]!.path;
      map.get(part)![s.offset % header.partBytes]! ^= 0xff;
      const lazy = await LazySearchIndex.open(sourceOf(read).source);
      await expect(lazy.ensure(['docYear'])).rejects.toThrow(Corrupt);
      await expect(lazy.ensure(['docYear'])).rejects.toThrow(part); // not remembered: read again, still damaged
      const damaged = Math.floor(s.offset / header.blockBytes);
      const blocksOf = (n: SearchSectionName) => {
        const x = sectionOf(header, n);
        return [Math.floor(x.offset / header.blockBytes), Math.floor((x.offset + Math.max(0, x.bytes - 1)) / header.blockBytes)] as const;
      };
      const clean = (n: SearchSectionName) => blocksOf(n)[1] < damaged || blocksOf(n)[0] > damaged;
      const far = SEARCH_SECTION_NAMES.filter((n) => clean(n) && (n !== 'docTermIds' || clean('docTermOffsets')));
      expect(far.length).toBeGreaterThan(10);
      await expect(lazy.ensure(far)).resolves.toBeTruthy();
      expect(hasSection(lazy.index, 'docYear')).toBe(false);
    });

    it('refuses a block table of the wrong length, and a section that fails its checks, as a format error', async () => {
      const short = files();
      short.map.set(SEARCH_BLOCKS_PATH, short.map.get(SEARCH_BLOCKS_PATH)!.subarray(16));
      await expect(LazySearchIndex.open(sourceOf(short.read).source)).rejects.toThrow(SearchIndexFormatError);

      // A build that wrote a bad column (the digests match what it wrote): the checks catch it at load.
      const data = buildSearchIndexData(RECORDS, TYPES);
      data.docCode[0] = 77;
      const { header, parts, blob } = encodeSearchIndex(data, 256, 64);
      const map = new Map<string, Uint8Array>([
        [SEARCH_INDEX_PATH, new TextEncoder().encode(JSON.stringify(header))],
        [SEARCH_BLOCKS_PATH, blockTable(blob, 64, sha256)],
        ...parts.map((p, n): [string, Uint8Array] => [header.parts[n]!.path, p]),
      ]);
      const lazy = await LazySearchIndex.open(sourceOf(async (p) => map.get(p)!).source);
      await expect(lazy.ensure(['docCode'])).rejects.toThrow(/docCode out of range/);
      await expect(lazy.ensure(['docKNumber', 'codes'] as SearchSectionName[])).resolves.toBeTruthy();
    });
  });
});
