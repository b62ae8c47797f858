import { NO_CODE, NO_SMALL, dayNumber, isoOfDay, type SearchSectionName } from '../contract/search-index.ts';
import { rowsByValue, type Rows } from '../search/csr.ts';
import { dayTableSteps, type DayTable } from '../search/days.ts';
import { runSliced } from '../search/slices.ts';
import { findApplicant, findCode, type SearchIndex } from '../search/model.ts';
import { noApplicantIn } from '../search/codec.ts';
import { kNumberText } from '../search/k-number.ts';
import { tokenize } from '../search/tokenize.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import type { Catalog } from './catalog.ts';
import { committeeCode } from './committees.ts';
import { openfdaBlock } from './record.ts';
import { dictPlan, dictTerms, normal, stemWord, termIdOf, termRange, type Dict } from './dict.ts';
import { Bits, eachDocSliced, listLimit, rangeSet, rowsUnion, unionOf, type DocSet } from '../search/docset.ts';
import type { FieldRef } from './lucene.ts';
import type { SectionWords } from '../search/chunk-sections.ts';
import type { Budget } from '../search/budget.ts';
import { allPlan, BadQuery, NONE, scanPlan, setPlan, type Fields, type Leaf, type Plan } from './plan.ts';

/**
 * openFDA's 510(k) field names, each answered from the search index (src/contract/search-index.ts): what kind of
 * field it is in openFDA (text: words match, `.exact` whole values; keyword: whole values), which index sections it
 * reads, and how a clause, a count and a sort on it run. Fields the index does not hold are refused by name with
 * the reason; they are still returned in every record.
 */
export type Ctx = {
  index: SearchIndex;
  catalog: Catalog;
  /** The index again with more of it read for this request (over a chunked index; the same index over the whole one). */
  more: (words: SectionWords) => Promise<SearchIndex>;
};

/**
 * A count's result: terms with their counts (in no order); or the answer's rows already chosen and in order, as the
 * JSON text of each `{term, count}`, with the number of terms counted in all (`ranked`); or a date field's timeseries,
 * already as the JSON text of `[{time, count}]` in time order, with the number of days in it.
 */
export type CountResult = { kind: 'terms'; counts: Map<string, number> } | { kind: 'ranked'; rows: string[]; total: number } | { kind: 'days'; days: number; json: string };

/** A count's row, `{"term":…,"count":…}`, as JSON.stringify writes it. */
export const termRowText = (term: string, count: number): string => `{"term":${JSON.stringify(term)},"count":${count}}`;

export type FieldDef = {
  kind: 'text' | 'keyword' | 'date';
  needs: readonly SearchSectionName[];
  /** The sections `count` reads, where fewer than a clause's (`needs`): device_name's, the word lists without positions. */
  countNeeds?: readonly SearchSectionName[];
  /** A clause on the field. */
  leaf(ctx: Ctx, leaf: Leaf, exact: boolean, budget: Budget): Plan;
  /** `count=field` (or `field.exact`); absent: the field cannot be counted (`uncountable` says why, when it is known). */
  count?(ctx: Ctx, set: DocSet, exact: boolean, budget: Budget, limit: number): Promise<CountResult>;
  uncountable?: string;
  /** A sort key per document (ascending order of the field; -1 when the document has no value). */
  sortKey?(ctx: Ctx): (d: number) => number;
  /** The key's value as written in a `search_after` (and back). */
  keyText?(ctx: Ctx, key: number): string;
  keyOf?(ctx: Ctx, text: string): number;
};

/**
 * Fields that are in the records but not in the search index. decision_description is among them: the index keeps
 * one description per decision code (its most frequent), and records of one code do not all say the same.
 */
const UNINDEXED = ['decision_description', 'city', 'zip_code', 'postal_code', 'contact', 'address_1', 'address_2', 'advisory_committee', 'advisory_committee_description'];
/** Fields openFDA has and this service's data does not. */
const ABSENT = ['openfda.registration_number', 'openfda.fei_number', 'openfda.k_number', 'openfda.pma_number', 'ssp_indicator'];

const SECTIONS_BASE: SearchSectionName[] = ['docKNumber', 'docDecided', 'docCode', 'codes'];

// ---- dictionaries over the index, made once per index ----

const memo = new WeakMap<object, Map<string, unknown>>();
function once<T>(owner: object, key: string, make: () => T): T {
  let m = memo.get(owner);
  if (!m) memo.set(owner, (m = new Map()));
  if (!m.has(key)) m.set(key, make());
  return m.get(key) as T;
}

function columnDict(
  index: SearchIndex,
  values: readonly string[],
  col: Uint8Array | Uint16Array,
  none: number,
  extra: Partial<Dict> = {},
): Dict {
  const rows = () => rowsByValue(col);
  return {
    values,
    entryOf: (d) => {
      const v = col[d]!;
      return v === none ? -1 : v;
    },
    docsOf: (mask) => rowsUnion(rows().offsets, rows().values, selected(mask), index.docCount),
    sizeOf: (mask) => {
      const r = rows().offsets;
      let n = 0;
      for (const v of selected(mask)) n += r[v + 1]! - r[v]!;
      return n;
    },
    countAll: async (set, budget) => {
      const counts = new Uint32Array(values.length);
      await eachDocSliced(set, budget, (d) => {
        const v = col[d]!;
        if (v !== none) counts[v]!++;
        return 1;
      });
      return counts;
    },
    ...extra,
  };
}

function* selected(mask: Uint8Array): Generator<number> {
  for (let i = 0; i < mask.length; i++) if (mask[i] === 1) yield i;
}

const applicantDict = (ctx: Ctx): Dict =>
  once(ctx.index, 'applicant', () => {
    const { index } = ctx;
    const col = index.docApplicant;
    const none = noApplicantIn(col);
    return {
      values: index.applicants,
      entryOf: (d) => {
        const v = col[d]!;
        return v === none ? -1 : v;
      },
      docsOf: (mask) => rowsUnion(index.applicantDocs.offsets, index.applicantDocs.values, selected(mask), index.docCount),
      sizeOf: (mask) => {
        const o = index.applicantDocs.offsets;
        let n = 0;
        for (const v of selected(mask)) n += o[v + 1]! - o[v]!;
        return n;
      },
      termRows: { terms: index.terms, offsets: index.termApplicantOffsets, values: index.termApplicants },
      findExact: (value) => findApplicant(index, value),
    } satisfies Dict;
  });

const codeDict = (ctx: Ctx): Dict =>
  once(ctx.index, 'code', () =>
    columnDict(ctx.index, ctx.index.codes, ctx.index.docCode, NO_CODE, { findExact: (value) => findCode(ctx.index, value.trim().toUpperCase()) }),
  );

/** A value of each product code's classification, as a dictionary of its distinct values. */
function codeLevelDict(ctx: Ctx, key: string, valueOfCode: (code: string, i: number) => string | null): Dict {
  return once(ctx.index, `code:${key}`, () => {
      const { index } = ctx;
      const perCode = index.codes.map((c, i) => valueOfCode(c, i));
      const values = [...new Set(perCode.filter((v): v is string => v !== null && v !== ''))].sort();
      const id = new Map(values.map((v, i) => [v, i]));
      const codeTo = new Int32Array(index.codes.length).map((_, i) => {
        const v = perCode[i];
        return v === null || v === undefined || v === '' ? -1 : id.get(v)!;
      });
      const col = index.docCode;
      const codesOf = (mask: Uint8Array) => {
        const out: number[] = [];
        for (let c = 0; c < codeTo.length; c++) if (codeTo[c]! >= 0 && mask[codeTo[c]!] === 1) out.push(c);
        return out;
      };
      return {
        values,
        entryOf: (d) => {
          const c = col[d]!;
          return c === NO_CODE ? -1 : codeTo[c]!;
        },
        docsOf: (mask) => rowsUnion(index.codeDocs.offsets, index.codeDocs.values, codesOf(mask), index.docCount),
        sizeOf: (mask) => {
          const o = index.codeDocs.offsets;
          let n = 0;
          for (const c of codesOf(mask)) n += o[c + 1]! - o[c]!;
          return n;
        },
        countAll: async (set, budget) => {
          const perCodeCount = await codeDict(ctx).countAll!(set, budget);
          const counts = new Uint32Array(values.length);
          for (let c = 0; c < codeTo.length; c++) if (codeTo[c]! >= 0) counts[codeTo[c]!]! += perCodeCount[c]!;
          return counts;
        },
      } satisfies Dict;
    });
}

/** A two-bit flag of `docFlags` (0 none, 1 no, 2 yes), as a dictionary of two values. */
function flagDict(ctx: Ctx, shift: number, no: string, yes: string): Dict {
  return once(ctx.index, `flag${shift}`, () => {
    const { index } = ctx;
    const flags = index.docFlags;
    const entryOf = (d: number) => ((flags[d]! >>> shift) & 3) - 1;
    return {
      values: [no, yes],
      entryOf,
      docsOf: (mask) => {
        const bits = new Bits(index.docCount);
        for (let d = 0; d < index.docCount; d++) {
          const v = entryOf(d);
          if (v >= 0 && mask[v] === 1) bits.add(d);
        }
        return bits;
      },
      sizeOf: () => index.docCount,
    } satisfies Dict;
  });
}

function dictField(
  kind: 'text' | 'keyword',
  needs: readonly SearchSectionName[],
  dictOf: (ctx: Ctx) => Dict,
  name: string,
  sortable = false,
): FieldDef {
  const def: FieldDef = {
    kind,
    needs,
    leaf: (ctx, leaf, exact, budget) => dictPlan(dictOf(ctx), leaf, { text: kind === 'text', exact, field: name }, budget, ctx.index.docCount),
    count: async (ctx, set, exact, budget) => {
      const words = kind === 'text' && !exact;
      const made = async (): Promise<CountResult> => ({ kind: 'terms', counts: await dictTerms(dictOf(ctx), set, words, budget) });
      // A count over every record is the same for every request: made once per index (a failed one is not kept).
      if (!isAll(set, ctx.index.docCount)) return made();
      const key = `all:${name}:${words}`;
      const kept = once(ctx.index, key, () => made());
      return kept.catch((err: unknown) => {
        memo.get(ctx.index)?.delete(key);
        throw err;
      });
    },
  };
  if (sortable) {
    def.sortKey = (ctx) => dictOf(ctx).entryOf;
    def.keyText = (ctx, key) => (key < 0 ? '' : dictOf(ctx).values[key]!);
    def.keyOf = (ctx, text) => {
      if (text === '') return -1;
      const values = dictOf(ctx).values;
      const i = partitionPoint(0, values.length, (j) => values[j]! < text);
      // A value gone from this snapshot sorts where it would stand: just before the next one.
      return values[i] === text ? i : i - 0.5;
    };
  }
  return def;
}

// ---- the device name: words with positions, in the index's postings ----

function deviceNamePlan(ctx: Ctx, leaf: Leaf, exact: boolean, budget: Budget): Plan {
  const { index } = ctx;
  const N = index.docCount;
  const terms = index.terms;
  const postings = (t: number) => index.termDocs.subarray(index.termDocOffsets[t]!, index.termDocOffsets[t + 1]!);
  // Each document's words, read on the first test (over a chunked index, made then from the loaded words' rows).
  let forward: Rows | null = null;
  const docTerms = (): Rows => (forward ??= index.docTerms);
  const docHas = (d: number, t: number) => {
    const { offsets, values } = docTerms();
    const lo = offsets[d]!;
    const hi = offsets[d + 1]!;
    const p = lowerBound(values, t, lo, hi);
    return p < hi && values[p] === t;
  };
  if (leaf.type === 'exists') {
    const has = (d: number) => {
      const { offsets } = docTerms();
      return offsets[d + 1]! > offsets[d]!;
    };
    return scanPlan(N, leaf.missing ? (d) => !has(d) : has, budget);
  }
  if (leaf.type === 'range') throw new BadQuery('search: device_name takes words, "phrases" and word* wildcards, not ranges');
  if (leaf.type === 'term' && leaf.prefix) {
    if (exact) throw new BadQuery('search: device_name.exact takes a whole name in quotes, not a wildcard');
    const r = termRange(terms, stemWord(leaf.value, 'device_name'));
    budget.expand(r.hi - r.lo, `device_name:${leaf.value}*`);
    const test = (d: number) => {
      const { offsets, values } = docTerms();
      const lo = offsets[d]!;
      const hi = offsets[d + 1]!;
      const p = lowerBound(values, r.lo, lo, hi);
      return p < hi && values[p]! < r.hi;
    };
    let size = 0;
    for (let t = r.lo; t < r.hi; t++) size += index.termDocOffsets[t + 1]! - index.termDocOffsets[t]!;
    return {
      size,
      set: async () => {
        budget.charge(size);
        const lists: Uint32Array[] = [];
        for (let t = r.lo; t < r.hi; t++) lists.push(postings(t));
        return lists.length === 0 ? new Uint32Array(0) : unionOf(lists, N);
      },
      test,
    };
  }
  const words = tokenize(leaf.value);
  if (words.length === 0) return NONE;
  const ids = words.map((w) => termIdOf(terms, w));
  if (ids.some((t) => t < 0)) return NONE;
  if (words.length === 1 && !exact) {
    const t = ids[0]!;
    return { size: postings(t).length, set: async () => postings(t), test: (d) => docHas(d, t) };
  }
  // A phrase (or a whole name): the words in order, read from each document's word positions (`docSeq`).
  let rarest = ids[0]!;
  for (const t of ids) if (postings(t).length < postings(rarest).length) rarest = t;
  const at = new Int32Array(ids.length);
  const test = (d: number) => {
    const { offsets, values } = docTerms();
    const lo = offsets[d]!;
    const hi = offsets[d + 1]!;
    for (let k = 0; k < ids.length; k++) {
      const p = partitionPoint(lo, hi, (i) => values[i]! < ids[k]!);
      if (p >= hi || values[p] !== ids[k] || p - lo >= 255) return false;
      at[k] = p - lo;
    }
    const start = index.docSeqOffsets[d]!;
    const end = index.docSeqOffsets[d + 1]!;
    if (exact) {
      if (end - start !== ids.length) return false;
      for (let k = 0; k < ids.length; k++) if (index.docSeq[start + k] !== at[k]) return false;
      return true;
    }
    for (let s = start; s + ids.length <= end; s++) {
      let k = 0;
      while (k < ids.length && index.docSeq[s + k] === at[k]) k++;
      if (k === ids.length) return true;
    }
    return false;
  };
  const candidates = postings(rarest);
  return {
    size: candidates.length,
    set: async () => {
      const out = new Uint32Array(candidates.length);
      let n = 0;
      await eachDocSliced(candidates, budget, (d) => {
        if (test(d)) out[n++] = d;
        return ids.length;
      });
      return out.subarray(0, n);
    },
    test,
  };
}

/**
 * `count=device_name`: every word of the matches' device names counted by its id, then the answer's rows, the most
 * frequent first and ties in word order (ids run in word order), and only those words' text read: over a chunked
 * index, the word list's chunks that hold them, not the whole list.
 */
async function deviceNameCount(ctx: Ctx, set: DocSet, exact: boolean, budget: Budget, limit: number): Promise<CountResult> {
  if (exact) throw new BadQuery('count=device_name.exact is not available: the index holds the words of device names, not whole names; count=device_name counts the words');
  const { index } = ctx;
  const counts = new Uint32Array(index.terms.length);
  const { offsets, values } = index.docTerms;
  await eachDocSliced(set, budget, (d) => {
    const hi = offsets[d + 1]!;
    let i = offsets[d]!;
    const read = hi - i + 1;
    for (; i < hi; i++) counts[values[i]!]!++;
    return read;
  });
  budget.charge(counts.length);
  const counted: number[] = [];
  for (let t = 0; t < counts.length; t++) if (counts[t]! > 0) counted.push(t);
  // The sort of the counted words: a comparison an entry and level.
  budget.charge(counted.length * Math.max(1, Math.ceil(Math.log2(counted.length + 1))));
  counted.sort((a, b) => counts[b]! - counts[a]! || a - b);
  const shown = limit >= counted.length ? counted : counted.slice(0, limit);
  const words = await ctx.more({ prefixes: [], termIds: shown });
  return { kind: 'ranked', rows: shown.map((t) => termRowText(words.terms[t]!, counts[t]!)), total: counted.length };
}

// ---- K numbers and dates ----

function kNumberPlan(ctx: Ctx, leaf: Leaf, budget: Budget): Plan {
  const { index } = ctx;
  const N = index.docCount;
  const k = index.docKNumber;
  const rangePlan = (from: number, to: number): Plan => {
    // K numbers in [from, to]: one run of the K-number order.
    const by = index.byKNumber;
    const lo = partitionPoint(0, N, (i) => k[by[i]!]! < from);
    const hi = partitionPoint(lo, N, (i) => k[by[i]!]! <= to);
    const set = async (): Promise<DocSet> => {
      budget.charge(hi - lo);
      if (hi - lo <= listLimit(N)) return by.slice(lo, hi).sort();
      // Many: straight into a bitmap, which needs no sort.
      const bits = new Bits(N);
      for (let i = lo; i < hi; i++) bits.add(by[i]!);
      return bits;
    };
    return { size: Math.max(0, hi - lo), set, test: (d) => k[d]! >= from && k[d]! <= to };
  };
  const digits = (v: string): string | null => {
    const m = /^[Kk]?(\d{1,6})$/.exec(v.trim());
    return m ? m[1]! : null;
  };
  switch (leaf.type) {
    case 'exists':
      return leaf.missing ? NONE : allPlan(N, budget);
    case 'range': {
      const lo = leaf.lo === null ? '0' : digits(leaf.lo);
      const hi = leaf.hi === null ? '999999' : digits(leaf.hi);
      if (lo === null || hi === null) throw new BadQuery('search: k_number ranges take K numbers, K followed by six digits (k_number:[K100000 TO K199999])');
      return rangePlan(Number(lo) + (leaf.loInclusive ? 0 : 1), Number(hi) - (leaf.hiInclusive ? 0 : 1));
    }
    default: {
      const d = digits(leaf.value);
      if (d === null) return NONE;
      if (leaf.type === 'term' && leaf.prefix) {
        const scale = 10 ** (6 - d.length);
        return rangePlan(Number(d) * scale, (Number(d) + 1) * scale - 1);
      }
      if (d.length !== 6) return NONE;
      return rangePlan(Number(d), Number(d));
    }
  }
}

/** `YYYYMMDD` or `YYYY-MM-DD` as a day number (src/contract/search-index.ts), or null. */
export function dayOf(value: string): number | null {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(value.trim());
  if (!m) return null;
  const iso = `${m[1]}-${m[2]}-${m[3]}`;
  const day = dayNumber(iso);
  return Number.isFinite(day) && isoOfDay(day) === iso ? day : null;
}

function dayRange(leaf: Leaf, field: string): { lo: number; hi: number } {
  const bad = (v: string) =>
    new BadQuery(`search: ${field} takes dates as YYYYMMDD or YYYY-MM-DD (${field}:[20200101 TO 20201231]); "${v}" is not one`);
  if (leaf.type === 'range') {
    let lo = -Infinity;
    let hi = Infinity;
    if (leaf.lo !== null) {
      const d = dayOf(leaf.lo);
      if (d === null) throw bad(leaf.lo);
      lo = leaf.loInclusive ? d : d + 1;
    }
    if (leaf.hi !== null) {
      const d = dayOf(leaf.hi);
      if (d === null) throw bad(leaf.hi);
      hi = leaf.hiInclusive ? d : d - 1;
    }
    return { lo, hi };
  }
  if (leaf.type === 'exists') return { lo: -Infinity, hi: Infinity };
  if (leaf.type === 'term' && leaf.prefix) throw new BadQuery(`search: ${field} takes a date or a range, not a wildcard`);
  const d = dayOf(leaf.value);
  if (d === null) throw bad(leaf.value);
  return { lo: d, hi: d };
}

function decisionDatePlan(ctx: Ctx, leaf: Leaf): Plan {
  const { index } = ctx;
  const N = index.docCount;
  const decided = index.docDecided;
  const dated = partitionPoint(0, N, (d) => decided[d]! !== 0);
  if (leaf.type === 'exists' && leaf.missing) return setPlan(rangeSet(dated, N, N));
  const r = dayRange(leaf, 'decision_date');
  // Ids run in decision-date order (newest first, undated last): a date range is one run of ids.
  const lo = partitionPoint(0, dated, (d) => decided[d]! > r.hi);
  const hi = partitionPoint(lo, dated, (d) => decided[d]! >= r.lo);
  return { size: hi - lo, set: async () => rangeSet(lo, hi, N), test: (d) => d >= lo && d < hi };
}

function receivedPlan(ctx: Ctx, leaf: Leaf, budget: Budget): Plan {
  const { index } = ctx;
  const received = index.docReceived;
  if (leaf.type === 'exists') return scanPlan(index.docCount, leaf.missing ? (d) => received[d] === 0 : (d) => received[d] !== 0, budget);
  const r = dayRange(leaf, 'date_received');
  return scanPlan(
    index.docCount,
    (d) => {
      const v = received[d]!;
      return v !== 0 && v >= r.lo && v <= r.hi;
    },
    budget,
  );
}

/**
 * A date column's days (src/search/days.ts, shared with search's day facets) with the JSON text that opens each day's
 * entry of a timeseries, made once per column; `allJson` is the answer to a count over every record.
 */
type DayJson = { table: DayTable; opens: string[]; allJson: { days: number; json: string } | null };

/** Documents of a day table's passes read between two checks of the turn, when the table is made. */
const DAY_TABLE_SLICE = 65_536;

async function dayJson(owner: object, key: string, col: Uint32Array, budget: Budget): Promise<DayJson> {
  // The table is made on the first date count after a switch (shared with search's day facets), in slices.
  const table = await runSliced(dayTableSteps(col, DAY_TABLE_SLICE), {
    pause: () => {
      budget.charge(DAY_TABLE_SLICE);
      return budget.turn();
    },
  });
  return once(owner, `days:${key}`, () => {
    return { table, opens: table.iso.map((iso) => `{"time":"${iso.replaceAll('-', '')}","count":`), allJson: null };
  });
}

function timeseries(days: DayJson, counts: Uint32Array): { days: number; json: string } {
  const parts: string[] = [];
  for (let r = 0; r < counts.length; r++) if (counts[r]! > 0) parts.push(`${days.opens[r]!}${counts[r]!}}`);
  return { days: parts.length, json: `[${parts.join(',')}]` };
}

/** Whether a set holds every document. */
const isAll = (set: DocSet, docCount: number): boolean => (set instanceof Bits ? set.count() : set.length) === docCount;

async function daysCount(owner: object, key: string, col: Uint32Array, set: DocSet, docCount: number, budget: Budget): Promise<CountResult> {
  const days = await dayJson(owner, key, col, budget);
  if (isAll(set, docCount)) {
    days.allJson ??= timeseries(days, days.table.all);
    return { kind: 'days', ...days.allJson };
  }
  const n = days.opens.length;
  const counts = new Uint32Array(n);
  const docDay = days.table.docDay;
  await eachDocSliced(set, budget, (d) => {
    const r = docDay[d]!;
    if (r < n) counts[r]!++;
    return 1;
  });
  budget.charge(n);
  return { kind: 'days', ...timeseries(days, counts) };
}

const dateKey = (col: (ctx: Ctx) => Uint32Array) => ({
  sortKey: (ctx: Ctx) => {
    const c = col(ctx);
    return (d: number) => (c[d] === 0 ? -1 : c[d]!);
  },
  keyText: (_: Ctx, key: number) => (key < 0 ? '' : isoOfDay(key).replaceAll('-', '')),
  keyOf: (_: Ctx, text: string) => {
    if (text === '') return -1;
    const d = dayOf(text);
    if (d === null) throw new BadQuery(`search_after: "${text}" is not a date (YYYYMMDD)`);
    return d;
  },
});

// ---- the table ----

const PANEL: SearchSectionName[] = ['docPanel', 'panels'];
const CODE_LEVEL: SearchSectionName[] = ['docCode', 'codes'];

export const FIELDS_510K: Record<string, FieldDef> = {
  k_number: {
    kind: 'text',
    needs: ['docKNumber'],
    leaf: (ctx, leaf, _exact, budget) => kNumberPlan(ctx, leaf, budget),
    // One K number per record: a count would be every matching record's K number with a count of 1, a page of
    // records of any length rather than a count, so it is refused before any work (search with limit and
    // search_after lists K numbers a page at a time; /v1/export lists them all as a stream).
    uncountable:
      'count=k_number is not available: every record has a K number of its own, so each would be counted once; list K numbers with search (limit up to 1000, then search_after) or GET /v1/export',
    sortKey: (ctx) => (d) => ctx.index.docKNumber[d]!,
    keyText: (_, key) => kNumberText(key),
    keyOf: (_, text) => {
      const m = /^K(\d{6})$/i.exec(text);
      if (!m) throw new BadQuery(`search_after: "${text}" is not a K number`);
      return Number(m[1]);
    },
  },
  device_name: {
    kind: 'text',
    needs: ['terms', 'termDocOffsets', 'termDocs', 'docTermOffsets', 'docTermIds', 'docSeqOffsets', 'docSeq'],
    countNeeds: ['terms', 'docTermOffsets', 'docTermIds'],
    leaf: (ctx, leaf, exact, budget) => deviceNamePlan(ctx, leaf, exact, budget),
    count: deviceNameCount,
  },
  applicant: dictField('text', ['docApplicant', 'applicants', 'applicantsByKey', 'terms', 'termApplicantOffsets', 'termApplicants'], applicantDict, 'applicant', true),
  product_code: dictField('keyword', ['docCode', 'codes'], codeDict, 'product_code', true),
  decision_code: dictField('keyword', ['docDecision', 'decisions'], (ctx) => once(ctx.index, 'decision', () => columnDict(ctx.index, ctx.index.decisions, ctx.index.docDecision, NO_SMALL)), 'decision_code', true),
  clearance_type: dictField('text', ['docType', 'types'], (ctx) => once(ctx.index, 'type', () => columnDict(ctx.index, ctx.index.types, ctx.index.docType, NO_SMALL)), 'clearance_type', true),
  review_advisory_committee: dictField('keyword', PANEL, (ctx) => once(ctx.index, 'panel', () => columnDict(ctx.index, ctx.index.panels.map((p) => committeeCode(p) ?? ''), ctx.index.docPanel, NO_SMALL)), 'review_advisory_committee'),
  country_code: dictField('keyword', ['docCountry', 'countries'], (ctx) => once(ctx.index, 'country', () => columnDict(ctx.index, ctx.index.countries, ctx.index.docCountry, NO_CODE)), 'country_code', true),
  state: dictField('text', ['docState', 'states'], (ctx) => once(ctx.index, 'state', () => columnDict(ctx.index, ctx.index.states, ctx.index.docState, NO_CODE)), 'state', true),
  third_party_flag: dictField('keyword', ['docFlags'], (ctx) => flagDict(ctx, 0, 'N', 'Y'), 'third_party_flag'),
  expedited_review_flag: dictField('text', ['docFlags'], (ctx) => flagDict(ctx, 2, 'N', 'Y'), 'expedited_review_flag'),
  statement_or_summary: dictField('text', ['docFlags'], (ctx) => flagDict(ctx, 4, 'Statement', 'Summary'), 'statement_or_summary'),
  decision_date: {
    kind: 'date',
    needs: ['docDecided'],
    leaf: (ctx, leaf) => decisionDatePlan(ctx, leaf),
    count: (ctx, set, _exact, budget) => daysCount(ctx.index, 'decided', ctx.index.docDecided, set, ctx.index.docCount, budget),
    ...dateKey((ctx) => ctx.index.docDecided),
  },
  date_received: {
    kind: 'date',
    needs: ['docReceived'],
    leaf: (ctx, leaf, _exact, budget) => receivedPlan(ctx, leaf, budget),
    count: (ctx, set, _exact, budget) => daysCount(ctx.index, 'received', ctx.index.docReceived, set, ctx.index.docCount, budget),
    ...dateKey((ctx) => ctx.index.docReceived),
  },
  'openfda.device_class': dictField('keyword', [...CODE_LEVEL, 'codeClass', 'classes'], (ctx) =>
    codeLevelDict(ctx, 'class', (_, i) => {
      const c = ctx.index.codeClass[i]!;
      return c === NO_SMALL ? null : ctx.index.classes[c]!;
    }), 'openfda.device_class'),
  'openfda.device_name': dictField('text', [...CODE_LEVEL, 'codeTypes'], (ctx) => codeLevelDict(ctx, 'type', (_, i) => ctx.index.codeTypes[i] ?? null), 'openfda.device_name'),
  // The values the records' `openfda` block shows (record.ts), so that a search agrees with what it returns.
  'openfda.regulation_number': dictField('text', CODE_LEVEL, (ctx) => codeLevelDict(ctx, 'regulation', (code) => openfdaBlock(ctx.catalog.byCode.get(code)).regulation_number ?? null), 'openfda.regulation_number'),
  'openfda.medical_specialty_description': dictField('text', CODE_LEVEL, (ctx) =>
    codeLevelDict(ctx, 'specialty', (code) => openfdaBlock(ctx.catalog.byCode.get(code)).medical_specialty_description ?? null), 'openfda.medical_specialty_description'),
};

/** Terms without a field are looked for in these (any may match). */
export const DEFAULT_FIELDS_510K = ['device_name', 'applicant', 'openfda.device_name', 'k_number', 'product_code'];

export function fieldDef(ref: FieldRef, use: string): FieldDef {
  const def = Object.hasOwn(FIELDS_510K, ref.name) ? FIELDS_510K[ref.name] : undefined;
  if (def) {
    if (ref.exact && def.kind === 'date') throw new BadQuery(`${use}: ${ref.name} is a date; it has no .exact`);
    return def;
  }
  if (UNINDEXED.includes(ref.name)) {
    throw new BadQuery(`${use}: ${ref.name} is returned in every record but is not in this service's search index, so it cannot be searched, counted or sorted on`);
  }
  if (ABSENT.includes(ref.name)) throw new BadQuery(`${use}: ${ref.name} is not in this service's data (FDA's 510(k) and classification files do not carry it)`);
  throw new BadQuery(`${use}: ${ref.name} is not a field of /device/510k.json; the fields are ${[...Object.keys(FIELDS_510K), ...UNINDEXED].join(', ')}`);
}

/** The planner's view of the 510(k) fields over one index. */
export function fields510k(ctx: Ctx): Fields {
  return {
    docCount: ctx.index.docCount,
    defaultFields: DEFAULT_FIELDS_510K,
    leaf: (leaf, budget) => fieldDef(leaf.field, 'search').leaf(ctx, leaf, leaf.field.exact, budget),
  };
}

/** The index sections a request reads: every field it names (for the counted field, what its count reads), plus what every answer reads. */
export function sectionsFor510k(refs: readonly FieldRef[], unfielded: boolean, count: FieldRef | null = null): Set<SearchSectionName> {
  const out = new Set<SearchSectionName>(SECTIONS_BASE);
  const add = (name: string, counted = false) => {
    const def = Object.hasOwn(FIELDS_510K, name) ? FIELDS_510K[name] : undefined;
    for (const n of (counted ? def?.countNeeds : undefined) ?? def?.needs ?? []) out.add(n);
  };
  for (const r of refs) add(r.name);
  if (count) add(count.name, true);
  if (unfielded) for (const f of DEFAULT_FIELDS_510K) add(f);
  return out;
}

export { normal };
