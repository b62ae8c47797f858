import type { SearchChunks } from '../contract/search-chunks.ts';
import { BundleFormatError, decodeBundle, valueOf, type Decoded } from './bundle.ts';
import { bundleBytes, ChunkCache, Lease, withoutRawBytes } from './chunk-cache.ts';
import { ChunkFormatError, runsOfPrefix, type ReadChunk } from './chunk-directory.ts';
import { QueryCostError } from './cost.ts';
import { parseQuery, QueryError } from './grammar.ts';
import { chooseSuggestions, countRequest, planCorrections, spellingWords, type SpellingSuggestion, type WordList } from './spelling.ts';
import { queryWords } from './tokenize.ts';
import { FilePlans, missingFiles } from './chunk-needs.ts';
import { predicateFilePaths } from './chunked-predicates.ts';
import { LoadedChunks } from './chunk-view.ts';
import type { FacetOut } from './facet-fields.ts';
import type { SearchIndex } from './model.ts';
import { matchesOf, runSearch, type SearchOutcome, type SearchRequest } from './engine.ts';
import { kNumberText } from './k-number.ts';
import { orderPage, orderRange } from './sort.ts';

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
 *
 * The directory and its check are in chunk-directory.ts, which files a request reads in chunk-needs.ts, the index over
 * the loaded files in chunk-view.ts, and the cache and the leases on it in chunk-cache.ts.
 */

/** What the first step answers: the exact total and the page's K numbers in answer order. */
export type FirstPage = { total: number; kNumbers: string[] };

export class ChunkedIndex {
  readonly directory: SearchChunks;
  readonly cache: ChunkCache;
  private readonly read: ReadChunk;
  private readonly loaded: LoadedChunks;
  private readonly loads = new Map<string, Promise<void>>();
  /** The files of each request shape, worked out once. */
  readonly plans: FilePlans;
  /** The leases waiting for each file being read: each holds it the moment it arrives. */
  private readonly waiting = new Map<string, Set<Lease>>();
  /** Paths of the K number blocks and word lists: read for a page's K numbers and for spelling, never by the view. */
  private readonly kBlockPaths: Set<string>;
  private current: SearchIndex | null = null;
  /** The files the current index was made over. */
  private currentFiles: Set<string> = new Set();
  /** Requests answered over an index of their own files since the current index was made (see `indexFor`). */
  private ownViews = REMAKE_AFTER;
  /** A file the current index does not read came in since it was made (the page's requests need the new one). */
  private stale = false;
  /** Bytes of the files loaded (as read, before inflating), for progress and measurements. */
  loadedBytes = 0;
  /** Files read, one count per read (a file let go of and read again counts twice), for measurements and tests. */
  reads = 0;
  /** Indexes made over the loaded files (over everything, or over one request's own), for measurements. */
  indexesMade = 0;

  constructor(directory: SearchChunks, read: ReadChunk, cache: ChunkCache = new ChunkCache(Number.POSITIVE_INFINITY)) {
    this.directory = directory;
    this.read = read;
    this.cache = cache;
    this.loaded = new LoadedChunks(directory, cache);
    this.plans = new FilePlans(directory);
    this.kBlockPaths = new Set([...directory.kBlocks.map((b) => b.path), ...(directory.words?.chunks.map((c) => c.file.path) ?? [])]);
    const own = new Set([...Object.values(directory.files).map((f) => f.path), ...directory.termChunks.map((c) => c.file.path), ...directory.codeChunks.map((c) => c.file.path), ...predicateFilePaths(directory)]);
    // A file of this index let go of: the view over it goes too (it is made again over what is left).
    cache.watch((path) => {
      if (own.has(path) && this.currentFiles.has(path)) this.dropView();
    });
  }

  /** Whether the current index reads a file or has no need of it (a K number block or word list). */
  private readonly inCurrent = (path: string): boolean => this.currentFiles.has(path) || this.kBlockPaths.has(path);

  private has(path: string): boolean {
    return this.cache.has(path);
  }

  private dropView(): void {
    this.current = null;
    this.currentFiles = new Set();
    this.cache.setExtra(this, 0);
  }

  /**
   * The files a request still lacks, given what is loaded: for its first page (`whole` false) or its whole answer
   * with facet counts and statistics (`whole` true). Which product codes and applicants a word reaches is known once
   * the word's chunks are in, so a request may name more files after those arrive: call until it names none.
   */
  missing(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, lease?: Lease): string[] {
    return missingFiles(this.directory, this.cache, req, whole, lease, this.plans);
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
              bundle = withoutRawBytes(bytes, decodeBundle(bytes));
            } catch (err) {
              throw err instanceof BundleFormatError ? new ChunkFormatError(`${path}: ${err.message}`) : err;
            }
            this.cache.set(path, bundle, bundleBytes(bytes, bundle));
            for (const l of this.waiting.get(path) ?? []) l.hold(path);
            this.waiting.delete(path);
            this.loadedBytes += bytes.byteLength;
            this.reads++;
            if (!this.kBlockPaths.has(path)) this.stale = true;

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
      if (missing.length === 0) return lease ? this.indexFor(lease) : this.view();
      await this.load(missing, lease);
      onProgress?.(this.loadedBytes);
    }
    throw new Error('search chunks: a request kept asking for more files');
  }

  /**
   * The index a request reads when every file it needs is loaded (each then held by `lease`), without a promise: a warm
   * cache answers most requests so. Null when a file is to be read (`ensure` reads it).
   */
  ready(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, lease: Lease): SearchIndex | null {
    return this.missing(req, whole, lease).length === 0 ? this.indexFor(lease) : null;
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

  /** The exact number of matches of a request, without its page (its words' chunks and what they reach). */
  async total(req: SearchRequest, lease?: Lease): Promise<number> {
    if (this.landing(req)) return this.directory.counts.docs;
    const index = await this.ensure(req, false, undefined, lease);
    const { facets: _f, stats: _s, ...rest } = req;
    const m = matchesOf(index, rest);
    return 'docs' in m ? m.docs.length : m.hi - m.lo;
  }

  /**
   * "Did you mean" (src/search/spelling.ts) over the word lists of the first letters of the words to correct, then
   * each corrected query counted as a search (its words' chunks): the whole index's answer. None from a directory
   * written before word lists were.
   */
  async spelling(req: Omit<SearchRequest, 'page' | 'pageSize'>, total: number, lease?: Lease): Promise<SpellingSuggestion[]> {
    const runs = this.directory.words?.chunks;
    if (!runs) return [];
    const parsed = req.parsed ?? parseQuery(req.query);
    const letters = [...new Set(spellingWords(parsed, queryWords(req.query)).map((w) => w[0]!))];
    if (letters.length === 0) return [];
    const chunksOf = new Map(letters.map((l) => [l, runsOfPrefix(runs, l)]));
    await this.load([...new Set([...chunksOf.values()].flat())].map((c) => runs[c]!.file.path), lease);
    const lists = new Map<string, WordList>();
    const listFor = (word: string): WordList => {
      const letter = word[0]!;
      let list = lists.get(letter);
      if (!list) {
        const words: string[] = [];
        const docs: number[] = [];
        const reach: number[] = [];
        for (const c of chunksOf.get(letter) ?? []) {
          const bundle = this.loaded.bundle(runs[c]!.file.path)!;
          words.push(...(valueOf(bundle, 'words', 'json') as string[]));
          docs.push(...valueOf(bundle, 'docs', 'u32'));
          reach.push(...valueOf(bundle, 'reach', 'u8'));
        }
        lists.set(letter, (list = { words, docs: (i) => docs[i]!, reaches: (i) => reach[i] === 1 }));
      }
      return list;
    };
    const counted: SpellingSuggestion[] = [];
    for (const c of planCorrections(req.query, parsed, listFor)) {
      try {
        counted.push({ ...c, total: await this.total(countRequest(req, c.query), lease) });
      } catch (err) {
        if (!(err instanceof QueryCostError || err instanceof QueryError)) throw err;
      }
    }
    return chooseSuggestions(counted, total);
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
    const lacking = this.lackingBlocks(page, lease);
    if (lacking) await this.load([...lacking], lease);
    return this.kNumbersOf(page);
  }

  /** `kNumbers` without a promise when nothing is to be read (a warm cache), else null. */
  kNumbersLoaded(page: Uint32Array, lease?: Lease): string[] | null {
    return this.lackingBlocks(page, lease) ? null : this.kNumbersOf(page);
  }

  /**
   * The K number blocks of these documents that the cache lacks (null: none), when the whole column is not in; those
   * it holds are held for the lease. A page's documents mostly run in order, so each block is looked up once a run.
   */
  private lackingBlocks(page: Uint32Array, lease?: Lease): Set<string> | null {
    const dir = this.directory;
    if (lease ? lease.hold(dir.files.docKNumber.path) : this.has(dir.files.docKNumber.path)) return null;
    let lacking: Set<string> | null = null;
    for (let i = 0, last = -1; i < page.length; i++) {
      const b = Math.floor(page[i]! / dir.kBlockDocs);
      if (b === last) continue;
      last = b;
      const path = dir.kBlocks[b]!.path;
      if (!(lease ? lease.hold(path) : this.has(path))) (lacking ??= new Set()).add(path);
    }
    return lacking;
  }

  /** The K numbers of documents whose blocks (or the whole column) are loaded. */
  private kNumbersOf(page: Uint32Array): string[] {
    const dir = this.directory;
    const out: string[] = new Array<string>(page.length);
    if (this.has(dir.files.docKNumber.path)) {
      const whole = this.loaded.column('docKNumber') as Uint32Array;
      for (let i = 0; i < page.length; i++) out[i] = kNumberText(whole[page[i]!]!);
      return out;
    }
    const size = dir.kBlockDocs;
    let values: Uint32Array | null = null;
    for (let i = 0, last = -1; i < page.length; i++) {
      const d = page[i]!;
      const b = Math.floor(d / size);
      if (b !== last) {
        last = b;
        values = valueOf(this.loaded.bundle(dir.kBlocks[b]!.path)!, 'values', 'u32');
      }
      out[i] = kNumberText(values![d - b * size]!);
    }
    return out;
  }

  /**
   * The index a request reads, its files all held by its lease: the index over everything loaded when that holds all
   * of them, else one over its own files only (made for it, in proportion to them). The index over everything is made
   * again once REMAKE_AFTER requests in a row needed one of their own: making it costs a pass over every loaded word's
   * rows, which a request that reads a file it lacks must not pay each time when files come and go (a cache smaller
   * than what the requests read). Answers are the same either way: every file a request reads is in the index it gets.
   */
  indexFor(lease: Lease): SearchIndex {
    if (this.current && lease.every(this.inCurrent)) return this.current;
    // An index still there lacks only files that came in since it was made (one it reads let go of drops it): made
    // again over everything, it serves this request and every later one that reads them, where each would make its own.
    if (++this.ownViews >= (this.current ? REMAKE_STALE_AFTER : REMAKE_AFTER)) {
      this.dropView();
      return this.view();
    }
    // Counted with the lease while the request holds it: the index's own arrays and what the engine keeps for it.
    this.indexesMade++;
    const { index, extraBytes } = new LoadedChunks(this.directory, this.cache, (path) => lease.holds(path)).view((bytes) => this.cache.addExtra(lease, bytes));
    this.cache.addExtra(lease, extraBytes);
    return index;
  }

  /** The index over everything loaded (made again only when asked for after a file it reads was let go of or `indexFor` remade it). */
  view(): SearchIndex {
    if (this.current && !this.stale) return this.current;
    this.indexesMade++;
    let extra = 0;
    const { index, extraBytes } = this.loaded.view((bytes) => {
      if (this.current === index) this.cache.setExtra(this, (extra += bytes));
    });
    this.cache.setExtra(this, (extra = extraBytes));
    this.current = index;
    this.currentFiles = new Set(this.cache.paths());
    this.ownViews = 0;
    this.stale = false;
    return index;
  }
}

/** Requests in a row over an index of their own files before the index over everything loaded is made again. */
const REMAKE_AFTER = 16;
/** The same, while the index over everything is there but lacks files that came in since (`indexFor`). */
const REMAKE_STALE_AFTER = 2;

function sameFacets(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
