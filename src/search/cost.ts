import { partitionPoint } from '../utils/bisect.ts';
import { QueryError, type ParsedQuery, type Term } from './grammar.ts';
import type { SearchIndex } from './model.ts';

/**
 * What one search query may ask of the server, in one place: the search operation, exports and any later endpoint
 * that evaluates a parsed query check these before evaluating it (`checkQueryShape` needs no index, so input
 * validation runs it; `checkQueryCost` adds what only the index can tell). A query over a limit is refused with a
 * message naming the limit and the query's value; none of them is reached by a query a person writes.
 *
 * Why these: the work of a query grows with the terms tested against each candidate (an OR group tests every
 * branch's words per candidate, an exclusion tests its words per candidate) and with the index entries its words'
 * prefixes reach (a one-letter prefix reaches most records). The shape limits bound the first, the expansion limits
 * the second; `WORK_BUDGET` (src/search/budget.ts) stops whatever still costs more while it runs.
 */
export const QUERY_LIMITS = {
  /** Characters (code points) of `query`. */
  chars: 2048,
  /** Terms of the whole query: words and quoted phrases side by side, qualifiers, each OR branch, each exclusion. */
  terms: 64,
  /** Words of the whole query, inside terms, phrases and qualifier values (`x-ray` is two). */
  words: 64,
  /** Terms joined by OR, over every OR group of the query. */
  orBranches: 32,
  /** Terms with a leading `-`. */
  exclusions: 32,
  /** Quoted phrases, `device:"…"` included. */
  phrases: 16,
  /** Words of one phrase. */
  phraseWords: 16,
  /** Index words the query's words start, summed over its words (`a` alone starts a few thousand). */
  prefixWords: 20_000,
  /** Index entries (postings) those index words hold, summed over the query's words, per record of the index. */
  postingsPerRecord: 8,
} as const;

export type QueryLimit = keyof typeof QUERY_LIMITS;

/** A query over one of `QUERY_LIMITS`: `message` reads after the field's name (`input.query has …`). */
export class QueryCostError extends QueryError {
  override name = 'QueryCostError';
  constructor(
    readonly limit: QueryLimit | 'work',
    readonly value: number,
    readonly max: number,
    message: string,
  ) {
    super(message);
  }
}

const n = (x: number): string => x.toLocaleString('en-US');

function over(limit: QueryLimit, value: number, what: string): never {
  const max = QUERY_LIMITS[limit];
  throw new QueryCostError(limit, value, max, `has ${n(value)} ${what}; at most ${n(max)} are allowed`);
}

/** Every word of a term, as the engine reads it (phrase words, qualifier words included). */
function wordsOf(term: Term): readonly string[] {
  if (term.kind !== 'field') return term.words;
  const q = term.qualifier;
  if (q.field === 'device' || (q.field === 'applicant' && 'words' in q)) return q.words;
  return [];
}

const isPhrase = (t: Term): boolean => t.kind === 'phrase' || (t.kind === 'field' && t.qualifier.field === 'device' && t.qualifier.phrase);

/** The counts the shape limits bound (for error messages, tests and the bench). */
export function queryShape(parsed: ParsedQuery): { terms: number; words: number; orBranches: number; exclusions: number; phrases: number; phraseWords: number } {
  let terms = 0;
  let words = 0;
  let orBranches = 0;
  let exclusions = 0;
  let phrases = 0;
  let phraseWords = 0;
  for (const clause of parsed.clauses) {
    if (clause.length > 1) orBranches += clause.length;
    for (const t of clause) {
      terms++;
      const ws = wordsOf(t);
      words += ws.length;
      if (t.negate) exclusions++;
      if (isPhrase(t)) {
        phrases++;
        phraseWords = Math.max(phraseWords, ws.length);
      }
    }
  }
  return { terms, words, orBranches, exclusions, phrases, phraseWords };
}

/** Throws QueryCostError when the parsed query is over a shape limit. Needs no index. */
export function checkQueryShape(parsed: ParsedQuery): void {
  const s = queryShape(parsed);
  if (s.orBranches > QUERY_LIMITS.orBranches) over('orBranches', s.orBranches, 'OR branches');
  if (s.exclusions > QUERY_LIMITS.exclusions) over('exclusions', s.exclusions, 'exclusions');
  if (s.phrases > QUERY_LIMITS.phrases) over('phrases', s.phrases, 'phrases');
  if (s.phraseWords > QUERY_LIMITS.phraseWords) {
    throw new QueryCostError('phraseWords', s.phraseWords, QUERY_LIMITS.phraseWords, `has a phrase of ${n(s.phraseWords)} words; at most ${QUERY_LIMITS.phraseWords} are allowed`);
  }
  if (s.terms > QUERY_LIMITS.terms) over('terms', s.terms, 'terms');
  if (s.words > QUERY_LIMITS.words) over('words', s.words, 'words');
}

/**
 * How many index words start with `word`, and how many postings they hold (binary searches only). `postings` is
 * false for an applicant: value, whose words reach applicant names (a short list per index word), not postings.
 */
export function prefixReach(index: SearchIndex, word: string, postings = true): { words: number; postings: number } {
  const { terms } = index;
  const lo = partitionPoint(0, terms.length, (i) => terms[i]! < word);
  const hi = lo + partitionPoint(0, terms.length - lo, (i) => terms[lo + i]!.startsWith(word));
  return { words: hi - lo, postings: postings ? index.termDocOffsets[hi]! - index.termDocOffsets[lo]! : 0 };
}

/** A phrase's word is whole: one index word (or none), and its postings. */
function wholeReach(index: SearchIndex, word: string): { words: number; postings: number } {
  const { terms } = index;
  const t = partitionPoint(0, terms.length, (i) => terms[i]! < word);
  if (terms[t] !== word) return { words: 0, postings: 0 };
  return { words: 1, postings: index.termDocOffsets[t + 1]! - index.termDocOffsets[t]! };
}

/** The counts the expansion limits bound, over every word of the query. */
export function queryReach(index: SearchIndex, parsed: ParsedQuery): { prefixWords: number; postings: number } {
  let prefixWords = 0;
  let postings = 0;
  for (const clause of parsed.clauses) {
    for (const t of clause) {
      const phrase = isPhrase(t);
      const applicant = t.kind === 'field' && t.qualifier.field === 'applicant';
      for (const w of wordsOf(t)) {
        const r = phrase ? wholeReach(index, w) : prefixReach(index, w, !applicant);
        prefixWords += r.words;
        postings += r.postings;
      }
    }
  }
  return { prefixWords, postings };
}

/**
 * Throws QueryCostError when the parsed query is over a limit: its shape, then how far its words' prefixes reach in
 * this index. Costs a binary search per word; run it before evaluating.
 */
export function checkQueryCost(parsed: ParsedQuery, index: SearchIndex): void {
  checkQueryShape(parsed);
  const r = queryReach(index, parsed);
  if (r.prefixWords > QUERY_LIMITS.prefixWords) {
    throw new QueryCostError(
      'prefixWords',
      r.prefixWords,
      QUERY_LIMITS.prefixWords,
      `has words whose prefixes reach ${n(r.prefixWords)} words of the index; at most ${n(QUERY_LIMITS.prefixWords)} are allowed (use longer words)`,
    );
  }
  const max = QUERY_LIMITS.postingsPerRecord * Math.max(1, index.docCount);
  if (r.postings > max) {
    throw new QueryCostError(
      'postingsPerRecord',
      r.postings,
      max,
      `has words whose prefixes reach ${n(r.postings)} index entries; at most ${n(max)} (${QUERY_LIMITS.postingsPerRecord} per record) are allowed (use longer words)`,
    );
  }
}
