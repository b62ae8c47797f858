import { isPredicateSection, NO_APPLICANT, NO_CODE, SEARCH_SECTION_NAMES, type SearchSectionName } from '../contract/search-index.ts';
import { noApplicantIn, type SearchIndexData } from './codec.ts';
import { groupByColumn, type Rows } from './csr.ts';
import { applicantKey } from './tokenize.ts';
import { partitionPoint } from '../utils/bisect.ts';

/**
 * A search index: the stored arrays plus lookups derived from them (each a linear pass, cheaper than storing and
 * reading them): documents by K number, by product code and by applicant. Everything is typed arrays; nothing is an
 * object per document.
 *
 * Sections may be loaded one at a time (src/search/load.ts): reading a section that is not loaded throws
 * SectionNotLoaded, so a request that forgot to ask for a section fails loudly instead of reading nothing. Derived
 * lookups are made on first use from the sections they need, and kept.
 */
export type SearchIndex = SearchIndexData & {
  docCount: number;
  /** Each document's deviceName terms, ascending (`docTermOffsets` and `docTermIds` as rows). */
  docTerms: Rows;
  /**
   * The index holds no forward lists (`docTerms`): a word is checked against a document through its own postings
   * (words.ts `termMarks`). The chunked index (src/search/chunk-view.ts) holds only some words' postings, and making
   * their forward lists would be a pass over every document each time its loaded files change.
   */
  readonly withoutForward: boolean;
  /** Document ids in K number ascending order. */
  byKNumber: Uint32Array;
  codeDocs: Rows;
  applicantDocs: Rows;
  /**
   * The rows a word reads for the product codes its terms reach (`termCodes`) and the applicants they reach
   * (`termApplicants`): the whole `codeDocs` and `applicantDocs`, or, in an index that holds only some words
   * (src/search/chunk-view.ts), at least the rows of every code and applicant its loaded words reach, so that a word
   * search need not make the whole tables. The codes a short word reaches by their letters are read from `codeDocs`.
   */
  wordCodeDocs: Rows;
  wordApplicantDocs: Rows;
  codesLower: string[];
};

/** A section was read before it was loaded: the request's list of sections (src/search/needs.ts) lacks it. */
export class SectionNotLoaded extends Error {
  override readonly name = 'SectionNotLoaded';
  constructor(readonly section: SearchSectionName) {
    super(`search index section ${section} was read before it was loaded; add it to the sections the request needs`);
  }
}

/**
 * A query needs the predicate sections (`predicate:`, `kind:`, the `predicate` facet) of an index written before they
 * existed: the snapshot must be built again; every other query answers as before.
 */
export class PredicatesNotIndexed extends Error {
  override readonly name = 'PredicatesNotIndexed';
  constructor() {
    super("This snapshot's search index was built before predicates were indexed: predicate:, kind: and the predicate facet need the snapshot built again (npm run build). Every other search is available.");
  }
}

export type Derived = { docTerms?: Rows; byKNumber?: Uint32Array; codeDocs?: Rows; applicantDocs?: Rows; wordCodeDocs?: Rows; wordApplicantDocs?: Rows; codesLower?: string[] };

class IndexObject {
  readonly docCount: number;
  /** Every section name, undefined until loaded (one shape from the start, so reads stay fast). */
  readonly sections: Record<SearchSectionName, SearchIndexData[SearchSectionName] | undefined>;
  readonly derived: Derived = {};
  /** The index was written without the predicate sections (see PredicatesNotIndexed). */
  predicatesAbsent = false;
  withoutForward = false;

  constructor(docCount: number) {
    this.docCount = docCount;
    this.sections = Object.fromEntries(SEARCH_SECTION_NAMES.map((n) => [n, undefined])) as IndexObject['sections'];
  }

  get docTerms(): Rows {
    return (this.derived.docTerms ??= { offsets: this.docTermOffsets, values: this.docTermIds });
  }
  get byKNumber(): Uint32Array {
    return (this.derived.byKNumber ??= DERIVE.byKNumber(this));
  }
  get codeDocs(): Rows {
    return (this.derived.codeDocs ??= DERIVE.codeDocs(this));
  }
  get applicantDocs(): Rows {
    return (this.derived.applicantDocs ??= DERIVE.applicantDocs(this));
  }
  get wordCodeDocs(): Rows {
    return this.derived.wordCodeDocs ?? this.codeDocs;
  }
  get wordApplicantDocs(): Rows {
    return this.derived.wordApplicantDocs ?? this.applicantDocs;
  }
  get codesLower(): string[] {
    return (this.derived.codesLower ??= this.codes.map((c) => c.toLowerCase()));
  }
}
interface IndexObject extends SearchIndexData {}

/** The lookups derived from one whole column each, and how. */
const DERIVE = {
  byKNumber: (ix: SearchIndexData) => sortByKNumber(ix.docKNumber),
  codeDocs: (ix: SearchIndexData) => groupByColumn(ix.docCode, ix.codes.length, NO_CODE),
  applicantDocs: (ix: SearchIndexData) => groupByColumn(ix.docApplicant, ix.applicants.length, noApplicantIn(ix.docApplicant)),
} as const;

/**
 * Has a lookup derived from a whole column made on first use through `keep`, which may hand back one made before: a
 * reader whose indexes are made again over the same columns (src/search/chunk-view.ts) keeps it with the column's file
 * rather than deriving it again for every index.
 */
export function deriveThrough<K extends keyof typeof DERIVE>(index: SearchIndex, name: K, keep: (make: () => ReturnType<(typeof DERIVE)[K]>) => ReturnType<(typeof DERIVE)[K]>): void {
  let made: ReturnType<(typeof DERIVE)[K]> | undefined;
  Object.defineProperty((index as IndexObject).derived, name, { get: () => (made ??= keep(() => DERIVE[name](index) as ReturnType<(typeof DERIVE)[K]>)), configurable: true, enumerable: true });
}

// One getter per section name on the prototype: generic over SEARCH_SECTIONS, so a section added there needs nothing here.
for (const name of SEARCH_SECTION_NAMES) {
  Object.defineProperty(IndexObject.prototype, name, {
    get(this: IndexObject) {
      const value = this.sections[name];
      if (value === undefined) throw this.predicatesAbsent && isPredicateSection(name) ? new PredicatesNotIndexed() : new SectionNotLoaded(name);
      return value;
    },
  });
}

/** An index with no section loaded yet; `setSection` fills it. */
export function emptySearchIndex(docCount: number): SearchIndex {
  return new IndexObject(docCount);
}

/** Makes a loaded section readable through the index. */
export function setSection<K extends SearchSectionName>(index: SearchIndex, name: K, value: SearchIndexData[K]): void {
  (index as IndexObject).sections[name] = value;
}

/**
 * Sets a derived lookup instead of deriving it from whole sections: a reader that holds only some of an index's rows
 * (src/search/chunked.ts) gives the rows it has.
 */
export function setDerived<K extends keyof Derived>(index: SearchIndex, name: K, value: Derived[K]): void {
  (index as IndexObject).derived[name] = value;
}

/** Has a derived lookup made on first read by `make`, then kept (a reader that makes its own, as `setDerived`). */
export function setDerivedLazily<K extends keyof Derived>(index: SearchIndex, name: K, make: () => NonNullable<Derived[K]>): void {
  let made: Derived[K] | undefined;
  Object.defineProperty((index as IndexObject).derived, name, { get: () => (made ??= make()), configurable: true, enumerable: true });
}

/** Marks an index that holds no forward lists (see `SearchIndex.withoutForward`): reading `docTerms` throws. */
export function markWithoutForward(index: SearchIndex): void {
  (index as IndexObject).withoutForward = true;
}

/** Marks an index written without the predicate sections: reading one throws PredicatesNotIndexed. */
export function markPredicatesAbsent(index: SearchIndex): void {
  (index as IndexObject).predicatesAbsent = true;
}

/** True when the section can be read. */
export function hasSection(index: SearchIndex, name: SearchSectionName): boolean {
  return (index as IndexObject).sections[name] !== undefined;
}

/** An index with every section loaded. */
export function openSearchIndex(data: SearchIndexData): SearchIndex {
  const index = emptySearchIndex(data.docKNumber.length);
  for (const name of SEARCH_SECTION_NAMES) if (data[name] !== undefined) setSection(index, name, data[name]);
  if (data.predCodes === undefined) markPredicatesAbsent(index);
  return index;
}

/** K numbers are six digits, so a counting pass over a million slots sorts them in linear time. */
function sortByKNumber(kNumbers: Uint32Array): Uint32Array {
  if (kNumbers.length < 10_000) {
    const ids = Uint32Array.from(kNumbers.keys());
    return ids.sort((a, b) => kNumbers[a]! - kNumbers[b]!);
  }
  const slot = new Int32Array(1_000_000).fill(-1);
  for (let d = 0; d < kNumbers.length; d++) slot[kNumbers[d]!] = d;
  const out = new Uint32Array(kNumbers.length);
  let at = 0;
  for (let k = 0; k < slot.length && at < out.length; k++) if (slot[k]! >= 0) out[at++] = slot[k]!;
  if (at !== out.length) throw new Error('search index: K numbers are not unique');
  return out;
}

/** The applicant group the applicant filter names, or null when no clearance has that applicant. */
export function findApplicant(index: SearchIndex, applicant: string): number | null {
  const key = applicantKey(applicant);
  const lo = partitionPoint(0, index.applicantsByKey.length, (i) => applicantKey(index.applicants[index.applicantsByKey[i]!]!) < key);
  const id = index.applicantsByKey[lo];
  return id !== undefined && applicantKey(index.applicants[id]!) === key ? id : null;
}

/** The product code's index, or null when no clearance carries it. */
export function findCode(index: SearchIndex, code: string): number | null {
  const i = partitionPoint(0, index.codes.length, (i) => index.codes[i]! < code);
  return index.codes[i] === code ? i : null;
}

/** Documents whose decision year is within [from, to]: one id range, since ids run in decision date order. */
export function yearRange(index: SearchIndex, from: number | null, to: number | null): { lo: number; hi: number } {
  if (from === null && to === null) return { lo: 0, hi: index.docCount };
  const upper = to ?? 0xffff;
  const lower = from ?? 1; // year 0 stands for "no decision date", which never passes a year filter
  const years = index.docYear;
  const lo = partitionPoint(0, index.docCount, (d) => years[d]! > upper);
  const hi = partitionPoint(0, index.docCount, (d) => years[d]! >= lower);
  return { lo, hi: Math.max(lo, hi) };
}

