import { z } from 'zod';

/**
 * The API's search index on disk, under `search/` of a snapshot (docs/contract.md section 6 says what search answers;
 * docs/search.md says how this index answers it).
 *
 * `search/index.json` is the header below. The index itself is one byte blob cut into parts of at most `partBytes`
 * (`search/part-000.bin`, `part-001.bin`, …) so that no file outgrows a static host's size limit and a 1,000,000-record
 * snapshot still has only about ten of them. Each section starts at a multiple of 8 in the blob, so a loader can lay a
 * typed array over the bytes without copying. Numbers are little-endian.
 *
 * Documents are the clearances in "no-query order": decisionDate descending (null last), then kNumber descending.
 * A document's id is its position in that order, so an ascending list of ids is already in the order ties take.
 *
 * Sections (name: element type, length):
 * - `docKNumber`: u32[docs], the six digits of the K number.
 * - `docYear`: u16[docs], the decision year, 0 when there is no decision date (non-increasing over ids).
 * - `docCode`: u16[docs], index into `codes`, or NO_CODE.
 * - `docApplicant`: u32[docs], index into `applicants`, or NO_APPLICANT.
 * - `terms`: json, every word of every deviceName, applicant and product-code device type, folded
 *   (see src/search/tokenize.ts), sorted by UTF-16 code units, so that the words starting with a prefix are one range.
 * - `termDocOffsets`: u32[terms + 1] and `termDocs`: u32[...]: for term t, the ids of the documents whose deviceName
 *   has it are `termDocs[termDocOffsets[t] .. termDocOffsets[t + 1]]`, ascending.
 * - `docTermOffsets`: u32[docs + 1] and `docTermIds`: u32[...]: the same relation the other way round (each
 *   document's deviceName terms, ascending), for checking one document against a word. Stored rather than derived
 *   at load: transposing millions of postings is the slowest step a loader would have.
 * - `termApplicantOffsets`, `termApplicants` (u32): the same from terms to applicants whose name has the term.
 * - `termCodeOffsets` (u32), `termCodes` (u16): the same from terms to product codes whose device type has the term.
 * - `codes`: json, every product code seen on a clearance, ascending.
 * - `applicants`: json, one display string per applicant group (records whose applicants are equal ignoring case and
 *   runs of spaces), ascending by UTF-16 code units; the display is the group's most frequent spelling.
 * - `applicantsByKey`: u32[applicants], applicant indexes ordered by their comparison key (lower case, spaces
 *   collapsed), for the applicant filter's binary search.
 *
 * Version 3 adds one column per filterable and sortable field (docs/search.md, "Qualifiers"), each a typed array
 * indexed by document, so that a qualifier is one comparison per candidate and a sort key is one read:
 * - `docDecided`, `docReceived`: u32[docs], day numbers (1 = 1900-01-01), 0 when there is no date. docDecided is
 *   non-increasing over ids, so a decision-date range is one id range.
 * - `docPanel` (review advisory committee), `docDecision` (decision code), `docType` (submission type): u8[docs],
 *   indexes into `panels`, `decisions` and `types`, or NO_SMALL.
 * - `docFlags`: u8[docs], two bits each (0 null, 1 no, 2 yes): thirdParty (bits 0-1), expeditedReview (bits 2-3),
 *   statementOrSummary "Summary" = yes, "Statement" = no (bits 4-5).
 * - `docCountry`, `docState`: u16[docs], indexes into `countries` and `states`, or NO_CODE.
 * - `codeClass`: u8[codes], each product code's device class, an index into `classes`, or NO_SMALL.
 * - `docSeqOffsets`: u32[docs + 1] and `docSeq`: u8[...]: each document's deviceName words in order, as positions in
 *   the document's own ascending term list (`docTermIds`), for phrases. 255 stands for a word past the 255th distinct.
 * - `panels`, `decisions`, `decisionNames`, `types`, `countries`, `states`, `classes`: json, sorted by UTF-16 code
 *   units (`decisionNames[i]` is the most frequent description of `decisions[i]`).
 * - `codeTypes`: json, the device type of each of `codes` ("" when the classification file has none), for facet labels.
 *
 * Version 4 lets a reader load sections one at a time, by byte ranges, and check what it reads without reading the
 * whole blob: `search/blocks.bin` holds, for each `blockBytes` block of the blob (the last one shorter), the first
 * BLOCK_DIGEST_BYTES of its sha256. The table is listed in the manifest and checked whole; each block read is checked
 * against its entry. `partBytes` is a multiple of `blockBytes`, so no block straddles two parts. The header also
 * counts every dictionary, so that a section's values can be bounded before the dictionary itself is read.
 */
export const SEARCH_INDEX_FORMAT = 'device-510k-search';
export const SEARCH_INDEX_VERSION = 4;
export const SEARCH_INDEX_PATH = 'search/index.json';
export const SEARCH_PART_BYTES = 8 * 1024 * 1024;
/** The unit a reader checks: large enough that a section needs few digests, small enough that a short read stays short. */
export const SEARCH_BLOCK_BYTES = 64 * 1024;
export const SEARCH_BLOCKS_PATH = 'search/blocks.bin';
/** Bytes of each block's sha256 kept in the table (as the record table does for records). */
export const BLOCK_DIGEST_BYTES = 16;

export const searchPartPath = (n: number): string => `search/part-${String(n).padStart(3, '0')}.bin`;

export const NO_CODE = 0xffff;
export const NO_APPLICANT = 0xffffffff;
/** No value in a u8 column. */
export const NO_SMALL = 0xff;
/** A word position in `docSeq` past the 255th distinct word of a name. */
export const SEQ_OVERFLOW = 0xff;

/** Day numbers of `docDecided` and `docReceived`: 1 is 1900-01-01; 0 stands for no date. */
export function dayNumber(iso: string): number {
  return Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10))) / 86_400_000 + 25_568;
}
export function isoOfDay(day: number): string {
  return new Date((day - 25_568) * 86_400_000).toISOString().slice(0, 10);
}
/** Decision years are 1900..9999 (docs/contract.md section 4 nulls earlier dates); 0 stands for no decision date. */
export const MAX_YEAR = 9999;

export const SectionType = z.enum(['u8', 'u16', 'u32', 'json']);
export type SectionType = z.infer<typeof SectionType>;

export const SEARCH_SECTIONS = {
  docKNumber: 'u32',
  docYear: 'u16',
  docCode: 'u16',
  docApplicant: 'u32',
  terms: 'json',
  termDocOffsets: 'u32',
  termDocs: 'u32',
  docTermOffsets: 'u32',
  docTermIds: 'u32',
  termApplicantOffsets: 'u32',
  termApplicants: 'u32',
  termCodeOffsets: 'u32',
  termCodes: 'u16',
  codes: 'json',
  applicants: 'json',
  applicantsByKey: 'u32',
  docDecided: 'u32',
  docReceived: 'u32',
  docPanel: 'u8',
  docDecision: 'u8',
  docType: 'u8',
  docFlags: 'u8',
  docCountry: 'u16',
  docState: 'u16',
  codeClass: 'u8',
  docSeqOffsets: 'u32',
  docSeq: 'u8',
  panels: 'json',
  decisions: 'json',
  decisionNames: 'json',
  types: 'json',
  countries: 'json',
  states: 'json',
  classes: 'json',
  codeTypes: 'json',
  predCodes: 'u32',
  predDocOffsets: 'u32',
  predDocs: 'u32',
  predDocKinds: 'u8',
  docPredOffsets: 'u32',
  docPreds: 'u32',
  docPredKinds: 'u8',
  docEdgeKinds: 'u8',
} as const satisfies Record<string, SectionType>;
export type SearchSectionName = keyof typeof SEARCH_SECTIONS;
export const SEARCH_SECTION_NAMES = Object.keys(SEARCH_SECTIONS) as SearchSectionName[];
/** Sections an index written before predicates were indexed lacks (see above). */
export const PREDICATE_SECTIONS = [
  'predCodes', 'predDocOffsets', 'predDocs', 'predDocKinds', 'docPredOffsets', 'docPreds', 'docPredKinds', 'docEdgeKinds',
] as const satisfies readonly SearchSectionName[];
export const isPredicateSection = (name: SearchSectionName): boolean => (PREDICATE_SECTIONS as readonly string[]).includes(name);
/** A kind of edge as a bit (`predicate` 1, `named` 2), so that the kinds of several sources OR into one byte. */
export const EDGE_KIND_BITS = { predicate: 1, named: 2 } as const;
export const ANY_EDGE_KIND = 3;

export const SearchSection = z.strictObject({
  name: z.enum(SEARCH_SECTION_NAMES as [SearchSectionName, ...SearchSectionName[]]),
  type: SectionType,
  /** Byte offset in the blob, a multiple of 8. */
  offset: z.int().min(0).multipleOf(8),
  /** Length in bytes. */
  bytes: z.int().min(0),
});
export type SearchSection = z.infer<typeof SearchSection>;

export const SearchIndexHeader = z.strictObject({
  format: z.literal(SEARCH_INDEX_FORMAT),
  version: z.literal(SEARCH_INDEX_VERSION),
  counts: z.strictObject({
    docs: z.int().min(0),
    terms: z.int().min(0),
    codes: z.int().min(0),
    applicants: z.int().min(0),
    panels: z.int().min(0),
    decisions: z.int().min(0),
    types: z.int().min(0),
    countries: z.int().min(0),
    states: z.int().min(0),
    classes: z.int().min(0),
    /** Absent from an index written before predicates were indexed. */
    predicates: z.int().min(0).optional(),
  }),
  blobBytes: z.int().min(0),
  partBytes: z.int().min(8).multipleOf(8),
  /** Divides partBytes (checked by the loader). */
  blockBytes: z.int().min(8).multipleOf(8),
  parts: z.array(z.strictObject({ path: z.string(), bytes: z.int().min(0) })),
  sections: z.array(SearchSection),
});
export type SearchIndexHeader = z.infer<typeof SearchIndexHeader>;
