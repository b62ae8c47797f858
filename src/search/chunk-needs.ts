import type { ChunkFile, SearchChunks } from '../contract/search-chunks.ts';
import type { SearchSectionName } from '../contract/search-index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { valueOf } from './bundle.ts';
import type { ChunkCache, Lease } from './chunk-cache.ts';
import { chunksOfPrefix } from './chunk-directory.ts';
import type { SearchRequest } from './engine.ts';
import { parseQuery, type ParsedQuery } from './grammar.ts';
import { sectionsFor } from './needs.ts';
import { predicatePaths } from './chunked-predicates.ts';
import { kNumberRange, queryWords } from './tokenize.ts';

/**
 * Which files of the chunked index a request reads (src/search/chunked.ts): for its first page, or for its whole
 * answer with facet counts and statistics.
 */

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

function planOf(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean): Plan | null {
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
 * What a request of one shape reads, worked out once: the files, in the order `missingFiles` names them, and, for a
 * request whose short words match product codes by their letters while the whole code column is not loaded, the code
 * chunks those words reach (known once the dictionaries are in; null until then).
 */
type FilePlan = { paths: readonly string[]; codeChunks: 'none' | readonly string[] | null; shortWords: readonly string[] };

/**
 * The request's shape: everything `planOf` and the file list read, and nothing else (a page, a page size, a facet's
 * size or order, which value a filter names, leave the files the same). A request's `parsed` is the parse of its
 * `query` (engine.ts), so the query stands for both.
 */
function shapeOf(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean): string {
  const facets = whole ? (req.facets === undefined ? '*' : req.facets.map((f) => f.field).join(',')) : '';
  const years = req.yearFrom !== null || req.yearTo !== null;
  return `${whole ? 1 : 0}${req.applicant !== null ? 1 : 0}${req.productCode !== null ? 1 : 0}${years ? 1 : 0}${whole && req.stats ? 1 : 0}|${req.sort ?? ''}|${facets}|${req.query}`;
}

/**
 * The file plans of one chunked index's requests, by shape, the most recent `limit` kept: a warm load asks the same
 * shapes again and again, and working out the files (parsing the query, the sections it reads, each word's chunks)
 * cost as much as answering from loaded files. A plan never depends on what is loaded, so it is the same computed
 * afresh; test/search/chunk-plans.test.ts checks that for every kind of request and state of the cache.
 */
export class FilePlans {
  private readonly kept = new Map<string, FilePlan>();
  constructor(
    private readonly dir: SearchChunks,
    private readonly limit = 256,
  ) {}

  /** The plan of a request of this shape; `cache` gives the dictionaries when they are loaded. */
  of(req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, cache: ChunkCache): FilePlan {
    const key = shapeOf(req, whole);
    let plan = this.kept.get(key);
    if (plan) {
      this.kept.delete(key);
      this.kept.set(key, plan);
    } else {
      // Not kept when it throws (a predicate term over a directory without predicates): worked out each time.
      plan = filePlan(this.dir, req, whole);
      this.kept.set(key, plan);
      if (this.kept.size > this.limit) this.kept.delete(this.kept.keys().next().value!);
    }
    if (plan.codeChunks === null && cache.has(this.dir.files.dicts.path)) plan.codeChunks = codeChunkPaths(this.dir, cache, plan.shortWords);
    return plan;
  }

  /** Plans kept (for tests). */
  get size(): number {
    return this.kept.size;
  }
}

/** What a request reads, whatever is loaded (see FilePlan). */
function filePlan(dir: SearchChunks, req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean): FilePlan & { codeChunks: FilePlan['codeChunks'] } {
  const files = dir.files;
  const out = new Set<string>();
  const need = (path: string) => out.add(path);
  need(files.dicts.path);
  const plan = planOf(req, whole);
  if (!plan) return { paths: [...out], codeChunks: 'none', shortWords: [] };
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
  const shortWords = plan.words.filter((w) => w.length <= 3);
  return { paths: [...out], codeChunks: plan.wholeCodes || shortWords.length === 0 ? 'none' : null, shortWords };
}

/** Short words match product codes by their letters: those codes' documents, from the code chunks (dictionaries loaded). */
function codeChunkPaths(dir: SearchChunks, cache: ChunkCache, shortWords: readonly string[]): string[] {
  const out = new Set<string>();
  const lower = codesLower(dir, cache);
  for (const word of shortWords) {
    for (let c = partitionPoint(0, lower.length, (i) => lower[i]! < word); c < lower.length && lower[c]!.startsWith(word); c++) {
      out.add(dir.codeChunks[dir.codeChunkOf[c]!]!.file.path);
    }
  }
  return [...out];
}

/**
 * The files a request still lacks, given what is loaded: for its first page (`whole` false) or its whole answer
 * with facet counts and statistics (`whole` true). Which product codes and applicants a word reaches is known once
 * the word's chunks are in, so a request may name more files after those arrive: call until it names none. With
 * `plans`, the files of a request's shape are worked out once (FilePlans); without, afresh.
 */
export function missingFiles(dir: SearchChunks, cache: ChunkCache, req: Omit<SearchRequest, 'page' | 'pageSize'>, whole: boolean, lease?: Lease, plans?: FilePlans): string[] {
  const plan = plans ? plans.of(req, whole, cache) : filePlan(dir, req, whole);
  const out: string[] = [];
  // With a lease, a file the cache holds is held for it in the same look-up.
  const need = lease ? (path: string) => lease.hold(path) || out.push(path) : (path: string) => cache.has(path) || out.push(path);
  for (const path of plan.paths) need(path);
  if (plan.codeChunks !== 'none' && !cache.has(dir.files.docCode.path) && cache.has(dir.files.dicts.path)) {
    for (const path of plan.codeChunks ?? codeChunkPaths(dir, cache, plan.shortWords)) need(path);
  }
  return out;
}

/** The product codes in lower case, from the dictionaries (loaded). */
function codesLower(dir: SearchChunks, cache: ChunkCache): string[] {
  const path = dir.files.dicts.path;
  return cache.derive(
    path,
    'codesLower',
    () => (valueOf(cache.peek(path)!.bundle, 'lists', 'json') as { codes: string[] }).codes.map((c) => c.toLowerCase()),
    (lower) => lower.length * 32,
  );
}
