import {
  CHUNK_FILES,
  CHUNK_PATH_PATTERN,
  SEARCH_CHUNKS_FORMAT,
  SEARCH_CHUNKS_VERSION,
  type ChunkFile,
  type IdChunk,
  type SearchChunks,
} from '../contract/search-chunks.ts';
import { isoOfDay, NO_APPLICANT, NO_CODE, type SearchSectionName } from '../contract/search-index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { BundleFormatError, decodeBundle, valueOf, type Decoded } from './bundle.ts';
import { bundleBytes, ChunkCache } from './chunk-cache.ts';
import { invertRows, type Rows } from './csr.ts';
import type { FacetOut } from './facet-fields.ts';
import { parseQuery, type ParsedQuery } from './grammar.ts';
import { emptySearchIndex, setDerived, setSection, type SearchIndex } from './model.ts';
import { sectionsFor } from './needs.ts';
import { ChunkFormatError, concat, lengthOnly, pickRows } from './chunk-rows.ts';
import { checkPredicateDirectory, predicateFilePaths, predicatePaths, setPredicateSections } from './chunked-predicates.ts';
import { kNumberText, matchesOf, runSearch, type SearchOutcome, type SearchRequest } from './engine.ts';
import { orderPage, orderRange } from './sort.ts';
import { kNumberRange, queryWords } from './tokenize.ts';

/**
 * The search index read in parts (src/contract/search-chunks.ts), for the static page and for the Worker: a request
 * first says what it needs (`missing`), the caller fetches that, and the same synchronous engine runs over an index
 * that holds only those parts. Answers are the whole index's answers: every part a request can read is loaded before
 * it runs. The parts are kept in a ChunkCache: unbounded on the page, bounded by bytes in a Worker, where a request
 * holds a Lease that keeps its parts in until it is answered.
 *
 * Two steps per request. The first page (`firstPage`) needs the chunks of the query's words, the documents of the
 * product codes and applicants those words reach, the decision dates (a few thousand runs), the small dictionaries,
 * whatever column a qualifier, filter or sort reads, and then the K number blocks of the page's documents. Its total
 * is exact. The facet counts (`facets`) need every column they count over, which at a million records is most of the
 * bytes; they come second.
 *
 * Until the whole product code and applicant columns are loaded, the index holds them in part: the code (applicant)
 * of exactly those documents that the loaded code (applicant) rows list, "none" elsewhere. A word checks a document's
 * code only against codes it reaches, whose rows are loaded, so it reads the right answer; filters, qualifiers and
 * facets that read the columns for any other purpose declare the whole columns.
 */

/** The bundle bytes of a file of the directory (fetched, checked against its name, and inflated by the caller). */
export type ReadChunk = (path: string) => Promise<Uint8Array>;

/** What the first step answers: the exact total and the page's K numbers in answer order. */
export type FirstPage = { total: number; kNumbers: string[] };

export { ChunkFormatError };

/** Checks the directory's shape (the build validated it with its schema; a browser carries no schema library). */
export function parseChunkDirectory(value: unknown): SearchChunks {
  const d = value as SearchChunks;
  const fail = (what: string): never => {
    throw new ChunkFormatError(`search/chunks.json: ${what}`);
  };
  if (typeof d !== 'object' || d === null) fail('not an object');
  if (d.format !== SEARCH_CHUNKS_FORMAT) fail(`format is not ${SEARCH_CHUNKS_FORMAT}`);
  if (d.version !== SEARCH_CHUNKS_VERSION) fail(`version ${String(d.version)} is not ${SEARCH_CHUNKS_VERSION}`);
  const okRef = (r: unknown) => typeof r === 'object' && r !== null && CHUNK_PATH_PATTERN.test(String((r as { path?: unknown }).path));
  for (const f of CHUNK_FILES) if (!okRef(d.files?.[f])) fail(`files.${f} is not a chunk file`);
  if (!Array.isArray(d.termChunks) || !Array.isArray(d.codeChunks) || !Array.isArray(d.kBlocks)) fail('a chunk list is missing');
  let next = 0;
  for (const c of d.termChunks) {
    if (c.from !== next || !(c.count > 0) || !okRef(c.file) || typeof c.first !== 'string' || typeof c.last !== 'string') fail('term chunks do not cover the terms in order');
    next += c.count;
  }
  if (next !== d.counts?.terms) fail('term chunks do not cover the terms in order');
  for (const [list, of, total] of [[d.codeChunks, d.codeChunkOf, d.counts.codes]] as const) {
    if (!Array.isArray(of) || of.length !== total || !of.every((c) => Number.isInteger(c) && c >= 0 && c < list.length)) fail('id chunks do not cover the ids');
    if (list.reduce((n, c) => n + (okRef(c.file) ? c.count : NaN), 0) !== total) fail('id chunks do not cover the ids');
  }
  if (!(d.kBlockDocs > 0) || d.kBlocks.length !== Math.ceil(d.counts.docs / d.kBlockDocs) || !d.kBlocks.every(okRef)) fail('K number blocks do not cover the documents');
  checkPredicateDirectory(d, fail);
  return d;
}

/** The term chunks a word's prefix range can reach: those whose [first, last] meets the words starting with it. */
export function chunksOfPrefix(dir: SearchChunks, word: string): number[] {
  const out: number[] = [];
  const chunks = dir.termChunks;
  // Chunks are in term order: skip those that end before the word, take them until one starts past its prefix range.
  for (let i = partitionPoint(0, chunks.length, (c) => chunks[c]!.last < word); i < chunks.length; i++) {
    const first = chunks[i]!.first;
    if (first > word && !first.startsWith(word)) break;
    out.push(i);
  }
  return out;
}

/** Every word a parsed query looks up in the word list (as a prefix; a whole word is one of its own prefixes). */
function wordsOf(query: string, parsed: ParsedQuery): string[] {
  if (parsed.plain) return queryWords(query);
  const out = new Set<string>();
  for (const clause of parsed.clauses) {
    for (const term of clause) {
      if (term.kind !== 'field') for (const w of term.words) out.add(w);
      else if ('words' in term.qualifier) for (const w of term.qualifier.words) out.add(w);
    }
  }
  return [...out];
}

/** What the first step or the whole answer of a request reads. */
type Plan = {
  parsed: ParsedQuery;
  words: string[];
  sections: Set<SearchSectionName>;
  /** The whole code (applicant) column: a filter, a qualifier or a facet reads it, not only words. */
  wholeCodes: boolean;
  wholeApplicants: boolean;
  wholeKNumbers: boolean;
};

const FACETS_OFF = { facets: undefined, stats: false };

/** The files one request reads, kept in the cache until it is answered (`release`). */
export class Lease {
  private readonly cache: ChunkCache;
  private readonly held = new Set<string>();

  constructor(cache: ChunkCache) {
    this.cache = cache;
  }

  /** Keeps a file in (once per lease). */
  hold(path: string): void {
    if (this.held.has(path) || !this.cache.has(path)) return;
    this.held.add(path);
    this.cache.pin(path);
  }

  /** Lets the files go, and the cache back down to its budget. */
  release(): void {
    for (const path of this.held) this.cache.unpin(path);
    this.held.clear();
    this.cache.trim();
  }
}

export class ChunkedIndex {
  readonly directory: SearchChunks;
  readonly cache: ChunkCache;
  private readonly read: ReadChunk;
  private readonly loads = new Map<string, Promise<void>>();
  /** The leases waiting for each file being read: each holds it the moment it arrives. */
  private readonly waiting = new Map<string, Set<Lease>>();
  /** Paths of the K number blocks: read for a page's K numbers only, never by the view. */
  private readonly kBlockPaths: Set<string>;
  private current: SearchIndex | null = null;
  /** Bytes of the files loaded (as read, before inflating), for progress and measurements. */
  loadedBytes = 0;
  /** Files read, one count per read (a file let go of and read again counts twice), for measurements and tests. */
  reads = 0;

  constructor(directory: SearchChunks, read: ReadChunk, cache: ChunkCache = new ChunkCache(Number.POSITIVE_INFINITY)) {
    this.directory = directory;
    this.read = read;
    this.cache = cache;
    this.kBlockPaths = new Set(directory.kBlocks.map((b) => b.path));
    const own = new Set([...Object.values(directory.files).map((f) => f.path), ...directory.termChunks.map((c) => c.file.path), ...directory.codeChunks.map((c) => c.file.path), ...predicateFilePaths(directory)]);
    // A file of this index let go of: the view over it goes too (it is made again over what is left).
    cache.watch((path) => {
      if (own.has(path)) this.dropView();
    });
  }

  private has(path: string): boolean {
    return this.cache.has(path);
  }

  private bundle(path: string): Map<string, Decoded> | undefined {
    return this.cache.get(path)?.bundle;
  }

  /** A value made once from a file and kept with it (let go of when the file is). */
  private derivedOf<T>(path: string, name: string, make: () => T, bytes: (value: T) => number): T {
    const entry = this.cache.get(path)!;
    if (entry.derived.has(name)) return entry.derived.get(name) as T;
    const value = make();
    entry.derived.set(name, value);
    this.cache.grow(path, entry, bytes(value));
    return value;
  }

  private dropView(): void {
    this.current = null;
    this.cache.setExtra(this, 0);
  }

  private plan(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean): Plan | null {
    let parsed: ParsedQuery;
    try {
      parsed = req.parsed ?? parseQuery(req.query);
    } catch {
      return null; // the engine refuses the query before reading anything
    }
    const sections = sectionsFor(whole ? { ...req, parsed } : { ...req, ...FACETS_OFF, parsed });
    const words = wordsOf(req.query, parsed);
    const fields = new Set<string>();
    for (const clause of parsed.clauses) for (const t of clause) if (t.kind === 'field') fields.add(t.qualifier.field);
    const byCode = req.productCode !== null || fields.has('code') || fields.has('class');
    const byApplicant = req.applicant !== null || fields.has('applicant');
    // The counts of product codes (and of device classes, folded from them) read the whole code column, those of
    // applicants the whole applicant column; the default facets (no `facets` input) count both. Other facets and the
    // review statistics read neither, so that each facet can be counted as soon as its own column is in.
    const counted = whole ? (req.facets?.map((f) => f.field) ?? null) : [];
    const countsCodes = counted === null || counted.includes('productCode') || counted.includes('deviceClass');
    const countsApplicants = counted === null || counted.includes('applicant');
    return {
      parsed,
      words,
      sections,
      wholeCodes: countsCodes || byCode,
      wholeApplicants: countsApplicants || byApplicant,
      wholeKNumbers: words.some((w) => kNumberRange(w) !== null) || req.sort === 'kNumber:asc',
    };
  }

  /**
   * The files a request still lacks, given what is loaded: for its first page (`whole` false) or its whole answer
   * with facet counts and statistics (`whole` true). Which product codes and applicants a word reaches is known once
   * the word's chunks are in, so a request may name more files after those arrive: call until it names none.
   */
  missing(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, lease?: Lease): string[] {
    const dir = this.directory;
    const files = dir.files;
    const out = new Set<string>();
    const need = (path: string) => {
      if (!this.has(path)) out.add(path);
      else lease?.hold(path);
    };
    need(files.dicts.path);
    const plan = this.plan(req, whole);
    if (!plan) return [...out];
    const s = plan.sections;
    // Decision dates and years: for a year range, a date qualifier or sort, and facets; not for words alone.
    if (whole || req.yearFrom !== null || req.yearTo !== null || s.has('docDecided') || s.has('docReceived')) need(files.decided.path);
    const termChunks = new Set<number>();
    for (const w of plan.words) for (const c of chunksOfPrefix(dir, w)) termChunks.add(c);
    for (const c of termChunks) need(dir.termChunks[c]!.file.path);
    if (plan.wholeCodes) need(files.docCode.path);
    if (plan.wholeApplicants) {
      need(files.docApplicant.path);
      need(files.applicants.path);
    }
    if (plan.wholeKNumbers) need(files.docKNumber.path);
    if (s.has('docSeq')) {
      need(files.docTerms.path);
      need(files.docSeq.path);
    }
    const columns: [SearchSectionName, ChunkFile][] = [
      ['docPanel', 'docPanel'], ['docDecision', 'docDecision'], ['docType', 'docType'], ['docFlags', 'docFlags'],
      ['docCountry', 'docCountry'], ['docState', 'docState'], ['docReceived', 'docReceived'], ['codeTypes', 'codeTypes'],
    ];
    for (const [section, file] of columns) if (s.has(section)) need(files[file].path);
    for (const path of predicatePaths(dir, plan.parsed, s)) need(path);
    // Short words match product codes by their letters: those codes' documents, from the code chunks.
    if (!plan.wholeCodes && !this.has(files.docCode.path) && this.has(files.dicts.path)) {
      lease?.hold(files.dicts.path);
      const lower = this.codesLower();
      for (const word of plan.words) {
        if (word.length > 3) continue;
        for (let c = partitionPoint(0, lower.length, (i) => lower[i]! < word); c < lower.length && lower[c]!.startsWith(word); c++) {
          need(dir.codeChunks[dir.codeChunkOf[c]!]!.file.path);
        }
      }
    }
    return [...out];
  }

  /** The product codes in lower case, from the dictionaries (loaded). */
  private codesLower(): string[] {
    const path = this.directory.files.dicts.path;
    return this.derivedOf(
      path,
      'codesLower',
      () => (valueOf(this.bundle(path)!, 'lists', 'json') as { codes: string[] }).codes.map((c) => c.toLowerCase()),
      (lower) => lower.length * 32,
    );
  }

  /**
   * Loads files (each once, all at once; a failed read is tried again by a later call). With a lease, each is held
   * for it as it arrives.
   */
  async load(paths: readonly string[], lease?: Lease): Promise<void> {
    await Promise.all(
      paths.map((path) => {
        if (this.has(path)) {
          lease?.hold(path);
          return null;
        }
        if (lease) {
          let leases = this.waiting.get(path);
          if (!leases) this.waiting.set(path, (leases = new Set()));
          leases.add(lease);
        }
        let loading = this.loads.get(path);
        if (!loading) {
          loading = this.read(path).then((bytes) => {
            let bundle: Map<string, Decoded>;
            try {
              bundle = decodeBundle(bytes);
            } catch (err) {
              throw err instanceof BundleFormatError ? new ChunkFormatError(`${path}: ${err.message}`) : err;
            }
            this.cache.set(path, bundle, bundleBytes(bytes, bundle));
            for (const l of this.waiting.get(path) ?? []) l.hold(path);
            this.waiting.delete(path);
            this.loadedBytes += bytes.byteLength;
            this.reads++;
            if (!this.kBlockPaths.has(path)) this.dropView();
          });
          this.loads.set(path, loading);
          void loading.then(
            () => this.loads.delete(path),
            () => {
              this.loads.delete(path);
              this.waiting.delete(path);
            },
          );
        }
        return loading;
      }),
    );
  }

  /**
   * Loads what a request needs, in as many rounds as it takes (at most three: words, then what they reach). With a
   * lease, every file the request reads is held for it, so none goes before the request is answered.
   */
  async ensure(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, onProgress?: (bytes: number) => void, lease?: Lease): Promise<SearchIndex> {
    for (let round = 0; round < 4; round++) {
      const missing = this.missing(req, whole, lease);
      if (missing.length === 0) return this.view();
      await this.load(missing, lease);
      onProgress?.(this.loadedBytes);
    }
    throw new Error('search chunks: a request kept asking for more files');
  }

  /** A lease on this index's cache, for one request. */
  lease(): Lease {
    return new Lease(this.cache);
  }

  /** The first page of a request: exact total and K numbers, without facet counts. */
  async firstPage(req: SearchRequest, onProgress?: (bytes: number) => void): Promise<FirstPage> {
    const landing = this.landing(req);
    if (landing) return { total: this.directory.counts.docs, kNumbers: landing };
    // Ids run newest decision first, and a first page in relevance or date order mostly holds new clearances: the
    // first K number block comes with the words' chunks rather than a round trip after them (a guess that only costs
    // a few KB when wrong; the page's own blocks are loaded below either way).
    const guess = req.page === 1 && (req.sort === undefined || req.sort === 'relevance' || req.sort === 'decisionDate:desc') && !this.has(this.directory.files.docKNumber.path);
    await Promise.all([this.ensure(req, false, onProgress), guess ? this.load([this.directory.kBlocks[0]!.path]) : null]);
    const index = this.view();
    const { facets: _f, stats: _s, ...rest } = req;
    const m = matchesOf(index, rest);
    const sort = req.sort ?? 'relevance';
    const offset = (req.page - 1) * req.pageSize;
    const page = 'docs' in m ? orderPage(index, m.docs, m.scores, sort, offset, req.pageSize) : orderRange(index, m.lo, m.hi, sort, offset, req.pageSize);
    const total = 'docs' in m ? m.docs.length : m.hi - m.lo;
    return { total, kNumbers: await this.kNumbers(page) };
  }

  /** The whole answer of a request (facet counts and statistics too), once every column it reads is in. */
  async answer(req: SearchRequest, onProgress?: (bytes: number) => void): Promise<SearchOutcome> {
    const landing = this.landing(req);
    if (landing && sameFacets(req.facets, this.directory.landing.facets) && !req.stats) {
      return { total: this.directory.counts.docs, kNumbers: landing, facets: structuredClone(this.directory.landing.facetCounts) as FacetOut[] };
    }
    await this.ensure(req, true, onProgress);
    const first = await this.firstPage(req, onProgress);
    const outcome = runSearch(this.view(), req);
    // The K numbers come from the blocks the first page loaded (the engine's own reading of them agrees).
    return { ...outcome, kNumbers: first.kNumbers };
  }

  /** Documents per decision year over the whole index, from the directory. */
  yearCounts(): { year: number | null; count: number }[] {
    return this.directory.years.map((y) => ({ ...y }));
  }

  /** The landing answer's K numbers when the request is the landing page (no query, no filter, a first page). */
  private landing(req: SearchRequest): string[] | null {
    const l = this.directory.landing;
    if (req.query.trim() !== '' || req.applicant !== null || req.productCode !== null || req.yearFrom !== null || req.yearTo !== null) return null;
    if (req.sort !== undefined && req.sort !== 'relevance' && req.sort !== 'decisionDate:desc') return null;
    const offset = (req.page - 1) * req.pageSize;
    const end = Math.min(offset + req.pageSize, this.directory.counts.docs);
    if (end > l.kNumbers.length) return null;
    return l.kNumbers.slice(offset, end);
  }

  /** The K numbers of these documents: from the whole column when it is in, else from their blocks (read now). */
  async kNumbers(page: Uint32Array, lease?: Lease): Promise<string[]> {
    const dir = this.directory;
    if (this.has(dir.files.docKNumber.path)) lease?.hold(dir.files.docKNumber.path);
    else {
      const blocks = new Set<string>();
      for (const d of page) blocks.add(dir.kBlocks[Math.floor(d / dir.kBlockDocs)]!.path);
      await this.load([...blocks], lease);
    }
    const whole = this.has(dir.files.docKNumber.path) ? (this.column('docKNumber') as Uint32Array) : null;
    const out: string[] = [];
    for (const d of page) {
      if (whole) out.push(kNumberText(whole[d]!));
      else {
        const block = this.bundle(dir.kBlocks[Math.floor(d / dir.kBlockDocs)]!.path)!;
        out.push(kNumberText(valueOf(block, 'values', 'u32')[d % dir.kBlockDocs]!));
      }
    }
    return out;
  }

  /** A whole column, widened back to the engine's type, decoded once. */
  private column(name: ChunkFile): Uint8Array | Uint16Array | Uint32Array {
    const path = this.directory.files[name].path;
    return this.derivedOf(path, 'column', () => this.widen(name, path), (out) => (out.buffer === (this.bundle(path)!.get('values') as { buffer?: unknown }).buffer ? 0 : out.byteLength));
  }

  private widen(name: ChunkFile, path: string): Uint8Array | Uint16Array | Uint32Array {
    const bundle = this.bundle(path)!;
    const meta = valueOf(bundle, 'meta', 'json') as { type: 'u8' | 'u16' | 'u32'; none: number | null };
    const raw = bundle.get('values') as Record<string, Uint8Array | Uint16Array | Uint32Array>;
    const stored = raw.u8 ?? raw.u16 ?? raw.u32;
    if (!stored || stored.length !== this.directory.counts.docs) throw new ChunkFormatError(`${name} does not hold one value per document`);
    const storedNone = stored instanceof Uint8Array ? 0xff : stored instanceof Uint16Array ? 0xffff : 0xffffffff;
    let out: Uint8Array | Uint16Array | Uint32Array;
    const kind = stored instanceof Uint8Array ? 'u8' : stored instanceof Uint16Array ? 'u16' : 'u32';
    if (kind === meta.type) out = stored;
    else {
      out = meta.type === 'u16' ? new Uint16Array(stored.length) : new Uint32Array(stored.length);
      for (let i = 0; i < stored.length; i++) out[i] = meta.none !== null && stored[i] === storedNone ? meta.none : stored[i]!;
    }
    return out;
  }

  /** The decision dates and years of every document, from their runs, made once. */
  private decided(): { days: Uint32Array; years: Uint16Array } {
    const path = this.directory.files.decided.path;
    return this.derivedOf(path, 'decided', () => this.decidedOf(path), (d) => d.days.byteLength + d.years.byteLength);
  }

  private decidedOf(path: string): { days: Uint32Array; years: Uint16Array } {
    const bundle = this.bundle(path)!;
    const ends = valueOf(bundle, 'runs', 'rows').values;
    const values = valueOf(bundle, 'days', 'u32');
    const n = this.directory.counts.docs;
    if (ends.length !== values.length || (ends.length > 0 && ends[ends.length - 1] !== n)) throw new ChunkFormatError('decided: runs do not cover the documents');
    const days = new Uint32Array(n);
    const years = new Uint16Array(n);
    let at = 0;
    for (let r = 0; r < ends.length; r++) {
      const day = values[r]!;
      const year = day === 0 ? 0 : Number(isoOfDay(day).slice(0, 4));
      days.fill(day, at, ends[r]);
      years.fill(year, at, ends[r]);
      at = ends[r]!;
    }
    return { days, years };
  }

  /** The index over what is loaded now (made again only after a load). */
  view(): SearchIndex {
    if (this.current) return this.current;
    const dir = this.directory;
    const files = dir.files;
    const n = dir.counts.docs;
    const ix = emptySearchIndex(n);

    const dicts = this.bundle(files.dicts.path);
    if (dicts) {
      const lists = valueOf(dicts, 'lists', 'json') as Record<string, string[]>;
      for (const name of ['codes', 'panels', 'decisions', 'decisionNames', 'types', 'countries', 'states', 'classes'] as const) setSection(ix, name, lists[name]!);
      setSection(ix, 'codeClass', valueOf(dicts, 'codeClass', 'u8'));
    }
    if (this.has(files.decided.path)) {
      const { days, years } = this.decided();
      setSection(ix, 'docDecided', days);
      setSection(ix, 'docYear', years);
    }

    // The word list: every term id stays what it is in the whole index. A term of a chunk not loaded stands as its
    // chunk's first word, which keeps the list sorted, and has no rows; a request loads every chunk its words reach.
    const terms: string[] = new Array<string>(dir.counts.terms);
    const docRows: Rows[] = [];
    const appRows: Rows[] = [];
    const codeRows: Rows[] = [];
    const docOffsets = new Uint32Array(dir.counts.terms + 1);
    const appOffsets = new Uint32Array(dir.counts.terms + 1);
    const codeOffsets = new Uint32Array(dir.counts.terms + 1);
    let docAt = 0;
    let appAt = 0;
    let codeAt = 0;
    for (const c of dir.termChunks) {
      const bundle = this.bundle(c.file.path);
      if (!bundle) {
        terms.fill(c.first, c.from, c.from + c.count);
        docOffsets.fill(docAt, c.from + 1, c.from + c.count + 1);
        appOffsets.fill(appAt, c.from + 1, c.from + c.count + 1);
        codeOffsets.fill(codeAt, c.from + 1, c.from + c.count + 1);
        continue;
      }
      const words = valueOf(bundle, 'terms', 'json') as string[];
      const d = valueOf(bundle, 'docs', 'rows');
      const a = valueOf(bundle, 'applicants', 'rows');
      const k = valueOf(bundle, 'codes', 'rows');
      if (words.length !== c.count || d.offsets.length !== c.count + 1) throw new ChunkFormatError(`${c.file.path}: not the chunk the directory names`);
      for (let i = 0; i < c.count; i++) {
        terms[c.from + i] = words[i]!;
        docOffsets[c.from + i + 1] = docAt + d.offsets[i + 1]!;
        appOffsets[c.from + i + 1] = appAt + a.offsets[i + 1]!;
        codeOffsets[c.from + i + 1] = codeAt + k.offsets[i + 1]!;
      }
      docAt += d.values.length;
      appAt += a.values.length;
      codeAt += k.values.length;
      docRows.push(d);
      appRows.push(a);
      codeRows.push(k);
    }
    const termDocs = concat(docRows.map((r) => r.values), docAt);
    setSection(ix, 'terms', terms);
    setSection(ix, 'termDocOffsets', docOffsets);
    setSection(ix, 'termDocs', termDocs);
    setSection(ix, 'termApplicantOffsets', appOffsets);
    setSection(ix, 'termApplicants', concat(appRows.map((r) => r.values), appAt));
    setSection(ix, 'termCodeOffsets', codeOffsets);
    setSection(ix, 'termCodes', Uint16Array.from(concat(codeRows.map((r) => r.values), codeAt)));

    // Each document's words: the whole forward lists for phrases, else those of the loaded words only (a word checks
    // a document against its own term range, which is loaded).
    if (this.has(files.docTerms.path) && this.has(files.docSeq.path)) {
      const rows = valueOf(this.bundle(files.docTerms.path)!, 'rows', 'rows');
      const seq = this.bundle(files.docSeq.path)!;
      setSection(ix, 'docTermOffsets', rows.offsets);
      setSection(ix, 'docTermIds', rows.values);
      setSection(ix, 'docSeqOffsets', valueOf(seq, 'offsets', 'u32'));
      setSection(ix, 'docSeq', valueOf(seq, 'values', 'u8'));
    } else {
      // Made on first use (a word checked document by document): a pass over every document at a million.
      let forward: Rows | null = null;
      Object.defineProperty(ix, 'docTerms', { get: () => (forward ??= invertRows(docOffsets, termDocs, n)) });
    }

    for (const name of ['docPanel', 'docDecision', 'docType', 'docFlags', 'docCountry', 'docState', 'docReceived'] as const) {
      if (this.has(files[name].path)) setSection(ix, name, this.column(name) as never);
    }
    if (this.has(files.codeTypes.path)) setSection(ix, 'codeTypes', valueOf(this.bundle(files.codeTypes.path)!, 'codeTypes', 'json') as string[]);

    if (this.has(files.docCode.path)) setSection(ix, 'docCode', this.column('docCode') as Uint16Array);
    else {
      const part = this.partial('codeIds', 'codeDocs', dir.codeChunks, dir.counts.codes, NO_CODE, 'u16');
      lazyColumn(ix, 'docCode', part.column);
      setDerived(ix, 'codeDocs', part.rows);
    }
    if (this.has(files.docApplicant.path) && this.has(files.applicants.path)) {
      setSection(ix, 'docApplicant', this.column('docApplicant') as Uint32Array);
      const names = this.bundle(files.applicants.path)!;
      setSection(ix, 'applicants', valueOf(names, 'applicants', 'json') as string[]);
      setSection(ix, 'applicantsByKey', valueOf(names, 'applicantsByKey', 'u32'));
    } else {
      const part = this.partial('applicantIds', 'applicantDocs', [], dir.counts.applicants, NO_APPLICANT, 'u32');
      lazyColumn(ix, 'docApplicant', part.column);
      setDerived(ix, 'applicantDocs', part.rows);
      setSection(ix, 'applicants', lengthOnly(dir.counts.applicants, 'applicants'));
    }

    setPredicateSections(ix, dir, (path) => this.bundle(path));
    if (this.has(files.docKNumber.path)) setSection(ix, 'docKNumber', this.column('docKNumber') as Uint32Array);
    else {
      // A page's K numbers come from their blocks (`kNumbers`), which the view does not hold: with the whole column
      // absent, nothing reads K numbers at large, and the engine's own reading of a page's is replaced by the caller.
      setSection(ix, 'docKNumber', new Uint32Array(0));
      // Read only for a K number word, which declares the whole column (scanWord takes it in a local all the same).
      setDerived(ix, 'byKNumber', new Uint32Array(0));
    }
    // What the view holds beyond the cached files: its word list and offsets, and rows copied together.
    this.cache.setExtra(this, dir.counts.terms * 20 + (docRows.length > 1 ? termDocs.byteLength : 0) + (appRows.length > 1 ? appAt * 4 : 0) + codeAt * 2);
    this.current = ix;
    return ix;
  }

  /**
   * A column known only for the documents of the codes (applicants) whose rows are loaded, in term chunks (`idsName`,
   * `rowsName`) or in id chunks, and those rows.
   */
  private partial(idsName: string, rowsName: string, chunks: readonly IdChunk[], ids: number, none: number, type: 'u16' | 'u32'): { column: () => Uint16Array | Uint32Array; rows: Rows } {
    const n = this.directory.counts.docs;
    const lengths = new Uint32Array(ids + 1);
    const loaded: { ids: Uint32Array; rows: Rows }[] = [];
    const found = new Uint8Array(ids);
    const take = (idList: Uint32Array, rows: Rows, path: string) => {
      if (rows.offsets.length !== idList.length + 1 || idList.some((id) => id >= ids)) throw new ChunkFormatError(`${path}: its ids and rows do not match`);
      // The same code may come in several chunks: its rows once.
      const keep: number[] = [];
      for (let i = 0; i < idList.length; i++) {
        const id = idList[i]!;
        if (found[id]) continue;
        found[id] = 1;
        keep.push(i);
        lengths[id + 1] = rows.offsets[i + 1]! - rows.offsets[i]!;
      }
      if (keep.length > 0) loaded.push({ ids: Uint32Array.from(keep, (i) => idList[i]!), rows: pickRows(rows, Uint32Array.from(keep)) });
    };
    for (const c of this.directory.termChunks) {
      const bundle = this.bundle(c.file.path);
      if (bundle) take(valueOf(bundle, idsName, 'u32'), valueOf(bundle, rowsName, 'rows'), c.file.path);
    }
    for (const c of chunks) {
      const bundle = this.bundle(c.file.path);
      if (!bundle) continue;
      const idList = valueOf(bundle, 'ids', 'u32');
      if (idList.length !== c.count) throw new ChunkFormatError(`${c.file.path}: not the chunk the directory names`);
      take(idList, valueOf(bundle, 'docs', 'rows'), c.file.path);
    }
    // Rows in id order: an id whose chunk is not loaded has none.
    const offsets = lengths;
    for (let i = 0; i < ids; i++) offsets[i + 1]! += offsets[i]!;
    const values = new Uint32Array(offsets[ids]!);
    for (const { ids: idList, rows } of loaded) {
      for (let i = 0; i < idList.length; i++) values.set(rows.values.subarray(rows.offsets[i]!, rows.offsets[i + 1]!), offsets[idList[i]!]!);
    }
    // The column from the rows, made on first use (a word checked document by document).
    const column = () => {
      const out = type === 'u16' ? new Uint16Array(n) : new Uint32Array(n);
      out.fill(none);
      for (let id = 0; id < ids; id++) for (let j = offsets[id]!; j < offsets[id + 1]!; j++) out[values[j]!] = id;
      return out;
    };
    return { column, rows: { offsets, values } };
  }
}

/** A column of the index made on first read, then kept (an own property ahead of the index's section getter). */
function lazyColumn(ix: SearchIndex, name: 'docCode' | 'docApplicant', make: () => Uint16Array | Uint32Array): void {
  let made: Uint16Array | Uint32Array | null = null;
  Object.defineProperty(ix, name, { get: () => (made ??= make()) });
}

function sameFacets(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
