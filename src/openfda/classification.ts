import type { ProductCodeEntry } from '../contract/classification.ts';
import { sectionIndexOf } from '../search/snapshot-index.ts';
import { findCode } from '../search/model.ts';
import { kNumberText } from '../search/k-number.ts';
import type { Snapshot } from '../snapshot/snapshot.ts';
import { catalogOf, type Catalog } from './catalog.ts';
import { dictPlan, dictTerms, type Dict } from './dict.ts';
import type { Budget } from '../search/budget.ts';
import { Bits, countOf, type DocSet } from '../search/docset.ts';
import { fieldsOf, type FieldRef, type Node } from './lucene.ts';
import { pageOf, type Order } from '../search/page.ts';
import type { OpenFdaParams } from './params.ts';
import { BadQuery, evaluate, planOf, type Fields } from './plan.ts';
import { toOpenFdaClassification } from './record.ts';
import { countBody, fieldRefOf, metaOf, notFound, OpenFdaError, partsOf, type OpenFdaParts } from './envelope.ts';

/**
 * /device/classification.json: the product-code catalog (a few thousand entries, held once per snapshot) in
 * openFDA's classification shape. Its fields are dictionaries of the entries' openFDA values, so a clause is a
 * mask over a field's distinct values and one pass over the entries, with the same planner and the same rules as
 * the 510(k) endpoint. The default order is the product code's.
 */
const TEXT = ['device_name', 'definition', 'medical_specialty_description', 'regulation_number'];
const KEYWORD = [
  'product_code', 'device_class', 'medical_specialty', 'review_panel', 'gmp_exempt_flag', 'implant_flag',
  'life_sustain_support_flag', 'third_party_flag', 'submission_type_id', 'unclassified_reason', 'review_code',
  'summary_malfunction_reporting', 'physical_state', 'technical_method', 'target_area',
];
export const CLASSIFICATION_FIELDS = [...TEXT, ...KEYWORD];

type Table = { rows: Record<string, unknown>[]; dicts: Map<string, Dict> };
const tables = new WeakMap<Catalog, Table>();

function tableOf(catalog: Catalog): Table {
  let t = tables.get(catalog);
  if (t) return t;
  const rows = catalog.entries.map((e) => toOpenFdaClassification(e, []));
  const dicts = new Map<string, Dict>();
  for (const name of CLASSIFICATION_FIELDS) {
    const perRow = rows.map((r) => r[name] as string);
    const values = [...new Set(perRow.filter((v) => v !== ''))].sort();
    const id = new Map(values.map((v, i) => [v, i]));
    const col = Int32Array.from(perRow, (v) => (v === '' ? -1 : id.get(v)!));
    const N = rows.length;
    dicts.set(name, {
      values,
      entryOf: (d) => col[d]!,
      docsOf: (mask) => {
        const bits = new Bits(N);
        for (let d = 0; d < N; d++) if (col[d]! >= 0 && mask[col[d]!] === 1) bits.add(d);
        return bits;
      },
      sizeOf: () => N,
    });
  }
  tables.set(catalog, (t = { rows, dicts }));
  return t;
}

function dictOf(table: Table, ref: FieldRef, use: string): Dict {
  const d = table.dicts.get(ref.name);
  if (d) return d;
  if (ref.name.startsWith('openfda.')) throw new BadQuery(`${use}: ${ref.name} cannot be searched here; the records carry openfda.k_number`);
  throw new BadQuery(`${use}: ${ref.name} is not a field of /device/classification.json; the fields are ${CLASSIFICATION_FIELDS.join(', ')}`);
}

export async function classificationAnswer(snapshot: Snapshot, params: OpenFdaParams, tree: Node, budget: Budget): Promise<OpenFdaParts> {
  const catalog = await catalogOf(snapshot);
  const table = tableOf(catalog);
  for (const r of fieldsOf(tree)) dictOf(table, r, 'search');
  const N = table.rows.length;
  const fields: Fields = {
    docCount: N,
    defaultFields: ['device_name', 'product_code', 'definition'],
    leaf: (leaf, budget) => dictPlan(dictOf(table, leaf.field, 'search'), leaf, { text: TEXT.includes(leaf.field.name), exact: leaf.field.exact, field: leaf.field.name }, budget, N),
  };
  const set: DocSet = await evaluate(await planOf(tree, fields, budget), N, budget);
  const total = countOf(set);
  if (total === 0) throw notFound();
  if (params.count) {
    const ref = fieldRefOf(params.count);
    const dict = dictOf(table, ref, 'count');
    return countBody(snapshot, { kind: 'terms', counts: await dictTerms(dict, set, TEXT.includes(ref.name) && !ref.exact, budget) }, params.limit, budget);
  }
  if (params.searchAfter !== null) throw new BadQuery('search_after is not supported on /device/classification.json; page with skip, which has no ceiling here');
  let order: Order = { kNumber: Uint32Array.from({ length: N }, (_, i) => i), decided: new Uint32Array(N), sort: null };
  if (params.sort) {
    const ref = fieldRefOf(params.sort.field);
    const dict = dictOf(table, ref, 'sort');
    if (TEXT.includes(ref.name) && !ref.exact) throw new BadQuery(`Sorting allowed by non-analyzed fields only: ${params.sort.field}; sort by ${ref.name}.exact`);
    order = { ...order, sort: { key: dict.entryOf, descending: params.sort.descending, keyText: () => '', keyOf: () => 0 } };
  }
  const page = await pageOf(set, total, order, params.skip, params.limit, null, budget);
  if (page.length === 0 && params.limit > 0) throw notFound();
  const codes = page.map((d) => catalog.entries[d]!);
  const results = await withKNumbers(snapshot, codes);
  const next = page.length > 0 && params.skip + page.length < total ? { set: { skip: String(params.skip + params.limit) }, drop: [] } : null;
  const meta = { ...metaOf(snapshot), results: { skip: params.skip, limit: params.limit, total } };
  return partsOf(meta, JSON.stringify(results), next);
}

/** Each entry with the K numbers of its 510(k)s (openFDA's `openfda.k_number`), ascending. */
async function withKNumbers(snapshot: Snapshot, entries: ProductCodeEntry[]): Promise<Record<string, unknown>[]> {
  const held = await sectionIndexOf(snapshot, new Set(['docKNumber', 'docCode', 'codes'] as const), { prefixes: [] });
  if ('unavailable' in held) throw new OpenFdaError(503, 'SERVICE_UNAVAILABLE', held.unavailable);
  const index = held.index;
  try {
    return entries.map((e) => {
      const c = findCode(index, e.productCode);
      const ks: number[] = [];
      if (c !== null) for (let i = index.codeDocs.offsets[c]!; i < index.codeDocs.offsets[c + 1]!; i++) ks.push(index.docKNumber[index.codeDocs.values[i]!]!);
      return toOpenFdaClassification(e, ks.sort((a, b) => a - b).map(kNumberText));
    });
  } finally {
    held.release();
  }
}
