import type { SearchSectionName } from '../contract/search-index.ts';
import type { FacetField } from './facet-fields.ts';
import { parseQuery, type Qualifier, type Term } from './grammar.ts';
import type { SearchRequest } from './engine.ts';
import type { Sort } from './sort.ts';
import { queryWords } from './tokenize.ts';

type Need = readonly SearchSectionName[];

/**
 * Every request: the page's K numbers, the year filter, the applicant and product code filters, and the three
 * default facets (product code, applicant, decision year) with their labels.
 */
const BASE: Need = ['docKNumber', 'docYear', 'docCode', 'docApplicant', 'codes', 'applicants', 'applicantsByKey'];
/** A word: the term dictionary, postings both ways, and the applicants and device types that hold the word. */
const WORDS: Need = [
  'terms', 'termDocOffsets', 'termDocs', 'docTermOffsets', 'docTermIds',
  'termApplicantOffsets', 'termApplicants', 'termCodeOffsets', 'termCodes',
];
const PHRASE: Need = [...WORDS, 'docSeqOffsets', 'docSeq'];

const QUALIFIER: Record<Qualifier['field'], Need> = {
  applicant: ['terms', 'termApplicantOffsets', 'termApplicants'],
  device: WORDS,
  code: [],
  class: ['classes', 'codeClass'],
  panel: ['docPanel', 'panels'],
  type: ['docType', 'types'],
  decision: ['docDecision', 'decisions', 'decisionNames'],
  country: ['docCountry', 'countries'],
  state: ['docState', 'states'],
  thirdparty: ['docFlags'],
  expedited: ['docFlags'],
  summary: ['docFlags'],
  decided: ['docDecided'],
  received: ['docDecided', 'docReceived'],
  reviewdays: ['docDecided', 'docReceived'],
  predicate: ['predCodes', 'predDocOffsets', 'predDocs', 'predDocKinds'],
  kind: ['docEdgeKinds'],
};

const SORT: Record<Sort, Need> = {
  relevance: [],
  'decisionDate:desc': [],
  'decisionDate:asc': ['docDecided'],
  'receivedDate:desc': ['docReceived'],
  'reviewDays:desc': ['docDecided', 'docReceived'],
  'kNumber:asc': [],
};

const FACET: Record<FacetField, Need> = {
  productCode: ['codeTypes'],
  applicant: [],
  decisionYear: [],
  receivedYear: ['docReceived'],
  decisionDate: ['docDecided'],
  receivedDate: ['docReceived'],
  advisoryCommittee: ['docPanel', 'panels'],
  deviceClass: ['classes', 'codeClass'],
  decisionCode: ['docDecision', 'decisions', 'decisionNames'],
  submissionType: ['docType', 'types'],
  thirdParty: ['docFlags'],
  expeditedReview: ['docFlags'],
  statementOrSummary: ['docFlags'],
  countryCode: ['docCountry', 'countries'],
  state: ['docState', 'states'],
  predicate: ['predCodes', 'docPredOffsets', 'docPreds', 'docPredKinds'],
};

const STATS: Need = ['docDecided', 'docReceived'];

function termNeeds(term: Term): Need {
  if (term.kind === 'words') return WORDS;
  if (term.kind === 'phrase') return PHRASE;
  const q = term.qualifier;
  return q.field === 'device' && q.phrase ? PHRASE : QUALIFIER[q.field];
}

/**
 * The index sections a search reads (src/contract/search-index.ts names them), to load before the engine runs: the
 * engine is synchronous and throws SectionNotLoaded on a section not loaded, so this list must cover every path a
 * request can take. test/search/lazy.test.ts runs every kind of query over an index holding only these sections.
 * A query that does not parse needs only BASE: the engine refuses it before reading anything.
 */
export function sectionsFor(req: Omit<SearchRequest, 'page' | 'pageSize'>): Set<SearchSectionName> {
  const out = new Set<SearchSectionName>(BASE);
  const add = (need: Need) => {
    for (const n of need) out.add(n);
  };
  let parsed = req.parsed ?? null;
  if (parsed === null) {
    try {
      parsed = parseQuery(req.query);
    } catch {
      return out;
    }
  }
  if (parsed.plain) {
    if (queryWords(req.query).length > 0) add(WORDS);
  } else {
    for (const clause of parsed.clauses) for (const term of clause) add(termNeeds(term));
  }
  add(SORT[req.sort ?? 'relevance']);
  for (const f of req.facets ?? []) add(FACET[f.field]);
  if (req.stats) add(STATS);
  return out;
}
