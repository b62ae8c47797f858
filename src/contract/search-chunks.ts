import { z } from 'zod';

/**
 * The search index once more, cut so that a browser fetches only what a query needs (docs/page.md, "Static mode").
 * The same arrays as `search/` (src/contract/search-index.ts), in other files:
 *
 * - `search/chunks.json`, the directory below: small, read first, and the only file whose name does not change.
 * - Every other file is `search/chunks/<kind>-<hash>.bin.gz`: gzip of one bundle (src/search/bundle.ts), named by
 *   the first CHUNK_HASH_CHARS hex digits of the sha256 of the gzip bytes, so that a host may cache it for a year
 *   (the same name always means the same bytes) and a reader can check what it got. Stored compressed because most
 *   static hosts send binary files as they are.
 * - Term chunks: the sorted word list cut into runs (`termChunks` names each run's first and last word), each with its
 *   words' documents, applicants and product codes as rows (`docs`, `applicants`, `codes`), and the documents of every
 *   product code and applicant group its words reach (`codeIds` with `codeDocs`, `applicantIds` with `applicantDocs`):
 *   a word matches the clearances of a code whose device type has it, and of an applicant whose name has it, so its
 *   chunks alone say which documents it matches, without the per-document columns. A word, or a prefix, lies in the
 *   chunks whose range it meets.
 * - Code chunks: the documents of some product codes as rows beside their ids (`ids`, `docs`), `codeChunkOf` naming
 *   each code's chunk, for a short word that matches product codes by their letters ("dq" matches DQY).
 * - K number blocks: `docKNumber` by blocks of `kBlockDocs` documents, so that a page of results needs a few blocks.
 * - Whole files (`files`): the dictionaries (`dicts`: product codes and the small value lists), `applicants` (names and
 *   their comparison order), `codeTypes`, the decision dates as runs (`decided`: documents run in decision date order,
 *   so the column is a few thousand runs; the decision years follow from it), and one file per document column that
 *   filters, sorts and facet counts read (`docCode`, `docApplicant`, `docPanel`, …, the forward word lists and word
 *   sequences for phrases). A column is stored in the narrowest of u8, u16, u32 that holds it.
 * - Predicates (`predicates`, absent from a directory written before them): the documents that name each device
 *   (`predDocs` rows and their edges' kinds) in chunks cut by device code (`chunks` names each one's first and last
 *   code), so that `predicate:K123456` reads one chunk; and whole files for the facet (`codes`: every device named,
 *   `docPreds`: each document's devices and kinds) and for `kind:` (`docEdgeKinds`).
 * - Word lists (`words`, absent from a directory written before them): the sorted word list alone, cut into runs
 *   (`chunks` names each one's first and last word), each file the run's words (`words`), on how many device names
 *   each is (`docs`) and whether it is a word of an applicant or a device type (`reach`, 1 or 0), for "did you mean" (src/search/spelling.ts), which reads the runs of one first letter rather
 *   than the term chunks' rows.
 * - `landing`: the answer with no query, no filter and the page's facet requests (the counts of everything), and the
 *   first LANDING_KNUMBERS K numbers, so that the first visit reads no index file at all; `years`: documents per
 *   decision year.
 */
export const SEARCH_CHUNKS_FORMAT = 'device-510k-search-chunks';
export const SEARCH_CHUNKS_VERSION = 1;
export const SEARCH_CHUNKS_PATH = 'search/chunks.json';
export const SEARCH_CHUNKS_DIR = 'search/chunks';
export const CHUNK_HASH_CHARS = 20;
/** Uncompressed bytes of rows a term chunk aims at (a single long row may exceed it). */
export const CHUNK_TARGET_BYTES = 48 * 1024;
/** The same for code chunks: smaller, since a short word reaches a few codes among many. */
export const ID_CHUNK_TARGET_BYTES = 16 * 1024;
/** Uncompressed bytes a word list chunk aims at: a word's letters and 4 bytes each. */
export const WORD_CHUNK_TARGET_BYTES = 16 * 1024;
/** Documents per K number block: a 4-byte number each, so 8 KB before compression. */
export const K_BLOCK_DOCS = 2048;
/** The K numbers the landing answer carries: the first page at every page size the page offers. */
export const LANDING_KNUMBERS = 100;

export const chunkPath = (kind: string, hashHex: string): string => `${SEARCH_CHUNKS_DIR}/${kind}-${hashHex.slice(0, CHUNK_HASH_CHARS)}.bin.gz`;
export const CHUNK_PATH_PATTERN = /^search\/chunks\/[a-z][a-zA-Z0-9]*-([0-9a-f]{20})\.bin\.gz$/;

/** The whole files, each a bundle; document columns hold `values` (and `meta`: the engine's type and "none" value). */
export const CHUNK_FILES = [
  'dicts', 'applicants', 'codeTypes', 'decided', 'docKNumber', 'docCode', 'docApplicant', 'docPanel', 'docDecision', 'docType',
  'docFlags', 'docCountry', 'docState', 'docReceived', 'docTerms', 'docSeq',
] as const;
export type ChunkFile = (typeof CHUNK_FILES)[number];

/**
 * A chunk file: its path, its size, and the first CHUNK_HASH_CHARS hex digits of the sha256 of the bytes inside the
 * gzip (`inflated`), by which a reader checks a file that a host inflated on the way (directories written before it
 * was added lack it; such a file arriving inflated cannot be checked).
 */
const FileRef = z.strictObject({ path: z.string().regex(CHUNK_PATH_PATTERN), bytes: z.int().min(0), inflated: z.string().regex(/^[0-9a-f]{20}$/).optional() });
export type FileRef = z.infer<typeof FileRef>;

const IdChunk = z.strictObject({ count: z.int().min(1), file: FileRef });
export type IdChunk = z.infer<typeof IdChunk>;

export const PredicateChunks = z.strictObject({
  count: z.int().min(0),
  chunks: z.array(z.strictObject({ first: z.int().min(0), last: z.int().min(0), from: z.int().min(0), count: z.int().min(1), file: FileRef })),
  codes: FileRef,
  docPreds: FileRef,
  docEdgeKinds: FileRef,
});
export type PredicateChunks = z.infer<typeof PredicateChunks>;

export const WordChunks = z.strictObject({
  chunks: z.array(z.strictObject({ first: z.string(), last: z.string(), from: z.int().min(0), count: z.int().min(1), file: FileRef })),
});
export type WordChunks = z.infer<typeof WordChunks>;

export const SearchChunks = z.strictObject({
  format: z.literal(SEARCH_CHUNKS_FORMAT),
  version: z.literal(SEARCH_CHUNKS_VERSION),
  /** The sha256 of search/index.json: a reader can tell that both describe the same build. */
  indexHeaderSha256: z.string().regex(/^[0-9a-f]{64}$/),
  counts: z.strictObject({ docs: z.int().min(0), terms: z.int().min(0), codes: z.int().min(0), applicants: z.int().min(0) }),
  files: z.record(z.enum(CHUNK_FILES), FileRef),
  termChunks: z.array(z.strictObject({ first: z.string(), last: z.string(), from: z.int().min(0), count: z.int().min(1), file: FileRef })),
  codeChunks: z.array(IdChunk),
  /** For each product code id, the code chunk holding its documents. */
  codeChunkOf: z.array(z.int().min(0)),
  kBlockDocs: z.int().min(1),
  kBlocks: z.array(FileRef),
  landing: z.strictObject({
    facets: z.array(z.strictObject({ field: z.string(), size: z.int().min(1).nullable(), order: z.enum(['count', 'value']) })),
    kNumbers: z.array(z.string()),
    facetCounts: z.array(z.unknown()),
  }),
  years: z.array(z.strictObject({ year: z.int().nullable(), count: z.int().min(0) })),
  predicates: PredicateChunks.optional(),
  words: WordChunks.optional(),
});
export type SearchChunks = z.infer<typeof SearchChunks>;
