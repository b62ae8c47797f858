import type { Condition, Pace } from './conditions.ts';
import { sliceSteps } from './budget.ts';
import type { Steps } from './slices.ts';
import type { SearchIndex } from './model.ts';
import { checkWord, release, Tier, tierOf, type PreparedWord, type TierLoans } from './words.ts';

/*
 * Scoring the candidates that passed the filters: the conditions that add points (phrases, OR groups, exclusions read
 * one record at a time), then the query's words. Each drops the candidates it fails and adds its points to the rest.
 */

/** Relevance points of one word's tier when the query has `n` distinct words (see docs/search.md). */
export function pointsFor(tier: Tier, n: number): number {
  switch (tier) {
    case Tier.primaryWhole:
      return n + 2;
    case Tier.primaryPrefix:
      return n + 1;
    case Tier.secondaryWhole:
      return 1;
    default:
      return 0;
  }
}

/** `pointsFor` of every tier, indexed by tier: one read per document in the loops over many. */
function pointsByTier(n: number): Uint32Array {
  const out = new Uint32Array(5);
  for (let t = Tier.none; t <= Tier.primaryWhole; t++) out[t] = pointsFor(t as Tier, n);
  return out;
}

/**
 * What one check of a word against a candidate costs, relative to visiting one posting. A check reads the candidate's
 * code, terms (two arrays) and applicant, each a cache miss at a million documents; a posting is one write. Measured
 * on the bench's queries at a million documents: 8 to 16 all ran two-word queries about 1.6 times as fast as 4.
 */
const CHECK_COST = 12;

/**
 * The conditions that score, tested on each candidate docs[i] (i < kept) in place: keeps those that pass all of them,
 * in order, at the front, their points summed into `scores` (when kept); returns how many. Yields once a slice's
 * steps are spent, or a slice's worth of candidates is tested.
 */
export function* scoreByConditions(docs: Uint32Array, kept: number, scoring: readonly Condition[], scores: Uint32Array | null, pace: Pace): Steps<number> {
  for (const c of scoring) yield* pace.warm(c);
  let out = 0;
  // A candidate tested counts as a step towards the slice even when its conditions charge none (an OR group's
  // tiers are one read), though it is not charged to the budget.
  const slice = sliceSteps();
  let tested = 0;
  outer: for (let i = 0; i < kept; i++) {
    if (++tested >= slice || pace.spent()) {
      yield;
      pace.restart();
      tested = 0;
    }
    const d = docs[i]!;
    let points = 0;
    for (const c of scoring) {
      const p = c.points(d);
      if (p < 0) continue outer;
      points += p;
    }
    if (scores) scores[out] = points;
    docs[out++] = d;
  }
  return out;
}

/** The word that gave the candidates, and its tiers when scored: every candidate matches it. */
export type SourceWord = { word: PreparedWord | null; tiers: Uint8Array | null };

/**
 * Each query word over the candidates, cheapest first: keeps the candidates it matches and, when `scores` is given,
 * adds the points of its tier (n scoring units, see `pointsFor`). A word whose postings within [lo, hi) are fewer than
 * the checks it would take is scanned and its tiers read; the others check each candidate.
 */
export function scoreByWords(
  index: SearchIndex,
  candidates: Uint32Array,
  scores: Uint32Array | null,
  words: readonly PreparedWord[],
  costOf: (w: PreparedWord) => number,
  source: SourceWord,
  n: number,
  loans: TierLoans,
  lo: number,
  hi: number,
): Uint32Array {
  let docs = candidates;
  let kept: number;
  for (const w of words) {
    if (docs.length === 0) break;
    kept = 0;
    if (!scores) {
      // Only which documents match: the source word's documents all do, the others are checked.
      if (w === source.word) continue;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        docs[kept] = d;
        kept += tierOf(index, w, d) === Tier.none ? 0 : 1;
      }
      release(w, index);
      docs = docs.subarray(0, kept);
      continue;
    }
    const s = scores;
    if (w === source.word) {
      const points = pointsByTier(n);
      const tiers = source.tiers!;
      for (let i = 0; i < docs.length; i++) s[i]! += points[tiers[docs[i]!]!]!;
      continue;
    }
    if (costOf(w) < docs.length * CHECK_COST) {
      const { tiers } = loans.scan(w, lo, hi);
      for (let i = 0; i < docs.length; i++) {
        const t = tiers[docs[i]!]! as Tier;
        if (t === Tier.none) continue;
        docs[kept] = docs[i]!;
        s[kept++] = s[i]! + pointsFor(t, n);
      }
    } else {
      kept = checkWord(index, w, docs, s, pointsByTier(n));
      release(w, index);
    }
    docs = docs.subarray(0, kept);
  }
  return docs;
}
