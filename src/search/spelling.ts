import { partitionPoint } from '../utils/bisect.ts';
import { QueryCostError } from './cost.ts';
import { runSearch, type SearchRequest } from './engine.ts';
import { parseQuery, QueryError, type ParsedQuery } from './grammar.ts';
import type { SearchIndex } from './model.ts';
import { queryWords } from './tokenize.ts';

/**
 * "Did you mean": for the words of a query that the index hardly knows, the index's own words a typing slip or two
 * away, and the queries with them in place, each to be counted by the engine (the caller runs them: exact totals).
 *
 * The bounds, so that a correction costs a small, known amount of work at any size (docs/limits.md):
 * - only plain words (not a qualifier's value, a phrase or an exclusion), of ASCII letters, SPELLING.minLength or more
 *   letters long, and at most SPELLING.maxWords of them per query;
 * - a word is checked when the index's words starting with it are on fewer than SPELLING.rare clearances;
 * - a correction starts with the same letter and is at most 1 edit away (words of up to 4 letters) or 2 (longer
 *   words), an edit being one letter added, removed, changed, or two neighbours swapped;
 * - at most SPELLING.maxScanned dictionary words are compared per word (those of its first letter, nearest its place
 *   in the sorted list first), each comparison stopping once the distance passes the bound;
 * - of two corrections one of which begins the other, the one with more edits is dropped; per word, the
 *   SPELLING.perWord corrections on the most device names are kept; at most SPELLING.maxQueries
 *   corrected queries are counted, and SPELLING.shown are answered.
 */
export const SPELLING = {
  minLength: 4,
  maxWords: 4,
  rare: 3,
  maxScanned: 50_000,
  perWord: 6,
  maxQueries: 8,
  shown: 4,
} as const;

/**
 * A sorted run of dictionary words and, for each, on how many device names it is (its postings) and whether it is a
 * word of an applicant's name or of a product code's device type (so on the clearances of those).
 */
export type WordList = { words: readonly string[]; docs: (i: number) => number; reaches: (i: number) => boolean };

/** One corrected query: the query with each word in `corrections` replaced. */
export type Correction = { query: string; corrections: { word: string; correction: string }[] };

/** One answered correction: the query and how many clearances it matches (more than the query asked). */
export type SpellingSuggestion = Correction & { total: number };

const CHECKED = /^[a-z]+$/;

/** The plain words of a query that spelling may correct, in order, at most SPELLING.maxWords. */
export function spellingWords(parsed: ParsedQuery, plainWords: readonly string[]): string[] {
  const out = new Set<string>();
  if (parsed.plain) for (const w of plainWords) out.add(w);
  else for (const clause of parsed.clauses) for (const t of clause) if (t.kind === 'words' && !t.negate) for (const w of t.words) out.add(w);
  return [...out].filter((w) => w.length >= SPELLING.minLength && CHECKED.test(w)).slice(0, SPELLING.maxWords);
}

/** The range [lo, hi) of a sorted word list whose words start with `prefix`. */
export function prefixRange(words: readonly string[], prefix: string): { lo: number; hi: number } {
  const lo = partitionPoint(0, words.length, (i) => words[i]! < prefix);
  const hi = lo + partitionPoint(0, words.length - lo, (i) => words[lo + i]!.startsWith(prefix));
  return { lo, hi };
}

/**
 * Whether a word needs correcting: the list's words starting with it are on fewer than SPELLING.rare device names
 * and none is a word of an applicant or a device type.
 */
export function isRare(list: WordList, word: string): boolean {
  const { lo, hi } = prefixRange(list.words, word);
  let docs = 0;
  for (let i = lo; i < hi && docs < SPELLING.rare; i++) {
    if (list.reaches(i)) return false;
    docs += list.docs(i);
  }
  return docs < SPELLING.rare;
}

/** The most edits a correction of `word` may be away. */
export const maxEdits = (word: string): number => (word.length <= 4 ? 1 : 2);

/**
 * Edits from `a` to `b` (adjacent swaps count one: optimal string alignment), or `bound + 1` as soon as it is sure to
 * exceed `bound`.
 */
export function editDistance(a: string, b: string, bound: number): number {
  if (Math.abs(a.length - b.length) > bound) return bound + 1;
  let before = new Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  let row = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    row[0] = i;
    let least = i;
    for (let j = 1; j <= b.length; j++) {
      const same = a.charCodeAt(i - 1) === b.charCodeAt(j - 1);
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (same ? 0 : 1));
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) d = Math.min(d, before[j - 2]! + 1);
      row[j] = d;
      if (d < least) least = d;
    }
    if (least > bound) return bound + 1;
    [before, prev, row] = [prev, row, before];
  }
  return Math.min(prev[b.length]!, bound + 1);
}

/**
 * The corrections of `word` in `list` (its words sharing the word's first letter, on a device name or reaching an
 * applicant or a device type): at most SPELLING.perWord, on the most device names first, then the fewest edits, then
 * in word order. The word itself is never its own correction. Which of them are answered, and in which order, is
 * the engine's count of each corrected query (chooseSuggestions).
 */
export function correctionsOf(list: WordList, word: string): string[] {
  const bound = maxEdits(word);
  const { lo, hi } = prefixRange(list.words, word[0]!);
  // Nearest the word's own place first, so that the bound keeps the likeliest words when it cuts.
  const at = Math.min(Math.max(partitionPoint(lo, hi, (i) => list.words[i]! < word), lo), hi);
  const found: { word: string; edits: number; docs: number; i: number }[] = [];
  let scanned = 0;
  for (let step = 0; scanned < SPELLING.maxScanned && (at + step < hi || at - step - 1 >= lo); step++) {
    for (const i of [at + step, at - step - 1]) {
      if (i < lo || i >= hi || scanned >= SPELLING.maxScanned) continue;
      scanned++;
      const w = list.words[i]!;
      if (w === word || Math.abs(w.length - word.length) > bound) continue;
      const edits = editDistance(word, w, bound);
      if (edits <= bound && (list.docs(i) > 0 || list.reaches(i))) found.push({ word: w, edits, docs: list.docs(i), i });
    }
  }
  // Of corrections one of which begins the other, those with more edits are dropped: words match as prefixes, so the
  // shorter one's count includes the longer one's, and "cathter" means "catheter", not "cathet" (a cut name in FDA's
  // data, with more matches) nor "catheters".
  const related = (a: string, b: string) => a !== b && (a.startsWith(b) || b.startsWith(a));
  const kept = found.filter((f) => !found.some((g) => related(f.word, g.word) && g.edits < f.edits));
  kept.sort((a, b) => b.docs - a.docs || a.edits - b.edits || a.i - b.i);
  return kept.slice(0, SPELLING.perWord).map((f) => f.word);
}

/** `query` with every standalone occurrence of `word` (in any case) replaced by `by`. */
function replaceWord(query: string, word: string, by: string): string {
  return query.replace(new RegExp(`(?<![\\p{L}\\p{N}])${word}(?![\\p{L}\\p{N}])`, 'giu'), by);
}

/**
 * The corrected queries to count, at most SPELLING.maxQueries: each word's corrections in turn (best first, one word
 * replaced at a time), and with two words or more to correct, every word's best correction together first.
 */
export function correctedQueries(query: string, fixes: ReadonlyMap<string, readonly string[]>): Correction[] {
  const out: Correction[] = [];
  const seen = new Set<string>();
  const add = (pairs: { word: string; correction: string }[]) => {
    const q = pairs.reduce((text, p) => replaceWord(text, p.word, p.correction), query);
    if (q === query || seen.has(q)) return;
    seen.add(q);
    out.push({ query: q, corrections: pairs });
  };
  const withFixes = [...fixes].filter(([, c]) => c.length > 0);
  if (withFixes.length > 1) add(withFixes.map(([word, c]) => ({ word, correction: c[0]! })));
  const depth = Math.max(0, ...withFixes.map(([, c]) => c.length));
  for (let k = 0; k < depth; k++) for (const [word, c] of withFixes) if (c[k] !== undefined) add([{ word, correction: c[k]! }]);
  return out.slice(0, SPELLING.maxQueries);
}

/** The corrections answered: those that match more than the query did, most first, at most SPELLING.shown. */
export function chooseSuggestions(counted: SpellingSuggestion[], total: number): SpellingSuggestion[] {
  return counted
    .filter((s) => s.total > total)
    .sort((a, b) => b.total - a.total || (a.query < b.query ? -1 : a.query > b.query ? 1 : 0))
    .slice(0, SPELLING.shown);
}

/** The corrected queries of a request whose words are looked up in `listFor(word)` (the list of its first letter). */
export function planCorrections(query: string, parsed: ParsedQuery, listFor: (word: string) => WordList): Correction[] {
  const fixes = new Map<string, string[]>();
  for (const w of spellingWords(parsed, queryWords(query))) {
    const list = listFor(w);
    if (isRare(list, w)) fixes.set(w, correctionsOf(list, w));
  }
  return correctedQueries(query, fixes);
}

/** The whole index's word list: its terms and their postings. */
export const indexWords = (index: SearchIndex): WordList => ({
  words: index.terms,
  docs: (i) => index.termDocOffsets[i + 1]! - index.termDocOffsets[i]!,
  reaches: (i) => index.termCodeOffsets[i + 1]! > index.termCodeOffsets[i]! || index.termApplicantOffsets[i + 1]! > index.termApplicantOffsets[i]!,
});

/** The request a corrected query is counted with: the same filters, the first page of one, no extension's work. */
export function countRequest(req: Omit<SearchRequest, 'page' | 'pageSize'>, query: string): SearchRequest {
  return { query, applicant: req.applicant, productCode: req.productCode, yearFrom: req.yearFrom, yearTo: req.yearTo, page: 1, pageSize: 1, parsed: parseQuery(query) };
}

/**
 * "Did you mean" over the whole index: each corrected query counted by the engine; those matching more than `total`
 * (the request's own), most first. A corrected query the engine refuses (over its work budget) is left out.
 */
export function spellingOverIndex(index: SearchIndex, req: Omit<SearchRequest, 'page' | 'pageSize'>, total: number): SpellingSuggestion[] {
  const parsed = req.parsed ?? parseQuery(req.query);
  const list = indexWords(index);
  const counted: SpellingSuggestion[] = [];
  for (const c of planCorrections(req.query, parsed, () => list)) {
    try {
      counted.push({ ...c, total: runSearch(index, countRequest(req, c.query)).total });
    } catch (err) {
      if (!(err instanceof QueryCostError || err instanceof QueryError)) throw err;
    }
  }
  return chooseSuggestions(counted, total);
}
