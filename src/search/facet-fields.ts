import { ColumnMemo } from './column-memo.ts';
import { FACET_VALUES_MAX, type FACET_FIELDS } from '../contract/operations.ts';
import { ANY_EDGE_KIND, MAX_YEAR, NO_SMALL } from '../contract/search-index.ts';
import { lineageNumber } from '../contract/lineage.ts';
import { countPredicatesSteps } from './predicates.ts';
import { dayTableOf, dayTableSteps } from './days.ts';
import type { ListOrRange } from './docset.ts';
import { topIds } from './facets.ts';
import type { SearchIndex } from './model.ts';
import { runSteps, slicesOf, type Steps } from './slices.ts';

export { FACET_FIELDS } from '../contract/operations.ts';
export type FacetField = (typeof FACET_FIELDS)[number];

export type FacetRequest = { field: FacetField; size: number | null; order: 'count' | 'value' };
export type FacetValueOut = { value: string | number | boolean; count: number; label?: string };
export type FacetOut = { field: FacetField; values: FacetValueOut[] };

/**
 * One field: the column counted over the matches (a tight pass, in slices), `fold` turning its counts per stored
 * value into counts per shown id, and what each id shows. Ids are dictionary indexes (value order), years, ranks of
 * days (time order), or 0/1 for false/true.
 */
type Column = {
  col: Values;
  size: number;
  fold?: (counts: Uint32Array) => Uint32Array;
  value: (id: number) => string | number | boolean;
  label?: (id: number) => string | undefined;
};

type Values = Uint8Array | Uint16Array | Uint32Array;

/**
 * A facet that would list more values than an answer may carry (`FACET_VALUES_MAX`, or the host's own bound): the
 * whole search is refused, as the same request always would be, before any value is made. `message` reads after the
 * facet's `size` path (`input.facets[3].size …`).
 */
export class FacetValuesError extends Error {
  override name = 'FacetValuesError';
  constructor(
    /** The facet's place in the request's `facets`. */
    readonly position: number,
    readonly field: FacetField,
    /** The values it would list: its `size`, or the matches' distinct values when fewer (or `size` null). */
    readonly values: number,
    readonly max: number,
  ) {
    super(
      `would list ${n(values)} values of "${field}"; one answer lists at most ${n(max)} values of a facet: ask for a size from 1 to ${n(max)} (order "count" lists the most frequent first)`,
    );
  }
}

const n = (x: number): string => x.toLocaleString('en-US');

/** Values of a field made between two yield points. */
const SLICE_VALUES = 2_000;

/** How many matches have each value below `size` of a column (a column's "none" is at or past `size`). */
export function countColumn(col: Values, docs: ListOrRange, size: number): Uint32Array {
  return countInto(col, docs, new Uint32Array(size));
}

/** Adds the matches' values below `counts.length` of a column to `counts`. */
function countInto(col: Values, docs: ListOrRange, counts: Uint32Array): Uint32Array {
  // One kernel per column type, each kept monomorphic for the optimizer.
  if (col instanceof Uint8Array) count8(col, docs, counts);
  else if (col instanceof Uint16Array) count16(col, docs, counts);
  else count32(col, docs, counts);
  return counts;
}

function count8(col: Uint8Array, docs: ListOrRange, counts: Uint32Array): void {
  const size = counts.length;
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i++) {
      const v = col[docs[i]!]!;
      if (v < size) counts[v]!++;
    }
  } else {
    for (let d = docs.lo; d < docs.hi; d++) {
      const v = col[d]!;
      if (v < size) counts[v]!++;
    }
  }
}
function count16(col: Uint16Array, docs: ListOrRange, counts: Uint32Array): void {
  const size = counts.length;
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i++) {
      const v = col[docs[i]!]!;
      if (v < size) counts[v]!++;
    }
  } else {
    for (let d = docs.lo; d < docs.hi; d++) {
      const v = col[d]!;
      if (v < size) counts[v]!++;
    }
  }
}
function count32(col: Uint32Array, docs: ListOrRange, counts: Uint32Array): void {
  const size = counts.length;
  if (docs instanceof Uint32Array) {
    for (let i = 0; i < docs.length; i++) {
      const v = col[docs[i]!]!;
      if (v < size) counts[v]!++;
    }
  } else {
    for (let d = docs.lo; d < docs.hi; d++) {
      const v = col[d]!;
      if (v < size) counts[v]!++;
    }
  }
}

const receivedYears = new ColumnMemo<Uint16Array>((years) => years.byteLength);

/** Receipt years, derived once per index (0 for no date). */
function receivedYearOf(index: SearchIndex): Uint16Array {
  return runSteps(receivedYearSteps(index, Infinity));
}

/** `receivedYearOf` with a yield point every `sliceDocs` documents of each of its passes (slices.ts). */
function* receivedYearSteps(index: SearchIndex, sliceDocs: number): Steps<Uint16Array> {
  const made = receivedYears.get([index.docReceived]);
  if (made) return made;
  let max = 0;
  for (let d = 0; d < index.docCount; d++) {
    if (d > 0 && d % sliceDocs === 0) yield;
    max = Math.max(max, index.docReceived[d]!);
  }
  const yearOfDay = new Uint16Array(max + 1);
  for (let day = 1; day <= max; day++) yearOfDay[day] = new Date((day - 25_568) * 86_400_000).getUTCFullYear();
  yield;
  const years = new Uint16Array(index.docCount);
  for (let d = 0; d < index.docCount; d++) {
    if (d > 0 && d % sliceDocs === 0) yield;
    years[d] = yearOfDay[index.docReceived[d]!]!;
  }
  // Another request may have made them meanwhile: the first made are the ones kept.
  const kept = receivedYears.get([index.docReceived]) ?? receivedYears.set([index.docReceived], years);
  return kept;
}

/**
 * What a field's column is derived from, made now (in slices) when it is not made yet: receipt years and the day
 * tables are made on first use, once per index, each a few passes over every document.
 */
function* deriveColumnSteps(index: SearchIndex, field: FacetField, sliceDocs: number): Steps<void> {
  if (field === 'receivedYear') yield* receivedYearSteps(index, sliceDocs);
  else if (field === 'decisionDate') yield* dayTableSteps(index.docDecided, sliceDocs);
  else if (field === 'receivedDate') yield* dayTableSteps(index.docReceived, sliceDocs);
}

/** Every field but `predicate`, which counts a document once under each device it names (src/search/predicates.ts). */
type ColumnField = Exclude<FacetField, 'predicate'>;

function columnOf(index: SearchIndex, field: ColumnField): Column {
  const dictionary = (col: Values, values: readonly string[], label?: (id: number) => string | undefined): Column => ({
    col,
    size: values.length,
    value: (id) => values[id]!,
    label,
  });
  // The flags byte's 256 values counted, then folded into no (id 0) and yes (id 1).
  const flag = (shift: number, yes: string | boolean, no: string | boolean): Column => ({
    col: index.docFlags,
    size: 256,
    fold: (bytes) => {
      const counts = new Uint32Array(2);
      for (let b = 0; b < 256; b++) {
        const v = (b >> shift) & 3;
        if (v !== 0) counts[v - 1]! += bytes[b]!;
      }
      return counts;
    },
    value: (id) => (id === 1 ? yes : no),
  });
  const years = (col: Uint16Array): Column => ({
    col,
    size: MAX_YEAR + 1,
    fold: (counts) => {
      const dated = counts.slice();
      dated[0] = 0; // no date
      return dated;
    },
    value: (y) => y,
  });
  // A day's id is its rank among the column's days (days.ts), so ids ascend in time; no date is past every rank.
  const days = (col: Uint32Array): Column => {
    const table = dayTableOf(col);
    return { col: table.docDay, size: table.iso.length, value: (id) => table.iso[id]! };
  };
  switch (field) {
    case 'productCode':
      return dictionary(index.docCode, index.codes, (id) => index.codeTypes[id] || undefined);
    case 'applicant':
      return dictionary(index.docApplicant, index.applicants);
    case 'decisionYear':
      return years(index.docYear);
    case 'receivedYear':
      return years(receivedYearOf(index));
    case 'decisionDate':
      return days(index.docDecided);
    case 'receivedDate':
      return days(index.docReceived);
    case 'advisoryCommittee':
      return dictionary(index.docPanel, index.panels);
    case 'deviceClass':
      // Product codes counted, then folded into their classes.
      return {
        col: index.docCode,
        size: index.codes.length,
        fold: (codes) => {
          const counts = new Uint32Array(index.classes.length);
          for (let c = 0; c < codes.length; c++) {
            const k = index.codeClass[c]!;
            if (k !== NO_SMALL && codes[c]! > 0) counts[k]! += codes[c]!;
          }
          return counts;
        },
        value: (id) => index.classes[id]!,
      };
    case 'decisionCode':
      return dictionary(index.docDecision, index.decisions, (id) => index.decisionNames[id]);
    case 'submissionType':
      return dictionary(index.docType, index.types);
    case 'thirdParty':
      return flag(0, true, false);
    case 'expeditedReview':
      return flag(2, true, false);
    case 'statementOrSummary':
      return flag(4, 'Summary', 'Statement');
    case 'countryCode':
      return dictionary(index.docCountry, index.countries);
    case 'state':
      return dictionary(index.docState, index.states);
  }
}

/**
 * Exact counts of each requested field over every match. `order: "count"` lists count descending then value
 * ascending; `order: "value"` lists values ascending (years as numbers, days in time order). Dictionary ids are in
 * value order, so "value ascending" is "id ascending" for every field. `size` null lists every value.
 */
export function countFacetFields(index: SearchIndex, docs: ListOrRange, requests: readonly FacetRequest[], edgeKinds: number = ANY_EDGE_KIND, maxValues: number = FACET_VALUES_MAX): FacetOut[] {
  return runSteps(countFacetFieldsSteps(index, docs, requests, Infinity, edgeKinds, maxValues));
}

/**
 * `countFacetFields` with a yield point every `sliceDocs` documents counted and after each field (slices.ts).
 * `edgeKinds`: the edge kinds the `predicate` facet counts (the query's `kind:`, else all). Every field is counted and
 * checked against `maxValues` before any value is made: a facet over the bound throws FacetValuesError, so a refused
 * request never holds the values of a large field in memory.
 */
export function* countFacetFieldsSteps(
  index: SearchIndex,
  docs: ListOrRange,
  requests: readonly FacetRequest[],
  sliceDocs: number,
  edgeKinds: number = ANY_EDGE_KIND,
  maxValues: number = FACET_VALUES_MAX,
): Steps<FacetOut[]> {
  const counts: { counts: Uint32Array; column: Pick<Column, 'value' | 'label'> }[] = new Array(requests.length);
  // Fields that count the same column (the three flags, product codes and device classes) count it once; folds
  // never write into what they are given.
  const counted = new Map<Values, Uint32Array>();
  // The facets that may list more than the bound are counted first, in the order asked, so that a refused request
  // counts no other field; the first of them over the bound is the one named, whatever the order.
  const positions = [...requests.keys()];
  const may = positions.map((p) => mayExceed(index, requests[p]!, maxValues));
  for (const position of [...positions.filter((p) => may[p]), ...positions.filter((p) => !may[p])]) {
    const req = requests[position]!;
    let field: Uint32Array;
    let column: Pick<Column, 'value' | 'label'>;
    if (req.field === 'predicate') {
      field = yield* countPredicatesSteps(index, docs, edgeKinds, sliceDocs);
      // Ids are indexes into predCodes, ascending by number: value order is id order here too.
      column = { value: (id) => lineageNumber(index.predCodes[id]!) };
    } else {
      yield* deriveColumnSteps(index, req.field, sliceDocs);
      const c = columnOf(index, req.field);
      let stored = counted.get(c.col);
      if (stored === undefined || stored.length !== c.size) {
        stored = new Uint32Array(c.size);
        for (const slice of slicesOf(docs, sliceDocs)) {
          countInto(c.col, slice, stored);
          yield;
        }
        counted.set(c.col, stored);
      }
      field = c.fold ? c.fold(stored) : stored;
      column = c;
    }
    const listed = Math.min(req.size ?? Infinity, valuesCounted(field));
    if (listed > maxValues) throw new FacetValuesError(position, req.field, listed, maxValues);
    counts[position] = { counts: field, column };
    yield;
  }
  const out: FacetOut[] = [];
  for (const [position, req] of requests.entries()) {
    const { counts: field, column } = counts[position]!;
    out.push({ field: req.field, values: yield* facetValuesSteps(field, column, req) });
    yield;
  }
  return out;
}

/**
 * Whether a facet could list more than `max` values: its size allows it, and its field has more values than that in
 * the whole index (the day fields' count is known only once their table is made: they may).
 */
function mayExceed(index: SearchIndex, req: FacetRequest, max: number): boolean {
  if (req.size !== null && req.size <= max) return false;
  if (req.field === 'predicate') return index.predCodes.length > max;
  if (req.field === 'decisionDate' || req.field === 'receivedDate' || req.field === 'receivedYear') return true;
  const c = columnOf(index, req.field);
  return (c.fold ? c.fold(new Uint32Array(c.size)).length : c.size) > max;
}

/** How many ids have a count (the values a facet of `size` null lists). */
function valuesCounted(counts: Uint32Array): number {
  let n = 0;
  for (let id = 0; id < counts.length; id++) if (counts[id]! > 0) n++;
  return n;
}

/** A field's values, ordered and cut as the request says. */
function* facetValuesSteps(counts: Uint32Array, column: Pick<Column, 'value' | 'label'>, req: FacetRequest): Steps<FacetValueOut[]> {
  const size = req.size ?? counts.length;
  let ids: Uint32Array;
  if (req.order === 'count') ids = topIds(counts, size);
  else {
    let n = 0;
    for (let id = 0; id < counts.length && n < size; id++) if (counts[id]! > 0) n++;
    ids = new Uint32Array(n);
    n = 0;
    for (let id = 0; id < counts.length && n < ids.length; id++) if (counts[id]! > 0) ids[n++] = id;
  }
  // Made a slice of values at a time: every value of a large field (days, applicants) is an object of its own.
  const values: FacetValueOut[] = new Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    if (i > 0 && i % SLICE_VALUES === 0) yield;
    const id = ids[i]!;
    const count = counts[id]!;
    const label = column.label?.(id);
    values[i] = label === undefined ? { value: column.value(id), count } : { value: column.value(id), count, label };
  }
  return values;
}
