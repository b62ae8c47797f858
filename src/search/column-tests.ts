import { NO_SMALL } from '../contract/search-index.ts';
import { LEGAL_SUFFIXES, type Qualifier, type Range } from './grammar.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { findApplicant, findCode, type SearchIndex } from './model.ts';
import { rangeSpan } from './sort.ts';
import { foldText } from './tokenize.ts';
import { kept } from './kept.ts';

/*
 * What a qualifier asks of a document, made once per qualifier and index as a column test (`Test`): the column, the
 * table of values that pass or the range, and about which share of the documents passes. The kernels that run a test
 * over many documents are in column-kernels.ts; the conditions a query is planned into are in plan.ts.
 */

/** Documents decided within the range: one id range, since docDecided does not increase over ids (0 last). */
export function decidedIds(index: SearchIndex, range: Range): { lo: number; hi: number } {
  const decided = index.docDecided;
  const dated = partitionPoint(0, index.docCount, (d) => decided[d]! !== 0);
  const lo = partitionPoint(0, dated, (d) => decided[d]! > range.hi);
  const hi = partitionPoint(0, dated, (d) => decided[d]! >= range.lo);
  return { lo, hi: Math.max(lo, hi) };
}

/** A per-id mask of a dictionary: the ids whose value passes `test`. */
function mask(values: readonly string[], test: (v: string) => boolean): Uint8Array {
  const out = new Uint8Array(values.length + 1);
  values.forEach((v, i) => {
    if (test(v)) out[i] = 1;
  });
  return out;
}

type Column = Uint8Array | Uint16Array | Uint32Array;

/**
 * What a qualifier asks of one document, as data rather than a function, so that it runs as a tight loop over a
 * column (one kernel per kind below) instead of a call per candidate:
 * - `set`: the column's value v passes when v < ok.length and ok[v] is 1 (a column's "none" is always past the end);
 * - `range`: the column holds a day number, 0 for none, and passes within [lo, hi]; no document outside the id
 *   ranges `within` (two, [a, b) and [c, d)) passes, when given;
 * - `review`: docDecided - docReceived, both present, within [lo, hi];
 * - `ids`: the document id is within [lo, hi).
 * Null for the qualifiers that read a document's terms (device:) or its predicates (predicate:).
 */
export type Test =
  | { kind: 'set'; col: Column; ok: Uint8Array }
  | { kind: 'range'; col: Uint32Array; lo: number; hi: number; within?: readonly [number, number, number, number] }
  | { kind: 'review'; decided: Uint32Array; received: Uint32Array; lo: number; hi: number }
  | { kind: 'ids'; lo: number; hi: number };

export function qualifierTest(index: SearchIndex, q: Qualifier): Test | null {
  let known = knownTests.get(index);
  if (!known) knownTests.set(index, (known = new Map()));
  const key = JSON.stringify(q);
  let test = known.get(key);
  if (test === undefined) {
    test = makeTest(index, q);
    if (known.size >= 64) known.delete(known.keys().next().value!);
    known.set(key, test);
  }
  return test;
}

/**
 * The last 64 distinct qualifiers' tests of each index: a query's dense attempt and its general path ask for the same
 * ones, and the same filters come back (class:2 widens a table over 3,216 codes, 0.2 ms at a million documents).
 * Tests are only read once made.
 */
const knownTests = new WeakMap<SearchIndex, Map<string, Test | null>>();

function makeTest(index: SearchIndex, q: Qualifier): Test | null {
  // u8 and u16 columns get a table over every value they can hold, so the kernels need no bounds check.
  const set = (col: Column, ok: Uint8Array): Test => {
    const span = col instanceof Uint8Array ? 0x100 : col instanceof Uint16Array ? 0x10000 : 0;
    if (ok.length >= span) return { kind: 'set', col, ok };
    return { kind: 'set', col, ok: fullTable(col, ok, span) };
  };
  switch (q.field) {
    case 'applicant': {
      const ok = new Uint8Array(index.applicants.length + 1);
      if ('exact' in q) {
        const g = findApplicant(index, q.exact);
        if (g !== null) ok[g] = 1;
      } else applicantMask(index, q.words, ok);
      return set(index.docApplicant, ok);
    }
    case 'code': {
      const c = findCode(index, q.code);
      const ok = new Uint8Array(index.codes.length + 1);
      if (c !== null) ok[c] = 1;
      return set(index.docCode, ok);
    }
    case 'device':
      return null;
    case 'class': {
      const classes = mask(index.classes, (v) => v.toUpperCase() === q.deviceClass);
      const ok = new Uint8Array(index.codes.length + 1);
      for (let c = 0; c < index.codes.length; c++) {
        const k = index.codeClass[c]!;
        if (k !== NO_SMALL && classes[k]) ok[c] = 1;
      }
      return set(index.docCode, ok);
    }
    case 'panel':
      return set(index.docPanel, mask(index.panels, (v) => startsWithText(v, q.text)));
    case 'type':
      return set(index.docType, mask(index.types, (v) => startsWithText(v, q.text)));
    case 'decision': {
      const ok = mask(index.decisions, (v) => v.toLowerCase() === q.text);
      index.decisionNames.forEach((name, i) => {
        if (startsWithText(name, q.text)) ok[i] = 1;
      });
      return set(index.docDecision, ok);
    }
    case 'country':
      return set(index.docCountry, mask(index.countries, (v) => v === q.code));
    case 'state':
      return set(index.docState, mask(index.states, (v) => v === q.code));
    case 'thirdparty':
    case 'expedited':
    case 'summary': {
      // Every value of the flags byte that has this flag as asked.
      const shift = q.field === 'thirdparty' ? 0 : q.field === 'expedited' ? 2 : 4;
      const want = q.yes ? 2 : 1;
      const ok = new Uint8Array(256);
      for (let b = 0; b < 256; b++) if (((b >> shift) & 3) === want) ok[b] = 1;
      return set(index.docFlags, ok);
    }
    case 'decided': {
      const r = decidedIds(index, q.range);
      return { kind: 'ids', lo: r.lo, hi: r.hi };
    }
    case 'received':
      // Day numbers are below 2^22 (see src/search/sort.ts): bounds clamped to small integers keep the kernels in
      // integer arithmetic.
      return { kind: 'range', col: index.docReceived, lo: clamp(q.range.lo, 1, DAY_BOUND), hi: clamp(q.range.hi, 0, DAY_BOUND), within: receivedWithin(index, q.range.lo) };
    case 'kind': {
      // Documents with at least one edge of the kind: docEdgeKinds holds the kinds of each one's edges, OR-ed.
      const ok = new Uint8Array(256);
      for (let b = 0; b < 256; b++) if ((b & q.kinds) !== 0) ok[b] = 1;
      return set(index.docEdgeKinds, ok);
    }
    case 'predicate':
      return null;
    case 'reviewdays':
      return { kind: 'review', decided: index.docDecided, received: index.docReceived, lo: clamp(q.range.lo, -DAY_BOUND, DAY_BOUND), hi: clamp(q.range.hi, -DAY_BOUND - 1, DAY_BOUND) };
  }
}

const fullTables = new WeakMap<Column, Map<string, Uint8Array>>();

/**
 * `ok` widened to every value a column can hold (64 kB for a u16 column), kept for the last few distinct tables of
 * each column: a table made per query was garbage for the collector, and the same filters come back (class:2).
 * Tables are only read once made.
 */
function fullTable(col: Column, ok: Uint8Array, span: number): Uint8Array {
  let known = fullTables.get(col);
  if (!known) fullTables.set(col, (known = new Map()));
  const passing: number[] = [];
  for (let v = 0; v < ok.length; v++) if (ok[v] === 1) passing.push(v);
  const key = passing.join(',');
  let full = known.get(key);
  if (!full) {
    full = new Uint8Array(span);
    full.set(ok);
    // A table let go of for this one: the bytes kept for the column stay the same.
    const replaced = known.size >= 16;
    if (replaced) known.delete(known.keys().next().value!);
    known.set(key, kept(col, full, replaced ? 0 : span));
  }
  return full;
}

/** Past every day number and every review time (day numbers stay below 2^22). */
const DAY_BOUND = 2 ** 23;
const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

const leads = new WeakMap<SearchIndex, number>();

/**
 * Where the documents received on or after day `lo` can be: a document is decided at most `lead` days before it is
 * received (lead is the largest received - decided of the index, 0 or less in practice, made once per index), so
 * those dated ones are decided on or after lo - lead, the first ids (ids run in decision date order); and the
 * undated documents (the last ids) may have any receipt date.
 */
function receivedWithin(index: SearchIndex, lo: number): [number, number, number, number] {
  const { docDecided, docReceived, docCount } = index;
  const dated = partitionPoint(0, docCount, (d) => docDecided[d]! !== 0);
  let lead = leads.get(index);
  if (lead === undefined) {
    lead = -DAY_BOUND;
    for (let d = 0; d < dated; d++) {
      const r = docReceived[d]!;
      if (r !== 0 && r - docDecided[d]! > lead) lead = r - docDecided[d]!;
    }
    leads.set(index, lead);
  }
  const from = lo - lead;
  const p = partitionPoint(0, dated, (d) => docDecided[d]! >= from);
  return [0, p, dated, docCount];
}

const histograms = new WeakMap<Column, Uint32Array>();

/** How many documents hold each value of a u8 or u16 column: one pass, once per index. */
function histogramOf(col: Uint8Array | Uint16Array): Uint32Array {
  let counts = histograms.get(col);
  if (!counts) {
    counts = new Uint32Array(col instanceof Uint8Array ? 0x100 : 0x10000);
    for (let d = 0; d < col.length; d++) counts[col[d]!]!++;
    histograms.set(col, kept(col, counts, counts.byteLength));
  }
  return counts;
}

const shares = new WeakMap<Test, number>();

/** About which share of all documents passes the test: exact for u8 and u16 columns and id ranges, else 1/2. */
export function shareOf(index: SearchIndex, t: Test): number {
  let share = shares.get(t);
  if (share === undefined) shares.set(t, (share = shareOfNew(index, t)));
  return share;
}

function shareOfNew(index: SearchIndex, t: Test): number {
  if (index.docCount === 0) return 1;
  if (t.kind === 'ids') return (t.hi - t.lo) / index.docCount;
  // Exact, from where the range is in that sort's order of every document (made once per index).
  if (t.kind === 'range' || t.kind === 'review') {
    const { above, within } = rangeSpan(index, t);
    return (within - above) / index.docCount;
  }
  if (t.kind !== 'set' || t.col instanceof Uint32Array) return 0.5;
  const counts = histogramOf(t.col);
  let n = 0;
  for (let v = 0; v < counts.length; v++) if (t.ok[v]) n += counts[v]!;
  return n / index.docCount;
}

/** Whether document d passes the test (one call; the kernels of column-kernels.ts do the same over many documents). */
export function passes(t: Test, d: number): boolean {
  switch (t.kind) {
    case 'set': {
      const v = t.col[d]!;
      return v < t.ok.length && t.ok[v] === 1;
    }
    case 'range': {
      const v = t.col[d]!;
      return v !== 0 && v >= t.lo && v <= t.hi;
    }
    case 'review': {
      const a = t.received[d]!;
      const b = t.decided[d]!;
      return a !== 0 && b !== 0 && b - a >= t.lo && b - a <= t.hi;
    }
    case 'ids':
      return d >= t.lo && d < t.hi;
  }
}

/** Folded `value` starts with `text` (already folded, spaces collapsed). */
function startsWithText(value: string, text: string): boolean {
  return foldText(value).replace(/\s+/g, ' ').startsWith(text);
}

/**
 * Applicant groups whose name, without legal suffixes, has a word starting with each of `words`. A term that is a
 * legal suffix reaches no group: "co" finds Cook and Covidien, not every "Co.".
 */
export function applicantMask(index: SearchIndex, words: readonly string[], ok: Uint8Array): void {
  const hits = new Uint8Array(index.applicants.length);
  words.forEach((word, i) => {
    const lo = partitionPoint(0, index.terms.length, (t) => index.terms[t]! < word);
    for (let t = lo; t < index.terms.length && index.terms[t]!.startsWith(word); t++) {
      if (LEGAL_SUFFIXES.has(index.terms[t]!)) continue;
      for (let j = index.termApplicantOffsets[t]!, end = index.termApplicantOffsets[t + 1]!; j < end; j++) {
        const g = index.termApplicants[j]!;
        if (hits[g] === i) hits[g] = i + 1;
      }
    }
  });
  for (let g = 0; g < hits.length; g++) if (hits[g] === words.length) ok[g] = 1;
}
