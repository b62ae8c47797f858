/**
 * Words as search sees them, the same at build time and at query time: compatibility-decomposed (NFKD, so "ﬁ" is
 * "fi" and "²" is "2"), combining marks removed (so "é" is "e"), lower case, split on anything that is not a letter or
 * a digit. A K number is one word ("K123456" → "k123456"); "X-Ray" is two ("x", "ray").
 * Symbols split words before decomposition too, so "Stent™" is "stent", not "stenttm".
 */
const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;
const SYMBOLS = /[^\p{L}\p{N}\p{M}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;

export function foldText(text: string): string {
  if (ASCII.test(text)) return text.toLowerCase();
  // Lower-casing can itself produce decomposable or marked characters ("İ" → "i̇"), hence the second pass.
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase().normalize('NFKD').replace(MARKS, '');
}

/** Every word of `text`, in order, repeats kept. */
export function tokenize(text: string): string[] {
  const words = (ASCII.test(text) ? text.toLowerCase() : foldText(text.replace(SYMBOLS, ' '))).split(SEPARATORS);
  const out: string[] = [];
  for (const w of words) if (w !== '') out.push(w);
  return out;
}

/** The distinct words of a query, in order of first appearance; none for an empty or blank query. */
export function queryWords(query: string): string[] {
  return [...new Set(tokenize(query))];
}

/**
 * What the applicant filter compares: equal ignoring case and runs of spaces. Accents stay significant: the filter
 * names one company, it is not a text search.
 */
export function applicantKey(applicant: string): string {
  return applicant.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** A K number query word ("k", "k12", "k123456") as the range of six-digit numbers it is a prefix of. */
export function kNumberRange(word: string): { from: number; to: number; whole: boolean } | null {
  const m = /^k([0-9]{0,6})$/.exec(word);
  if (!m) return null;
  const digits = m[1] ?? '';
  const scale = 10 ** (6 - digits.length);
  const base = digits === '' ? 0 : Number(digits);
  return { from: base * scale, to: (base + 1) * scale - 1, whole: digits.length === 6 };
}
