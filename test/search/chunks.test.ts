import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSearchChunks, cutRuns, type ChunkFiles } from '../../build/index/chunks.ts';
import { FACET_FIELDS, SORTS } from '../../src/contract/index.ts';
import { CHUNK_FILES, CHUNK_PATH_PATTERN, SEARCH_CHUNKS_PATH, SearchChunks } from '../../src/contract/search-chunks.ts';
import { decodeBundle, decodeRows, encodeBundle, encodeRows, valueOf } from '../../src/search/bundle.ts';
import { noApplicantIn, type SearchIndexData } from '../../src/search/codec.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { runSearch, type SearchOutcome, type SearchRequest } from '../../src/search/engine.ts';
import { checkWord, prepareWord, tierOf, type PreparedWord } from '../../src/search/words.ts';
import { tokenize } from '../../src/search/tokenize.ts';
import { chunksOfPrefix, parseChunkDirectory } from '../../src/search/chunk-directory.ts';
import { ChunkedIndex } from '../../src/search/chunked.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { lineageNumber } from '../../src/contract/lineage.ts';
import { until } from '../helpers/until.ts';

const BASE = { applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 20 };
const PAGE_FACETS = [
  { field: 'productCode', size: 10, order: 'count' },
  { field: 'applicant', size: 10, order: 'count' },
  { field: 'decisionYear', size: null, order: 'value' },
  { field: 'advisoryCommittee', size: null, order: 'count' },
  { field: 'countryCode', size: 10, order: 'count' },
] as const;

/** Every kind of request the page or the API can make. */
function requests(word: string, applicant: string, code: string, year: number, preds: readonly string[]): SearchRequest[] {
  const queries = [
    '', word, word.slice(0, 3), word.slice(0, 1), `${word} system`, `${word} a`, 'k0', 'k1', `"${word} system"`, `-${word}`, `${word} OR pump`,
    `applicant:${applicant.split(/\W+/)[0]!.toLowerCase()}`, `applicant:"${applicant}"`, `device:${word}`, `device:"${word} system"`,
    `code:${code}`, 'class:2', 'panel:cardio', 'type:trad', 'decision:SESE', 'thirdparty:yes', 'expedited:no', 'summary:yes',
    'country:US', 'state:ca', 'decided:2020', 'decided:<2000', 'received:>=2020-01', 'reviewdays:>90', `-code:${code} ${word}`,
    `"${word}" OR code:${code}`, 'zzzz', `${word} zzzz`, 'colour:red', code.toLowerCase(),
  ];
  const out: SearchRequest[] = [];
  for (const query of queries) {
    out.push({ ...BASE, query });
    out.push({ ...BASE, query, page: 2, pageSize: 3, facets: [...PAGE_FACETS] });
  }
  out.push({ ...BASE, query: '', applicant });
  out.push({ ...BASE, query: word, productCode: code });
  out.push({ ...BASE, query: '', yearFrom: year, yearTo: year });
  out.push({ ...BASE, query: word, yearFrom: year, facets: [...PAGE_FACETS] });
  out.push({ ...BASE, query: '', page: 50, pageSize: 10 });
  for (const sort of SORTS) {
    out.push({ ...BASE, query: word, sort });
    out.push({ ...BASE, query: '', sort, page: 3, pageSize: 50 });
  }
  for (const field of FACET_FIELDS) out.push({ ...BASE, query: word, facets: [{ field, size: 3, order: 'value' }] });
  // Predicates: devices cited most, least and not at all, with and without a kind, alone and among other terms.
  const [most, least] = preds;
  for (const query of [
    `predicate:${most}`, `predicate:${least}`, 'predicate:K000001', `predicate:${most} kind:predicate`, `predicate:${most} kind:named`,
    `predicate:${most} OR predicate:${least}`, `-predicate:${most} kind:named`, 'kind:predicate', 'kind:named', `${word} OR predicate:${least}`,
  ]) {
    out.push({ ...BASE, query });
    out.push({ ...BASE, query, page: 2, pageSize: 3, facets: [{ field: 'predicate', size: null, order: 'count' }, ...PAGE_FACETS] });
  }
  out.push({ ...BASE, query: '', facets: [{ field: 'predicate', size: 5, order: 'count' }] });
  out.push({ ...BASE, query: 'kind:named', facets: [{ field: 'predicate', size: null, order: 'value' }] });
  out.push({ ...BASE, query: `${word} thirdparty:no`, stats: true });
  return out;
}

function outcome(index: SearchIndex, req: SearchRequest): unknown {
  try {
    return runSearch(index, req);
  } catch (err) {
    return { error: String(err) };
  }
}

/** Files in memory, as a static host would serve them, read as the page reads them: checked against their names. */
function reader(files: ChunkFiles) {
  const map = new Map(files.files.map((f) => [f.path, f.bytes]));
  const fetched: string[] = [];
  const read = async (path: string) => {
    fetched.push(path);
    const bytes = map.get(path);
    if (!bytes) throw new Error(`no ${path}`);
    const hash = createHash('sha256').update(bytes).digest('hex');
    if (!path.includes(`-${hash.slice(0, 20)}.`)) throw new Error(`${path} does not hold what its name says`);
    return new Uint8Array(gunzipSync(bytes));
  };
  return { read, fetched };
}

async function chunkedOutcome(files: ChunkFiles, req: SearchRequest, whole: boolean): Promise<unknown> {
  const chunked = new ChunkedIndex(parseChunkDirectory(structuredClone(files.directory)), reader(files).read);
  try {
    if (!whole) return await chunked.firstPage(req);
    return await chunked.answer(req);
  } catch (err) {
    return { error: String(err) };
  }
}

describe('the search index in chunks', () => {
  let data: SearchIndexData;
  let index: SearchIndex;
  let reqs: SearchRequest[];

  beforeAll(async () => {
    const dir = await buildFixtureSnapshot();
    index = await loadSearchIndex((p) => readFile(join(dir, p)));
    data = index as unknown as SearchIndexData;
    const d = index.docApplicant.findIndex((a, i) => a !== 0xffffffff && index.docCode[i] !== 0xffff && index.docTermOffsets[i + 1]! > index.docTermOffsets[i]!);
    const word = index.terms[index.docTermIds[index.docTermOffsets[d]!]!]!;
    // The most and the least cited devices the index holds (its own choice of inputs; the answers are compared below).
    const cites = Array.from(index.predCodes, (code, p) => ({ code, n: index.predDocOffsets[p + 1]! - index.predDocOffsets[p]! })).sort((a, b) => b.n - a.n || a.code - b.code);
    const preds = [cites[0]!, cites[cites.length - 1]!].map((c) => lineageNumber(c.code));
    reqs = requests(word, index.applicants[index.docApplicant[d]!]!, index.codes[index.docCode[d]!]!, index.docYear[d]!, preds);
  }, 120_000);

  it('is written by the build: a directory whose every file exists under a name that is its content hash', async () => {
    const dir = await buildFixtureSnapshot();
    const directory = SearchChunks.parse(JSON.parse(await readFile(join(dir, SEARCH_CHUNKS_PATH), 'utf8')));
    const refs = [...Object.values(directory.files), ...directory.termChunks.map((c) => c.file), ...directory.codeChunks.map((c) => c.file), ...directory.kBlocks];
    expect(refs.length).toBeGreaterThan(CHUNK_FILES.length);
    for (const r of refs) {
      const bytes = await readFile(join(dir, r.path));
      const hash = createHash('sha256').update(bytes).digest('hex');
      expect([r.path, bytes.byteLength]).toEqual([r.path.replace(/-[0-9a-f]{20}\./, `-${hash.slice(0, 20)}.`), r.bytes]);
      expect(r.path).toMatch(CHUNK_PATH_PATTERN);
    }
    expect(directory.counts.docs).toBe(index.docCount);
  });

  for (const [label, sizes] of [
    ['as built', undefined],
    ['in many small chunks', { targetBytes: 300, idTargetBytes: 20, kBlockDocs: 16 }],
  ] as const) {
    describe(label, () => {
      let files: ChunkFiles;
      beforeAll(async () => {
        files = await buildSearchChunks(data, '0'.repeat(64), sizes);
      });

      it('answers every kind of request as the whole index does: first page and total first, then facet counts', async () => {
        if (sizes) for (const list of [files.directory.termChunks, files.directory.codeChunks, files.directory.kBlocks]) expect(list.length).toBeGreaterThan(5);
        if (sizes) expect(files.directory.predicates!.chunks.length).toBeGreaterThan(2);
        // The predicate requests decide something: the most cited device has several citing clearances here.
        const most = reqs.find((r) => r.query.startsWith('predicate:') && !r.facets)!;
        expect((outcome(index, most) as { total: number }).total).toBeGreaterThan(1);
        let nonEmpty = 0;
        for (const req of reqs) {
          const want = outcome(index, req) as { total?: number; kNumbers?: string[]; error?: string };
          const first = await chunkedOutcome(files, req, false);
          expect([req, first]).toEqual([req, want.error ? want : { total: want.total, kNumbers: want.kNumbers }]);
          expect([req, await chunkedOutcome(files, req, true)]).toEqual([req, want]);
          if (want.total) nonEmpty++;
        }
        expect(nonEmpty).toBeGreaterThan(reqs.length / 2);
      });

      it('finds every word in the chunk the directory names for it, and the directory cuts the word list in order', () => {
        const d = files.directory;
        let at = 0;
        for (const [i, c] of d.termChunks.entries()) {
          expect(c.from).toBe(at);
          expect([c.first, c.last]).toEqual([data.terms[c.from], data.terms[c.from + c.count - 1]]);
          if (i > 0) expect(d.termChunks[i - 1]!.last < c.first).toBe(true);
          at += c.count;
        }
        expect(at).toBe(data.terms.length);
        const byPath = new Map(files.files.map((f) => [f.path, f.bytes]));
        for (const [t, term] of data.terms.entries()) {
          const chunks = chunksOfPrefix(d, term);
          const home = d.termChunks.findIndex((c) => t >= c.from && t < c.from + c.count);
          expect([term, chunks.includes(home)]).toEqual([term, true]);
          // Its documents are the index's, in the chunk's rows.
          const bundle = decodeBundle(new Uint8Array(gunzipSync(byPath.get(d.termChunks[home]!.file.path)!)));
          const rows = valueOf(bundle, 'docs', 'rows');
          const i = t - d.termChunks[home]!.from;
          expect((valueOf(bundle, 'terms', 'json') as string[])[i]).toBe(term);
          expect(Array.from(rows.values.subarray(rows.offsets[i], rows.offsets[i + 1]))).toEqual(Array.from(data.termDocs.subarray(data.termDocOffsets[t], data.termDocOffsets[t + 1])));
        }
      });

      it('fetches only the chunks of the words of a query, and reuses them for the next query', async () => {
        const word = data.terms[Math.floor(data.terms.length / 2)]!;
        const { read, fetched } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        await chunked.firstPage({ ...BASE, query: word });
        const termFiles = new Set(files.directory.termChunks.map((c) => c.file.path));
        const wanted = new Set(chunksOfPrefix(files.directory, word).map((i) => files.directory.termChunks[i]!.file.path));
        expect(fetched.filter((p) => termFiles.has(p)).sort()).toEqual([...wanted].sort());
        for (const f of ['docPanel', 'docCountry', 'docReceived', 'docTerms', 'docSeq', 'applicants', 'docCode', 'docApplicant'] as const) {
          expect([f, fetched.includes(files.directory.files[f].path)]).toEqual([f, false]);
        }
        const before = fetched.length;
        await chunked.firstPage({ ...BASE, query: word, page: 1, pageSize: 1 });
        expect(fetched.length).toBe(before);
      });

      it('derives documents by code, by applicant and by K number once per column file, not again for each index over it', async () => {
        const { read } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        const req = (query: string): SearchRequest => ({ ...BASE, query, sort: 'kNumber:asc', facets: [{ field: 'productCode', size: 3, order: 'count' }, { field: 'applicant', size: 3, order: 'count' }] });
        const first = await chunked.ensure(req(data.terms[0]!), true);
        const lookups = [first.codeDocs, first.applicantDocs, first.byKNumber];
        // Another file in: a new index over more files, the same whole columns.
        await chunked.load([files.directory.files.docPanel.path]);
        const second = await chunked.ensure(req(data.terms[0]!), true);
        expect(second).not.toBe(first);
        expect([second.codeDocs, second.applicantDocs, second.byKNumber]).toEqual(lookups);
        for (const [i, lookup] of [second.codeDocs, second.applicantDocs, second.byKNumber].entries()) expect(lookup).toBe(lookups[i]);
        // The same lookups as the whole index derives.
        expect(lookups).toEqual([index.codeDocs, index.applicantDocs, index.byKNumber]);
      });

      it('answers a word search with the whole code and applicant columns in from the rows its words reach, making no table of every document', async () => {
        const dir = files.directory;
        // Independently of the chunks: the codes (applicants) the terms [lo, hi) reach, and each one's documents.
        const reach = (offsets: Uint32Array, values: ArrayLike<number>, lo: number, hi: number) => new Set(Array.from(values).slice(offsets[lo], offsets[hi]));
        const docsOf = (col: ArrayLike<number>, id: number) => Array.from(col).flatMap((v, d) => (v === id ? [d] : []));
        // The documents the rows of the chunks a word is looked up in hold: the decision between its own rows and the whole table.
        const loadedRows = (word: string) => {
          let n = 0;
          for (const c of chunksOfPrefix(dir, word).map((i) => dir.termChunks[i]!)) {
            const to = c.from + c.count;
            for (const a of reach(data.termApplicantOffsets, data.termApplicants, c.from, to)) n += docsOf(data.docApplicant, a).length;
          }
          return n;
        };
        // A word of more than three letters whose terms reach both codes and applicants, with the fewest such rows.
        const candidates = data.terms.flatMap((w, t) =>
          w.length > 3 && data.termApplicantOffsets[t + 1]! > data.termApplicantOffsets[t]! && data.termCodeOffsets[t + 1]! > data.termCodeOffsets[t]! ? [w] : [],
        );
        expect(candidates.length).toBeGreaterThan(0);
        const word = candidates.map((w) => ({ w, n: loadedRows(w) })).sort((a, b) => a.n - b.n)[0]!;
        // In small chunks, a word's chunks reach few applicants; the whole table is made where they reach an eighth of the documents.
        const ownRows = word.n * 8 < dir.counts.docs;
        if (sizes) expect(ownRows).toBe(true);
        const req: SearchRequest = { ...BASE, query: word.w }; // the default facets: the whole code and applicant columns
        const chunked = new ChunkedIndex(dir, reader(files).read);
        expect(await chunked.answer(req)).toEqual(outcome(index, req));
        const derived = (f: 'docCode' | 'docApplicant') => [...(chunked.cache.peek(dir.files[f].path)?.derived.keys() ?? [])];
        expect(derived('docCode')).toContain('column');
        expect(derived('docApplicant')).toContain('column');
        const tables = [...derived('docCode'), ...derived('docApplicant')].filter((k) => k.startsWith('codeDocs/') || k.startsWith('applicantDocs/'));
        expect(tables.length > 0).toBe(!ownRows);
        // Every code and applicant the word's terms reach has its documents, as a scan of the columns finds them.
        const view = chunked.view();
        const lo = data.terms.findIndex((t) => t.startsWith(word.w));
        let hi = lo;
        while (hi < data.terms.length && data.terms[hi]!.startsWith(word.w)) hi++;
        const rowOf = (rows: { offsets: Uint32Array; values: Uint32Array }, id: number) => Array.from(rows.values.subarray(rows.offsets[id], rows.offsets[id + 1]));
        for (const c of reach(data.termCodeOffsets, data.termCodes, lo, hi)) expect(['code', c, rowOf(view.wordCodeDocs, c)]).toEqual(['code', c, docsOf(data.docCode, c)]);
        for (const a of reach(data.termApplicantOffsets, data.termApplicants, lo, hi)) expect(['applicant', a, rowOf(view.wordApplicantDocs, a)]).toEqual(['applicant', a, docsOf(data.docApplicant, a)]);
        // A short word reaches codes by their letters too: read from the whole table, its answer is the whole index's.
        const short: SearchRequest = { ...BASE, query: data.codes[0]!.slice(0, 2).toLowerCase() };
        expect(await chunked.answer(short)).toEqual(outcome(index, short));
      });

      it('keeps the applicant column in 16 bits, with no copy widened to 32, whole and in part; "none" reads as the whole index\'s', async () => {
        // The fixture's applicants fit below 0xffff, so the build stores the column narrower than 32 bits.
        expect(data.applicants.length).toBeLessThan(0xffff);
        const noneAt = (col: ArrayLike<number>, d: number) => (col[d] === noApplicantIn(col as Uint16Array | Uint32Array) ? null : col[d]!);
        const { read } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        const wholeCol = (await chunked.ensure({ ...BASE, query: '', facets: [{ field: 'applicant', size: 3, order: 'count' }] }, true)).docApplicant;
        expect(wholeCol).toBeInstanceOf(Uint16Array);
        const want = Array.from(data.docApplicant, (_, d) => noneAt(data.docApplicant, d));
        expect(Array.from(wholeCol, (_, d) => noneAt(wholeCol, d))).toEqual(want);
        // Before the whole column is read: the applicants a word's chunks reach, each document's or none.
        const word = tokenize(data.applicants[0]!)[0]!;
        const part = (await new ChunkedIndex(files.directory, reader(files).read).ensure({ ...BASE, query: word }, true)).docApplicant;
        expect(part).toBeInstanceOf(Uint16Array);
        const known = Array.from(part, (_, d) => noneAt(part, d));
        expect(known.filter((a, d) => a !== null && a !== want[d])).toEqual([]);
        expect(known.filter((a) => a === 0).length).toBe(want.filter((a) => a === 0).length);
      });

      it('keeps its index while only K number blocks come in; a new index over more files reads the same whole columns', async () => {
        const { read } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        const req: SearchRequest = { ...BASE, query: data.terms[0]! };
        const first = await chunked.ensure(req, true);
        await chunked.load([files.directory.kBlocks[files.directory.kBlocks.length - 1]!.path]);
        expect(await chunked.ensure(req, true)).toBe(first);
        const word = data.terms[data.terms.length - 1]!;
        const second = await chunked.ensure({ ...BASE, query: word }, true);
        // (one chunk holds every word when the index is small: then nothing new came in)
        expect(second === first).toBe(files.directory.termChunks.length === 1);
        expect(second.docCode).toBe(first.docCode);
        expect(second.docYear).toBe(first.docYear);
        // Answers stay the whole index's (the page's K numbers come from their blocks, read apart).
        const { kNumbers: _k, ...want } = runSearch(index, { ...BASE, query: word });
        const { kNumbers: _k2, ...got } = runSearch(second, { ...BASE, query: word });
        expect(got).toEqual(want);
      });

      it('checks a word document by document from its postings, with no forward lists, as the whole index does', async () => {
        const { read } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        // Words, their prefixes and a word with no exact term: each checked against every document, on both indexes.
        const step = Math.max(1, Math.floor(data.terms.length / 40));
        const words = new Set<string>();
        for (let t = 0; t < data.terms.length; t += step) for (const w of [data.terms[t]!, data.terms[t]!.slice(0, 1), data.terms[t]!.slice(0, 3)]) words.add(w);
        const all = Uint32Array.from({ length: data.docKNumber.length }, (_, d) => d);
        const points = Uint32Array.from([0, 1, 10, 100, 1000]);
        let checked = 0;
        for (const word of words) {
          const req: SearchRequest = { ...BASE, query: word, facets: [] };
          const lease = chunked.lease();
          const ix = await chunked.ensure(req, true, undefined, lease);
          expect(ix.withoutForward).toBe(true);
          // The engine never reads the forward lists a reader by sections may have made over the loaded words.
          Object.defineProperty(ix, 'docTerms', { get: () => expect.fail('the engine read forward lists') });
          const [w, v] = [prepareWord(index, word), prepareWord(ix, word)];
          const tiers = (i: SearchIndex, p: PreparedWord) => Array.from(all, (d) => tierOf(i, p, d));
          expect(tiers(ix, v)).toEqual(tiers(index, w));
          const [a, b] = [all.slice(), all.slice()];
          const [sa, sb] = [new Uint32Array(all.length), new Uint32Array(all.length)];
          const kept = checkWord(index, w, a, sa, points);
          expect(checkWord(ix, v, b, sb, points)).toBe(kept);
          expect(b.subarray(0, kept)).toEqual(a.subarray(0, kept));
          expect(sb.subarray(0, kept)).toEqual(sa.subarray(0, kept));
          checked += kept;
          lease.release();
        }
        expect(checked).toBeGreaterThan(0);
        // device: with two words (one qualifier) reads each word's documents from its postings: the commonest word's with words
        // some of whose documents lack it (read from the whole index's postings).
        const docsOf = (t: number) => [...data.termDocs.subarray(data.termDocOffsets[t]!, data.termDocOffsets[t + 1]!)];
        const counts = data.terms.map((_, t) => data.termDocOffsets[t + 1]! - data.termDocOffsets[t]!);
        const c = counts.indexOf(Math.max(...counts));
        const common = data.terms[c]!;
        const withCommon = new Set(docsOf(c));
        const partners = data.terms.filter((_, t) => docsOf(t).some((d) => withCommon.has(d)) && docsOf(t).some((d) => !withCommon.has(d)));
        expect(partners.length).toBeGreaterThan(0);
        for (const word of partners.slice(0, 20)) {
          const req: SearchRequest = { ...BASE, query: `device:${word}-${common}`, facets: [] };
          const lease = chunked.lease();
          const ix = await chunked.ensure(req, true, undefined, lease);
          Object.defineProperty(ix, 'docTerms', { get: () => expect.fail('the engine read forward lists') });
          const { kNumbers: _k, ...want } = outcome(index, req) as SearchOutcome;
          const { kNumbers: _k2, ...got } = outcome(ix, req) as SearchOutcome;
          expect(got).toEqual(want);
          lease.release();
        }
      });

      it('counts a whole column stored in its own type once, with its file', async () => {
        const { read } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        const path = files.directory.files.docKNumber.path;
        await chunked.load([path]);
        const ix = await chunked.ensure({ ...BASE, query: '', sort: 'kNumber:asc' }, false);
        expect(ix.docKNumber.length).toBe(data.docKNumber.length);
        expect(ix.byKNumber.length).toBe(data.docKNumber.length);
        // The file's bytes (one u32 a document and its header) and the lookup by K number, a new array of one id per
        // document; the column itself is a view into the file's bytes, not counted again.
        const docs = data.docKNumber.length;
        const own = (await read(path)).byteLength + docs * 4;
        // (and the decoded header, a few dozen bytes of JSON: far less than the column counted again)
        expect(docs * 4).toBeGreaterThan(512);
        expect(chunked.cache.get(path)!.bytes).toBeGreaterThanOrEqual(own);
        expect(chunked.cache.get(path)!.bytes).toBeLessThan(own + 256);
      });

      it('asks for the first K number block with the words, not a round trip after them, for a first page by relevance', async () => {
        const word = data.terms[Math.floor(data.terms.length / 2)]!;
        const { read } = reader(files);
        // Word chunks answer only once released: what is asked for before then is asked for in the same round trip.
        let release!: () => void;
        const released = new Promise<void>((r) => (release = r));
        const termFiles = new Set(files.directory.termChunks.map((c) => c.file.path));
        const asked: string[] = [];
        const chunked = new ChunkedIndex(files.directory, async (path) => {
          asked.push(path);
          if (termFiles.has(path)) await released;
          return read(path);
        });
        const answer = chunked.firstPage({ ...BASE, query: word });
        await until(() => asked.some((p) => termFiles.has(p)), 'a term file to be asked for');
        const before = [...asked];
        release();
        const first = await answer;
        expect(before).toContain(files.directory.kBlocks[0]!.path);
        expect(first).toEqual(await chunkedOutcome(files, { ...BASE, query: word }, false));
      });

      it('answers the landing page from the directory alone', async () => {
        const { read, fetched } = reader(files);
        const chunked = new ChunkedIndex(files.directory, read);
        const req = { ...BASE, query: '', pageSize: 20, facets: files.directory.landing.facets as SearchRequest['facets'] };
        expect(await chunked.answer(req)).toEqual(runSearch(index, req));
        expect(fetched).toEqual([]);
      });
    });
  }
});

describe('bundles and runs', () => {
  it('round-trips rows, typed arrays and JSON, and refuses rows that do not ascend or bytes cut short', () => {
    const rows = { offsets: Uint32Array.of(0, 3, 3, 5), values: Uint32Array.of(1, 200, 70_000, 0, 4_000_000_000) };
    const bytes = encodeBundle({ r: { rows }, a: { u16: Uint16Array.of(1, 65535) }, j: { json: { x: ['é'] } }, b: { u8: Uint8Array.of(7) } });
    const back = decodeBundle(bytes);
    expect(Array.from(valueOf(back, 'r', 'rows').values)).toEqual(Array.from(rows.values));
    expect(Array.from(valueOf(back, 'r', 'rows').offsets)).toEqual(Array.from(rows.offsets));
    expect(Array.from(valueOf(back, 'a', 'u16'))).toEqual([1, 65535]);
    expect(valueOf(back, 'j', 'json')).toEqual({ x: ['é'] });
    expect(() => encodeRows({ offsets: Uint32Array.of(0, 2), values: Uint32Array.of(5, 5) })).toThrow(/ascend/);
    const enc = encodeRows(rows);
    expect(() => decodeRows(enc.subarray(0, enc.length - 1), 3, 5)).toThrow(/end early/);
    expect(() => decodeRows(enc, 3, 4)).toThrow(/more ids/);
  });

  it('cuts runs at the target, a long row ending its own run, and covers every row once', () => {
    const weights = [10, 10, 500, 10, 10, 10, 10];
    const runs = cutRuns(weights.length, (r) => weights[r]!, 25);
    expect(runs).toEqual([{ from: 0, count: 3 }, { from: 3, count: 3 }, { from: 6, count: 1 }]);
    expect(cutRuns(0, () => 1, 10)).toEqual([]);
  });

  it('refuses a directory whose chunks do not cover the word list', async () => {
    const data = openSearchIndex((await import('../../build/index/search.ts')).buildSearchIndexData([], new Map()));
    const files = await buildSearchChunks(data as unknown as SearchIndexData, '0'.repeat(64));
    expect(() => parseChunkDirectory(files.directory)).not.toThrow();
    const bad = structuredClone(files.directory);
    bad.counts.terms = 5;
    expect(() => parseChunkDirectory(bad)).toThrow(/term chunks/);
  });
});
