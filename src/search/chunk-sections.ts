import type { ChunkFile, SearchChunks } from '../contract/search-chunks.ts';
import type { SearchSectionName } from '../contract/search-index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { chunksOfPrefix } from './chunk-directory.ts';

/**
 * Which files of the chunked index (src/search/chunked.ts) hold the sections of the whole index that a request reads
 * by name (openFDA's endpoints, src/openfda/fields.ts): the view over the loaded files (chunk-view.ts) gives every
 * section listed here its whole index's values once these files are in.
 */

/**
 * The words a request looks up in the word list, and what it reads of each document's words.
 * - `prefixes`: each word (or wildcard stem) is looked up as a prefix: the term chunks whose words it reaches are read;
 *   the term sections are exact for those words only.
 * - `termIds`: the term chunks that hold these term ids (the words of a count's answer, by their ids).
 * - `forward`: each document's whole word list (`docTermOffsets`, `docTermIds`) and, where the sections name them, its
 *   word positions (`docSeqOffsets`, `docSeq`: phrases, whole names), each from its own file: a count of words reads
 *   the lists alone. Without it, a document's words are those of the loaded chunks (made by the view on first use),
 *   which is exact for the words of the loaded chunks: what a single word or a wildcard tests.
 * - `positions`: false where no clause reads the positions that the sections name (a count of words beside single
 *   words): the lists alone are read. Default: as `forward`.
 */
export type SectionWords = { prefixes: readonly string[]; forward?: boolean; positions?: boolean; termIds?: readonly number[] };

/** Sections held by one whole file; the small dictionaries all come in `dicts`. */
const FILE_OF: Partial<Record<SearchSectionName, readonly ChunkFile[]>> = {
  docKNumber: ['docKNumber'],
  docDecided: ['decided'],
  docYear: ['decided'],
  docCode: ['docCode', 'dicts'],
  // The view reads the applicant column with its names, never one without the other.
  docApplicant: ['docApplicant', 'applicants'],
  applicants: ['docApplicant', 'applicants'],
  applicantsByKey: ['docApplicant', 'applicants'],
  docReceived: ['docReceived'],
  docPanel: ['docPanel'],
  docDecision: ['docDecision'],
  docType: ['docType'],
  docFlags: ['docFlags'],
  docCountry: ['docCountry'],
  docState: ['docState'],
  codeTypes: ['codeTypes'],
  codes: ['dicts'],
  codeClass: ['dicts'],
  panels: ['dicts'],
  decisions: ['dicts'],
  decisionNames: ['dicts'],
  types: ['dicts'],
  countries: ['dicts'],
  states: ['dicts'],
  classes: ['dicts'],
};
/** Sections of the word list: the term chunks of the words. */
const TERM_SECTIONS = new Set<SearchSectionName>(['terms', 'termDocOffsets', 'termDocs', 'termApplicantOffsets', 'termApplicants', 'termCodeOffsets', 'termCodes']);
/** Each document's words and their positions, by file: whole with `forward`, else made from the loaded term chunks. */
const FORWARD_SECTIONS: Partial<Record<SearchSectionName, 'docTerms' | 'docSeq'>> = {
  docTermOffsets: 'docTerms',
  docTermIds: 'docTerms',
  docSeqOffsets: 'docSeq',
  docSeq: 'docSeq',
};

/** The files a request reads for `sections` and `words`. Throws for a section the chunked index cannot give. */
export function sectionFiles(dir: SearchChunks, sections: Iterable<SearchSectionName>, words: SectionWords): string[] {
  const out = new Set<string>([dir.files.dicts.path]);
  let terms = false;
  for (const s of sections) {
    if (TERM_SECTIONS.has(s)) terms = true;
    else if (FORWARD_SECTIONS[s]) {
      // Positions are read with the lists they index (chunk-view.ts reads them only beside the lists).
      const positions = FORWARD_SECTIONS[s] === 'docSeq' && (words.positions ?? true);
      if (words.forward) for (const f of positions ? (['docTerms', 'docSeq'] as const) : (['docTerms'] as const)) out.add(dir.files[f].path);
    } else {
      const files = FILE_OF[s];
      if (!files) throw new Error(`the chunked index has no file for section ${s} read by name`);
      for (const f of files) out.add(dir.files[f].path);
    }
  }
  if (terms || words.forward) for (const w of words.prefixes) for (const c of chunksOfPrefix(dir, w)) out.add(dir.termChunks[c]!.file.path);
  const chunks = dir.termChunks;
  for (const id of words.termIds ?? []) {
    const c = partitionPoint(0, chunks.length, (i) => chunks[i]!.from + chunks[i]!.count <= id);
    if (c < chunks.length) out.add(chunks[c]!.file.path);
  }
  return [...out];
}
