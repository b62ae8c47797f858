import { foldText, tokenize } from '../search/tokenize.ts';
import { partitionPoint } from '../utils/bisect.ts';
import type { Budget } from '../search/budget.ts';
import { eachDocSliced, type DocSet } from '../search/docset.ts';
import { BadQuery, NONE, scanPlan, type Leaf, type Plan } from './plan.ts';

/**
 * A field whose value is one entry of a dictionary (a list of distinct strings) per document: the index's
 * applicants, product codes, decision codes, … or a product code's classification values. A clause selects entries
 * (a mask over the dictionary), and the documents are those whose entry is selected.
 */
export type Dict = {
  values: readonly string[];
  /** The document's entry, or -1 when it has none. */
  entryOf: (d: number) => number;
  /** The documents whose entry is selected. */
  docsOf: (mask: Uint8Array) => DocSet;
  /** How many documents have a selected entry (an upper bound is enough). */
  sizeOf: (mask: Uint8Array) => number;
  /** Index term id → the entries holding that word (the index's own postings, when it has them). */
  termRows?: { terms: readonly string[]; offsets: Uint32Array; values: Uint32Array | Uint16Array };
  /** The entry equal to a whole value, when the dictionary has a faster way than a scan. */
  findExact?: (value: string) => number | null;
  /** Counts of every entry over a set of documents, when the dictionary has a faster way than `entryOf`. */
  countAll?: (set: DocSet, budget: Budget) => Promise<Uint32Array>;
};

export type Match = { text: boolean; exact: boolean; field: string };

/** Whole-value comparison ignores case, accents and runs of white space (docs: openfda-docs, ".exact"). */
export const normal = (s: string): string => foldText(s).replace(/\s+/g, ' ').trim();

const tokenCache = new WeakMap<readonly string[], string[][]>();
function tokensOf(values: readonly string[]): string[][] {
  let t = tokenCache.get(values);
  if (!t) tokenCache.set(values, (t = values.map((v) => tokenize(v))));
  return t;
}

const normalCache = new WeakMap<readonly string[], string[]>();
/** Each value's whole-value form, made once per list of values. */
function normalsOf(values: readonly string[]): string[] {
  let n = normalCache.get(values);
  if (!n) normalCache.set(values, (n = values.map(normal)));
  return n;
}

function hasPhrase(tokens: readonly string[], words: readonly string[]): boolean {
  outer: for (let s = 0; s + words.length <= tokens.length; s++) {
    for (let k = 0; k < words.length; k++) if (tokens[s + k] !== words[k]) continue outer;
    return true;
  }
  return false;
}

/** Index term id of a whole word, or -1. */
export function termIdOf(terms: readonly string[], word: string): number {
  const t = partitionPoint(0, terms.length, (i) => terms[i]! < word);
  return terms[t] === word ? t : -1;
}

/** The index terms that start with `stem`: one range, since terms are sorted. */
export function termRange(terms: readonly string[], stem: string): { lo: number; hi: number } {
  const lo = partitionPoint(0, terms.length, (i) => terms[i]! < stem);
  const hi = partitionPoint(lo, terms.length, (i) => terms[i]!.startsWith(stem));
  return { lo, hi };
}

/** The single word a wildcard's stem must be. */
export function stemWord(stem: string, field: string): string {
  const words = tokenize(stem);
  if (words.length !== 1) throw new BadQuery(`search: ${field}:${stem}* — a wildcard's stem must be one word of letters and digits`);
  return words[0]!;
}

const compare = (a: string, b: string): number => {
  const x = Number(a);
  const y = Number(b);
  if (a.trim() !== '' && b.trim() !== '' && Number.isFinite(x) && Number.isFinite(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
};

/** Which entries a clause selects. */
export function maskOf(dict: Dict, leaf: Leaf, m: Match, budget: Budget): Uint8Array {
  const { values } = dict;
  const mask = new Uint8Array(values.length);
  const whole = !m.text || m.exact;
  // A pass over the dictionary: one step an entry.
  const selectWhere = (f: (i: number) => boolean) => {
    budget.charge(values.length);
    for (let i = 0; i < values.length; i++) if (f(i)) mask[i] = 1;
  };
  switch (leaf.type) {
    case 'exists':
      mask.fill(1);
      return mask;
    case 'range': {
      const { lo, hi, loInclusive, hiInclusive } = leaf;
      selectWhere((i) => {
        const v = values[i]!;
        if (lo !== null) {
          const c = compare(v, lo);
          if (c < 0 || (c === 0 && !loInclusive)) return false;
        }
        if (hi !== null) {
          const c = compare(v, hi);
          if (c > 0 || (c === 0 && !hiInclusive)) return false;
        }
        return true;
      });
      return mask;
    }
    case 'term':
    case 'phrase': {
      const prefix = leaf.type === 'term' && leaf.prefix;
      if (whole) {
        const q = normal(leaf.value);
        const normals = normalsOf(values);
        if (prefix) {
          selectWhere((i) => normals[i]!.startsWith(q));
          budget.expand(mask.reduce((n, x) => n + x, 0), `${m.field}:${leaf.value}*`);
          return mask;
        }
        const found = dict.findExact?.(leaf.value);
        if (found !== undefined) {
          if (found !== null) mask[found] = 1;
          return mask;
        }
        selectWhere((i) => normals[i] === q);
        return mask;
      }
      if (prefix) {
        const stem = stemWord(leaf.value, m.field);
        if (dict.termRows) {
          const { terms, offsets, values: rows } = dict.termRows;
          const r = termRange(terms, stem);
          budget.expand(r.hi - r.lo, `${m.field}:${leaf.value}*`);
          budget.charge(offsets[r.hi]! - offsets[r.lo]!);
          for (let t = r.lo; t < r.hi; t++) for (let j = offsets[t]!; j < offsets[t + 1]!; j++) mask[rows[j]!] = 1;
          return mask;
        }
        const tokens = tokensOf(values);
        selectWhere((i) => tokens[i]!.some((w) => w.startsWith(stem)));
        budget.expand(mask.reduce((n, x) => n + x, 0), `${m.field}:${leaf.value}*`);
        return mask;
      }
      const words = tokenize(leaf.value);
      if (words.length === 0) return mask;
      if (dict.termRows) {
        const { terms, offsets, values: rows } = dict.termRows;
        const ids = words.map((w) => termIdOf(terms, w));
        if (ids.some((t) => t < 0)) return mask;
        let rarest = ids[0]!;
        for (const t of ids) if (offsets[t + 1]! - offsets[t]! < offsets[rarest + 1]! - offsets[rarest]!) rarest = t;
        budget.charge(offsets[rarest + 1]! - offsets[rarest]!);
        for (let j = offsets[rarest]!; j < offsets[rarest + 1]!; j++) {
          const v = rows[j]!;
          if (words.length === 1 || hasPhrase(tokenize(values[v]!), words)) mask[v] = 1;
        }
        return mask;
      }
      const tokens = tokensOf(values);
      selectWhere((i) => hasPhrase(tokens[i]!, words));
      return mask;
    }
  }
}

export function dictPlan(dict: Dict, leaf: Leaf, m: Match, budget: Budget, docCount: number): Plan {
  const { entryOf } = dict;
  // Documents without an entry: one pass over the column.
  if (leaf.type === 'exists' && leaf.missing) return scanPlan(docCount, (d) => entryOf(d) < 0, budget);
  const mask = maskOf(dict, leaf, m, budget);
  if (!mask.includes(1)) return NONE;
  const size = dict.sizeOf(mask);
  const plan: Plan = {
    size,
    set: async () => {
      // The documents of the selected entries, listed (or a pass, for a dictionary without rows: size is then all).
      budget.charge(size);
      return dict.docsOf(mask);
    },
    test: (d) => {
      const v = entryOf(d);
      return v >= 0 && mask[v] === 1;
    },
  };
  return plan;
}

/** Counts of every entry over the set. */
export async function dictCounts(dict: Dict, set: DocSet, budget: Budget): Promise<Uint32Array> {
  if (dict.countAll) return dict.countAll(set, budget);
  const counts = new Uint32Array(dict.values.length);
  const { entryOf } = dict;
  await eachDocSliced(set, budget, (d) => {
    const v = entryOf(d);
    if (v >= 0) counts[v]!++;
    return 1;
  });
  return counts;
}

/** `count=` over a dictionary field: whole entries (keyword, `.exact`) or their words (text). */
export async function dictTerms(dict: Dict, set: DocSet, words: boolean, budget: Budget): Promise<Map<string, number>> {
  const counts = await dictCounts(dict, set, budget);
  budget.charge(counts.length);
  const out = new Map<string, number>();
  const tokens = words ? tokensOf(dict.values) : null;
  for (let v = 0; v < counts.length; v++) {
    const c = counts[v]!;
    if (c === 0) continue;
    if (tokens) {
      for (const w of new Set(tokens[v]!)) out.set(w, (out.get(w) ?? 0) + c);
    } else {
      const term = dict.values[v]!;
      out.set(term, (out.get(term) ?? 0) + c);
    }
  }
  return out;
}
