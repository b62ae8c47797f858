import { ColumnMemo } from './column-memo.ts';
import { MAX_YEAR, NO_CODE } from '../contract/search-index.ts';
import { noApplicantIn, type ApplicantColumn } from './codec.ts';
import type { Facet } from '../contract/envelope.ts';
import type { SearchIndex } from './model.ts';
import { lowerBound } from '../utils/bisect.ts';
import type { ListOrRange } from './docset.ts';

export const FACET_SIZE = 10;

/**
 * The three facets over every match (not just the page): productCode, applicant, decisionYear, each its ten most
 * frequent values, count descending then value ascending, documents without the value not counted. Code and applicant
 * ids are assigned in value order, so "value ascending" is "id ascending" for all three.
 */
export function countFacets(index: SearchIndex, docs: ListOrRange): Facet[] {
  const { docCode, docApplicant } = index;
  const counts = lendCounts(index);
  try {
    const { codes, applicants, years } = counts;
    let seen: Seen | null = null;
    if (docs instanceof Uint32Array && docs.length * 2 > index.docCount) {
      // Most documents match: the counts of every document, less those of the documents between the matches.
      const all = countsOfEverything(index);
      codes.set(all.codes);
      applicants.set(all.applicants);
      takeGaps(docCode, docApplicant, docs, 0, docs.length, 0, index.docCount, codes, applicants);
    } else if (docs instanceof Uint32Array && docs.length * 2 <= BLOCK) {
      // Too few matches for a block to be counted whole: counted one by one, noting the ids that get a count, so the
      // top ten are picked among those rather than by a pass over every code and applicant.
      seen = countSeen(docCode, docApplicant, docs, codes, applicants);
    } else countByBlocks(index, docs, codes, applicants);
    yearCounts(index, docs, years);
    return facetsOf(index, codes, applicants, years, seen);
  } finally {
    giveBack(index, counts);
  }
}

/** The code and applicant ids that got a count, each once (the first `codeCount` and `applicantCount` of each). */
type Seen = { codes: Uint32Array; codeCount: number; applicants: Uint32Array; applicantCount: number };

/** Counts the codes and applicants of the listed documents, noting each id the first time it is counted. */
function countSeen(docCode: Uint16Array, docApplicant: ApplicantColumn, docs: Uint32Array, codes: Uint32Array, applicants: Uint32Array): Seen {
  const seenCodes = new Uint32Array(Math.min(docs.length, codes.length));
  const seenApplicants = new Uint32Array(Math.min(docs.length, applicants.length));
  let nc = 0;
  let na = 0;
  const noApplicant = noApplicantIn(docApplicant);
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    const c = docCode[d]!;
    if (c !== NO_CODE && codes[c]!++ === 0) seenCodes[nc++] = c;
    const a = docApplicant[d]!;
    if (a !== noApplicant && applicants[a]!++ === 0) seenApplicants[na++] = a;
  }
  return { codes: seenCodes, codeCount: nc, applicants: seenApplicants, applicantCount: na };
}

type Counts = { codes: Uint32Array; applicants: Uint32Array; years: Uint32Array };
const spareCounts = new WeakMap<SearchIndex, Counts>();

/**
 * Zeroed count arrays for the three facets (about 100 kB at a million documents), kept per index and lent to one
 * count at a time, given back zeroed: made for each query they were garbage that set off the collector.
 */
function lendCounts(index: SearchIndex): Counts {
  const spare = spareCounts.get(index);
  if (spare) {
    spareCounts.delete(index);
    return spare;
  }
  return { codes: new Uint32Array(index.codes.length), applicants: new Uint32Array(index.applicants.length), years: new Uint32Array(MAX_YEAR + 1) };
}

function giveBack(index: SearchIndex, counts: Counts): void {
  counts.codes.fill(0);
  counts.applicants.fill(0);
  counts.years.fill(0);
  spareCounts.set(index, counts);
}

/**
 * The three facets of every document whose byte in `failed` is 0 (its length a multiple of 4, bytes past the
 * documents 0), and how many failed. Counted a block of 32,768 ids at a time, from whichever side is shorter: when
 * most documents pass, every document's counts less the failures' (a block that fails whole takes off its counts made
 * once per index, `blockCounts`); when most fail, the passing documents' counts added up from nothing (a block that
 * fails whole costs nothing; one that mostly passes adds its counts and takes off its failures). `runs` are id ranges
 * the caller knows to have failed whole (a date range's failures are mostly one run, since ids run in decision date
 * order): their blocks are not read. `failing` is about how many fail, to pick the side.
 */
export function facetsWithout(index: SearchIndex, failed: Uint8Array, runs: readonly (readonly [number, number])[] = [], failing = 0): { left: number; facets: Facet[] } {
  const { docCount } = index;
  const down = failing * 2 <= docCount;
  const counts = lendCounts(index);
  try {
    return countWithout(index, failed, runs, down, counts);
  } finally {
    giveBack(index, counts);
  }
}

function countWithout(index: SearchIndex, failed: Uint8Array, runs: readonly (readonly [number, number])[], down: boolean, counts: Counts): { left: number; facets: Facet[] } {
  const { docCount } = index;
  const { codes, applicants, years } = counts;
  if (down) {
    const all = countsOfEverything(index);
    codes.set(all.codes);
    applicants.set(all.applicants);
    yearCounts(index, { lo: 0, hi: docCount }, years);
  }
  const sign = down ? -1 : 1;
  const cols = { code: index.docCode, applicant: index.docApplicant, year: index.docYear };
  const quads = new Uint32Array(failed.buffer, failed.byteOffset, failed.length >>> 2);
  let blocks: BlockCounts | null = null;
  let left = 0;
  for (let lo = 0; lo < docCount; lo += BLOCK) {
    const hi = Math.min(lo + BLOCK, docCount);
    const full = hi - lo === BLOCK;
    if (runs.some(([a, b]) => a <= lo && hi <= b)) {
      left += hi - lo;
      if (down) {
        if (full) {
          blocks ??= blockCounts(index);
          addBlock(blocks, lo / BLOCK, codes, applicants, -1);
          addYears(index, lo, hi, years, -1);
        } else countDocs(cols, failed, lo, hi, 1, codes, applicants, years, -1);
      }
      continue;
    }
    let count = 0;
    for (let q = lo >>> 2, end = (hi + 3) >>> 2; q < end; q++) count += Math.imul(quads[q]!, 0x01010101) >>> 24;
    left += count;
    // The documents this side takes off (down) or adds (up): the failures, or the passes.
    const changed = down ? count : hi - lo - count;
    if (full && changed * 2 > BLOCK) {
      // Most of the block changes: its counts at once, then the other documents back the other way.
      blocks ??= blockCounts(index);
      addBlock(blocks, lo / BLOCK, codes, applicants, sign);
      addYears(index, lo, hi, years, sign);
      countDocs(cols, failed, lo, hi, down ? 0 : 1, codes, applicants, years, -sign);
    } else if (changed > 0) countDocs(cols, failed, lo, hi, down ? 1 : 0, codes, applicants, years, sign);
  }
  years[0] = 0;
  return { left, facets: facetsOf(index, codes, applicants, years) };
}

/** Adds (sign 1) or takes off (-1) the counts of each document in [lo, hi) whose byte in `failed` is `which`. */
function countDocs(
  cols: { code: Uint16Array; applicant: ApplicantColumn; year: Uint16Array },
  failed: Uint8Array,
  lo: number,
  hi: number,
  which: number,
  codes: Uint32Array,
  applicants: Uint32Array,
  years: Uint32Array,
  sign: number,
): void {
  const { code, applicant, year } = cols;
  const noApplicant = noApplicantIn(applicant);
  // Four bytes at a time: a quad with none of them `which` is passed over.
  const quads = new Uint32Array(failed.buffer, failed.byteOffset, failed.length >>> 2);
  const none = which === 1 ? 0 : 0x01010101;
  for (let q = lo >>> 2, end = (hi + 3) >>> 2; q < end; q++) {
    if (quads[q] === none) continue;
    for (let d = q << 2, last = Math.min(d + 4, hi); d < last; d++) {
      if (failed[d] !== which) continue;
      const c = code[d]!;
      if (c !== NO_CODE) codes[c]! += sign;
      const a = applicant[d]!;
      if (a !== noApplicant) applicants[a]! += sign;
      years[year[d]!]! += sign;
    }
  }
}

/** Ids per block of `blockCounts`: below 2^16, so a block's counts fit 16 bits. */
const BLOCK = 32_768;
/** Block b's count of product code c is codes[b × codeCount + c]; applicants the same. */
type BlockCounts = { codes: Uint16Array; applicants: Uint16Array };
const blockCountsByColumns = new ColumnMemo<BlockCounts>((c) => c.codes.byteLength + c.applicants.byteLength);

/**
 * Product code and applicant counts of each whole block of BLOCK ids, made once per index on first use: 2 bytes per
 * code and applicant per block (about 0.8 MB at a million documents, 3,216 codes and 10,070 applicants).
 */
function blockCounts(index: SearchIndex): BlockCounts {
  const { docCode, docApplicant } = index;
  const nc = index.codes.length;
  const na = index.applicants.length;
  let counts = blockCountsByColumns.get([docCode, docApplicant], `${nc}/${na}`);
  if (!counts) {
    const n = Math.floor(index.docCount / BLOCK);
    counts = { codes: new Uint16Array(n * nc), applicants: new Uint16Array(n * na) };
    const noApplicant = noApplicantIn(docApplicant);
    for (let b = 0; b < n; b++) {
      for (let d = b * BLOCK, end = d + BLOCK; d < end; d++) {
        const c = docCode[d]!;
        if (c !== NO_CODE) counts.codes[b * nc + c]!++;
        const a = docApplicant[d]!;
        if (a !== noApplicant) counts.applicants[b * na + a]!++;
      }
    }
    blockCountsByColumns.set([docCode, docApplicant], counts, `${nc}/${na}`);
  }
  return counts;
}

/** Adds block b's code and applicant counts to `codes` and `applicants` (sign 1), or takes them off (-1). */
function addBlock(blocks: BlockCounts, b: number, codes: Uint32Array, applicants: Uint32Array, sign: 1 | -1): void {
  const nc = codes.length;
  const na = applicants.length;
  for (let c = 0, at = b * nc; c < nc; c++) codes[c]! += sign * blocks.codes[at + c]!;
  for (let a = 0, at = b * na; a < na; a++) applicants[a]! += sign * blocks.applicants[at + a]!;
}

/** Adds the ids [lo, hi) to the year counts (sign 1), or takes them off (-1), from the years' id ranges. */
function addYears(index: SearchIndex, lo: number, hi: number, years: Uint32Array, sign: number): void {
  const runs = runsOfYears(index);
  for (let r = 0; r < runs.length; r += 3) {
    const from = Math.max(lo, runs[r + 1]!);
    const to = Math.min(hi, runs[r + 2]!);
    if (to > from) years[runs[r]!]! += sign * (to - from);
  }
}

/**
 * Product code and applicant counts over the matches (ids ascending, or a range). A whole block of ids that holds more
 * matches than not adds its counts made once per index (`blockCounts`) and takes off the ids it lacks: a date range's
 * matches are mostly runs of ids, since ids run in decision date order.
 */
function countByBlocks(index: SearchIndex, docs: ListOrRange, codes: Uint32Array, applicants: Uint32Array): void {
  const { docCode, docApplicant, docCount } = index;
  let blocks: BlockCounts | null = null;
  if (!(docs instanceof Uint32Array)) {
    // Whole blocks inside the range at once, the ids before and after them one by one.
    const first = Math.ceil(docs.lo / BLOCK) * BLOCK;
    const end = Math.floor(Math.min(docs.hi, docCount) / BLOCK) * BLOCK;
    if (end - first < BLOCK) return countCodesAndApplicants(docCode, docApplicant, docs, codes, applicants);
    blocks = blockCounts(index);
    for (let lo = first; lo < end; lo += BLOCK) addBlock(blocks, lo / BLOCK, codes, applicants, 1);
    countCodesAndApplicants(docCode, docApplicant, { lo: docs.lo, hi: first }, codes, applicants);
    countCodesAndApplicants(docCode, docApplicant, { lo: end, hi: docs.hi }, codes, applicants);
    return;
  }
  for (let i = 0; i < docs.length; ) {
    const lo = docs[i]! - (docs[i]! % BLOCK);
    const hi = lo + BLOCK;
    // The matches in this block are positions [i, j): at most BLOCK of them, distinct ids.
    let j = i;
    let past = Math.min(docs.length, i + BLOCK);
    while (j < past) {
      const mid = (j + past) >>> 1;
      if (docs[mid]! < hi) j = mid + 1;
      else past = mid;
    }
    if (hi <= docCount && (j - i) * 2 > BLOCK) {
      blocks ??= blockCounts(index);
      addBlock(blocks, lo / BLOCK, codes, applicants, 1);
      takeGaps(docCode, docApplicant, docs, i, j, lo, hi, codes, applicants);
    } else countCodesAndApplicants(docCode, docApplicant, docs.subarray(i, j), codes, applicants);
    i = j;
  }
}

/** Takes off the counts of the ids in [lo, hi) that are not among docs[i..j) (ascending, all within [lo, hi)). */
function takeGaps(docCode: Uint16Array, docApplicant: ApplicantColumn, docs: Uint32Array, i: number, j: number, lo: number, hi: number, codes: Uint32Array, applicants: Uint32Array): void {
  const noApplicant = noApplicantIn(docApplicant);
  let next = lo;
  for (let k = i; k <= j; k++) {
    const until = k < j ? docs[k]! : hi;
    for (let d = next; d < until; d++) {
      const c = docCode[d]!;
      if (c !== NO_CODE) codes[c]!--;
      const a = docApplicant[d]!;
      if (a !== noApplicant) applicants[a]!--;
    }
    next = until + 1;
  }
}

/**
 * The three facets from their counts. `seen`, when given, lists every code and applicant id with a count: the top ten
 * are picked among those (`topOfIds`, which zeroes the counts it reads). Years are read only over the years that hold
 * documents.
 */
function facetsOf(index: SearchIndex, codes: Uint32Array, applicants: Uint32Array, years: Uint32Array, seen: Seen | null = null): Facet[] {
  const span = yearSpan(index);
  const topCodes = seen ? topOfIds(codes, seen.codes, seen.codeCount, FACET_SIZE) : topCounts(codes, FACET_SIZE);
  const topApplicants = seen ? topOfIds(applicants, seen.applicants, seen.applicantCount, FACET_SIZE) : topCounts(applicants, FACET_SIZE);
  return [
    { field: 'productCode', values: topCodes.map(([id, count]) => ({ value: index.codes[id]!, count })) },
    { field: 'applicant', values: topApplicants.map(([id, count]) => ({ value: index.applicants[id]!, count })) },
    { field: 'decisionYear', values: topCounts(years, FACET_SIZE, span.lo, span.hi).map(([year, count]) => ({ value: year, count })) },
  ];
}

function countCodesAndApplicants(docCode: Uint16Array, docApplicant: ApplicantColumn, docs: ListOrRange, codes: Uint32Array, applicants: Uint32Array): void {
  const noApplicant = noApplicantIn(docApplicant);
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const c = docCode[d]!;
      if (c !== NO_CODE) codes[c]!++;
      const a = docApplicant[d]!;
      if (a !== noApplicant) applicants[a]!++;
    }
  } else {
    for (let d = docs.lo; d < docs.hi; d++) {
      const c = docCode[d]!;
      if (c !== NO_CODE) codes[c]!++;
      const a = docApplicant[d]!;
      if (a !== noApplicant) applicants[a]!++;
    }
  }
}

const everything = new ColumnMemo<{ codes: Uint32Array; applicants: Uint32Array }>((c) => c.codes.byteLength + c.applicants.byteLength);

/** Product code and applicant counts over every document: one pass, once per index. */
function countsOfEverything(index: SearchIndex): { codes: Uint32Array; applicants: Uint32Array } {
  const shape = `${index.codes.length}/${index.applicants.length}`;
  return everything.of([index.docCode, index.docApplicant], () => {
    const all = { codes: new Uint32Array(index.codes.length), applicants: new Uint32Array(index.applicants.length) };
    countCodesAndApplicants(index.docCode, index.docApplicant, { lo: 0, hi: index.docCount }, all.codes, all.applicants);
    return all;
  }, shape);
}

const yearRuns = new ColumnMemo<Uint32Array>((runs) => runs.byteLength);

/**
 * Where each decision year's documents start and end: ids run in decision date order, so a year's documents are one
 * range. Triples (year, lo, hi), made once per index.
 */
function runsOfYears(index: SearchIndex): Uint32Array {
  const { docYear, docCount } = index;
  let runs = yearRuns.get([docYear], String(docCount));
  if (!runs) {
    const out: number[] = [];
    for (let d = 0; d < docCount; ) {
      const y = docYear[d]!;
      let e = d + 1;
      while (e < docCount && docYear[e] === y) e++;
      if (y !== 0) out.push(y, d, e);
      d = e;
    }
    runs = Uint32Array.from(out);
    yearRuns.set([docYear], runs, String(docCount));
  }
  return runs;
}

const yearSpans = new ColumnMemo<{ lo: number; hi: number }>();

/** The years that hold documents, [lo, hi): the only years a count can be non-zero for (after `years[0] = 0`). */
function yearSpan(index: SearchIndex): { lo: number; hi: number } {
  let span = yearSpans.get([index.docYear], String(index.docCount));
  if (!span) {
    const runs = runsOfYears(index);
    span = { lo: 1, hi: 1 };
    for (let r = 0; r < runs.length; r += 3) {
      if (span.lo === span.hi || runs[r]! < span.lo) span.lo = runs[r]!;
      span.hi = Math.max(span.hi, runs[r]! + 1);
    }
    yearSpans.set([index.docYear], span, String(index.docCount));
  }
  return span;
}

/**
 * Matches per decision year added to `years` (index: the year; no date is not counted), from the years' id ranges:
 * no pass over the matches.
 */
function yearCounts(index: SearchIndex, docs: ListOrRange, years: Uint32Array): Uint32Array {
  const runs = runsOfYears(index);
  const before = (id: number): number =>
    docs instanceof Uint32Array ? lowerBound(docs, id) : Math.min(Math.max(id, docs.lo), docs.hi) - docs.lo;
  for (let r = 0; r < runs.length; r += 3) years[runs[r]!]! += before(runs[r + 2]!) - before(runs[r + 1]!);
  return years;
}

/**
 * The `k` ids with the highest non-zero counts, count descending then id ascending, as [id, count] pairs; only ids in
 * [from, to) are read (every other count must be 0).
 */
export function topCounts(counts: Uint32Array, k: number, from = 0, to = counts.length): [number, number][] {
  // A long list (a facet at `size: null` asks for every value) is sorted once: insertion into the list below costs a
  // move of the list per id, quadratic in the number of values.
  if (k > TOP_BY_INSERTION) return topBySort(counts, k, from, to);
  const best: [number, number][] = [];
  // The count an id must beat to enter: 0 until the list is full, then its last count (ids come ascending, so a tie
  // never enters). One comparison for most ids.
  let floor = 0;
  for (let id = from; id < to; id++) {
    const count = counts[id]!;
    if (count <= floor) continue;
    if (best.length === k) best.pop();
    let at = best.length;
    while (at > 0 && best[at - 1]![1] < count) at--;
    best.splice(at, 0, [id, count]);
    if (best.length === k) floor = best[k - 1]![1];
  }
  return best;
}

/** Above this many values asked for, `topCounts` sorts the non-zero ids instead of inserting into a short list. */
const TOP_BY_INSERTION = 32;

function topBySort(counts: Uint32Array, k: number, from: number, to: number): [number, number][] {
  const ids = topIdsBySort(counts, k, from, to);
  const best: [number, number][] = [];
  for (const id of ids) best.push([id, counts[id]!]);
  return best;
}

/**
 * The ids of the `k` largest non-zero counts of counts[from..to), count descending then id ascending, as `topCounts`
 * orders them, without a pair made per id (a facet at `size: null` lists every value: some ten thousand at a million
 * records).
 */
export function topIds(counts: Uint32Array, k: number, from = 0, to = counts.length): Uint32Array {
  if (k > TOP_BY_INSERTION) return topIdsBySort(counts, k, from, to);
  const best = topCounts(counts, k, from, to);
  const ids = new Uint32Array(best.length);
  for (let i = 0; i < best.length; i++) ids[i] = best[i]![0];
  return ids;
}

function topIdsBySort(counts: Uint32Array, k: number, from: number, to: number): Uint32Array {
  let n = 0;
  let most = 0;
  for (let id = from; id < to; id++) {
    if (counts[id]! > 0) n++;
    most = Math.max(most, counts[id]!);
  }
  if (most < 2 ** 20) {
    // Count descending then id ascending is the ascending order of (2^20 - count) × 2^32 + id: exact below 2^53, and a
    // typed array of numbers sorts without calling a comparison function.
    const keys = new Float64Array(n);
    n = 0;
    for (let id = from; id < to; id++) if (counts[id]! > 0) keys[n++] = (2 ** 20 - counts[id]!) * 2 ** 32 + id;
    keys.sort();
    const ids = new Uint32Array(Math.min(k, keys.length));
    for (let i = 0; i < ids.length; i++) ids[i] = keys[i]! % 2 ** 32;
    return ids;
  }
  const ids = new Uint32Array(n);
  n = 0;
  for (let id = from; id < to; id++) if (counts[id]! > 0) ids[n++] = id;
  ids.sort((a, b) => counts[b]! - counts[a]! || a - b);
  return ids.subarray(0, Math.min(k, ids.length));
}

/**
 * `topCounts` when every non-zero count is that of one of ids[0..n) (distinct, in any order), so ties are broken by
 * id here. Zeroes each count it reads.
 */
export function topOfIds(counts: Uint32Array, ids: Uint32Array, n: number, k: number): [number, number][] {
  const best: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    const count = counts[id]!;
    counts[id] = 0;
    if (count === 0) continue;
    if (best.length === k) {
      const last = best[k - 1]!;
      if (count < last[1] || (count === last[1] && id > last[0])) continue;
      best.pop();
    }
    let at = best.length;
    while (at > 0 && (best[at - 1]![1] < count || (best[at - 1]![1] === count && best[at - 1]![0] > id))) at--;
    best.splice(at, 0, [id, count]);
  }
  return best;
}
