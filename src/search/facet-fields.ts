import type { FACET_FIELDS } from '../contract/operations.ts';
import { MAX_YEAR, NO_APPLICANT, NO_CODE, NO_SMALL } from '../contract/search-index.ts';
import type { DocSet } from './facets.ts';
import { topCounts } from './facets.ts';
import type { SearchIndex } from './model.ts';

export { FACET_FIELDS } from '../contract/operations.ts';
export type FacetField = (typeof FACET_FIELDS)[number];

export type FacetRequest = { field: FacetField; size: number | null; order: 'count' | 'value' };
export type FacetValueOut = { value: string | number | boolean; count: number; label?: string };
export type FacetOut = { field: FacetField; values: FacetValueOut[] };

/** One field as a column of small ids, how many ids there are, and what each id shows. */
type Column = { size: number; id: (d: number) => number; value: (id: number) => string | number | boolean; label?: (id: number) => string | undefined };

const receivedYears = new WeakMap<SearchIndex, Uint16Array>();

/** Receipt years, derived once per index (0 for no date). */
function receivedYearOf(index: SearchIndex): Uint16Array {
  let years = receivedYears.get(index);
  if (years) return years;
  let max = 0;
  for (let d = 0; d < index.docCount; d++) max = Math.max(max, index.docReceived[d]!);
  const yearOfDay = new Uint16Array(max + 1);
  for (let day = 1; day <= max; day++) yearOfDay[day] = new Date((day - 25_568) * 86_400_000).getUTCFullYear();
  years = new Uint16Array(index.docCount);
  for (let d = 0; d < index.docCount; d++) years[d] = yearOfDay[index.docReceived[d]!]!;
  receivedYears.set(index, years);
  return years;
}

function columnOf(index: SearchIndex, field: FacetField): Column {
  const dictionary = (col: ArrayLike<number>, values: readonly string[], none: number, label?: (id: number) => string | undefined): Column => ({
    size: values.length,
    id: (d) => (col[d] === none ? -1 : col[d]!),
    value: (id) => values[id]!,
    label,
  });
  const flag = (shift: number, yes: string | boolean, no: string | boolean): Column => ({
    size: 2,
    id: (d) => ((index.docFlags[d]! >> shift) & 3) - 1,
    value: (id) => (id === 1 ? yes : no),
  });
  const years = (col: ArrayLike<number>): Column => ({ size: MAX_YEAR + 1, id: (d) => (col[d] === 0 ? -1 : col[d]!), value: (y) => y });
  switch (field) {
    case 'productCode':
      return dictionary(index.docCode, index.codes, NO_CODE, (id) => index.codeTypes[id] || undefined);
    case 'applicant':
      return dictionary(index.docApplicant, index.applicants, NO_APPLICANT);
    case 'decisionYear':
      return years(index.docYear);
    case 'receivedYear':
      return years(receivedYearOf(index));
    case 'advisoryCommittee':
      return dictionary(index.docPanel, index.panels, NO_SMALL);
    case 'deviceClass':
      return {
        size: index.classes.length,
        id: (d) => {
          const c = index.docCode[d]!;
          if (c === NO_CODE) return -1;
          const k = index.codeClass[c]!;
          return k === NO_SMALL ? -1 : k;
        },
        value: (id) => index.classes[id]!,
      };
    case 'decisionCode':
      return dictionary(index.docDecision, index.decisions, NO_SMALL, (id) => index.decisionNames[id]);
    case 'submissionType':
      return dictionary(index.docType, index.types, NO_SMALL);
    case 'thirdParty':
      return flag(0, true, false);
    case 'expeditedReview':
      return flag(2, true, false);
    case 'statementOrSummary':
      return flag(4, 'Summary', 'Statement');
    case 'countryCode':
      return dictionary(index.docCountry, index.countries, NO_CODE);
    case 'state':
      return dictionary(index.docState, index.states, NO_CODE);
  }
}

/**
 * Exact counts of each requested field over every match. `order: "count"` lists count descending then value
 * ascending; `order: "value"` lists values ascending (years as numbers). Dictionary ids are in value order, so
 * "value ascending" is "id ascending" for every field. `size` null lists every value.
 */
export function countFacetFields(
  index: SearchIndex,
  docs: DocSet,
  requests: readonly FacetRequest[],
): FacetOut[] {
  return requests.map((req) => {
    const column = columnOf(index, req.field);
    const counts = new Uint32Array(column.size);
    const add = (d: number) => {
      const id = column.id(d);
      if (id >= 0) counts[id]!++;
    };
    if (docs instanceof Uint32Array) for (let i = 0; i < docs.length; i++) add(docs[i]!);
    else for (let d = docs.lo; d < docs.hi; d++) add(d);
    const size = req.size ?? column.size;
    let picked: [number, number][];
    if (req.order === 'count') picked = topCounts(counts, size);
    else {
      picked = [];
      for (let id = 0; id < counts.length && picked.length < size; id++) if (counts[id]! > 0) picked.push([id, counts[id]!]);
    }
    return {
      field: req.field,
      values: picked.map(([id, count]) => {
        const label = column.label?.(id);
        return label === undefined ? { value: column.value(id), count } : { value: column.value(id), count, label };
      }),
    };
  });
}
