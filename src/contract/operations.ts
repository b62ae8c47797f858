import { z } from 'zod';
import { DeviceNumberInput, EDGE_KINDS, LINEAGE_DIRECTIONS, MAX_LINEAGE_DEPTH, MAX_LINEAGE_LIMIT } from './lineage.ts';

/** Input schemas of the six operations (spec "Endpoints" and docs/contract.md section 3). */

const codePoints = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

const int = (min: number, max?: number) => {
  let schema = z.int({
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be an integer'),
  });
  schema = schema.min(min, { error: `must be at least ${min}` });
  if (max !== undefined) schema = schema.max(max, { error: `must be at most ${max}` });
  return schema;
};

const required = (what: string) => ({
  error: (issue: { input: unknown }) => (issue.input === undefined ? 'is required' : `must be ${what}`),
});

/** Three ASCII letters, case-insensitive; normalized to upper case. */
export const ProductCodeInput = z
  .string(required('a string'))
  .regex(/^[A-Za-z]{3}$/, { error: 'must be three letters' })
  .transform((s) => s.toUpperCase());

/** K followed by six digits, case-insensitive, surrounding spaces ignored. */
export const KNumberInput = z
  .string(required('a string'))
  .regex(/^\s*[Kk]\d{6}\s*$/, { error: 'must be K followed by six digits' })
  .transform((s) => s.trim().toUpperCase());

const Year = int(1900, 9999).nullable();

/** The orders `search.sort` accepts (docs/search.md, "Sorts"); `relevance` is the order without it. */
export const SORTS = ['relevance', 'decisionDate:desc', 'decisionDate:asc', 'receivedDate:desc', 'reviewDays:desc', 'kNumber:asc'] as const;
export const SortInput = z.enum(SORTS, { error: `must be one of ${SORTS.map((s) => `"${s}"`).join(', ')}` });

/**
 * Every field `search.facets` can count, by its record member's name (receivedYear: the year of receivedDate;
 * decisionDate and receivedDate: the day, as the record writes it; predicate: the devices the matches name, a match
 * counting once under each device it names).
 */
export const FACET_FIELDS = [
  'productCode',
  'applicant',
  'decisionYear',
  'receivedYear',
  'decisionDate',
  'receivedDate',
  'advisoryCommittee',
  'deviceClass',
  'decisionCode',
  'submissionType',
  'thirdParty',
  'expeditedReview',
  'statementOrSummary',
  'countryCode',
  'state',
  'predicate',
] as const;
export const FacetField = z.enum(FACET_FIELDS, { error: `must be one of ${FACET_FIELDS.map((f) => `"${f}"`).join(', ')}` });
export const MAX_FACET_SIZE = 100_000;
/**
 * The values one facet of a search answer may list (docs/limits.md): a facet whose `size` (null: every value) would
 * list more of the matches' values is refused, so that no answer grows with the data. A host may set it lower.
 */
export const FACET_VALUES_MAX = 50_000;

/** A field to count, how many values (null: all of them; 10 when absent) and in which order (count when absent). */
export const FacetRequestInput = z
  .strictObject({
    field: FacetField,
    size: int(1, MAX_FACET_SIZE).nullable().optional(),
    order: z.enum(['count', 'value'], { error: 'must be "count" or "value"' }).optional(),
  })
  .transform((f) => ({ field: f.field, size: f.size === undefined ? 10 : f.size, order: f.order ?? 'count' }));

export const SearchInput = z
  .strictObject({
    // The grammar inside (docs/search.md) is checked where a query enters, once, and its parse kept for the engine
    // (src/operations/search-query.ts): the contract knows only that the query is text.
    query: z.string(required('a string')).refine((s) => codePoints(s) <= 2048, { error: 'must be at most 2048 characters' }),
    applicant: z
      .string(required('a string or null'))
      .transform((s) => s.trim())
      .refine((s) => s.length >= 1, { error: 'must not be empty' })
      .refine((s) => codePoints(s) <= 256, { error: 'must be at most 256 characters' })
      .nullable(),
    productCode: ProductCodeInput.nullable(),
    yearFrom: Year,
    yearTo: Year,
    page: int(1),
    pageSize: int(1, 50),
    // Extensions (docs/contract.md): absent means the contract's answer.
    sort: SortInput.optional(),
    facets: z
      .array(FacetRequestInput, required('a list of facet requests'))
      .min(1, { error: 'must name at least one field' })
      .max(FACET_FIELDS.length, { error: `must have at most ${FACET_FIELDS.length} entries` })
      .optional(),
    stats: z.boolean(required('true or false')).optional(),
    spelling: z.boolean(required('true or false')).optional(),
  })
  .superRefine((input, ctx) => {
    if (input.yearFrom !== null && input.yearTo !== null && input.yearTo < input.yearFrom) {
      ctx.addIssue({ code: 'custom', path: ['yearTo'], message: 'must not be before yearFrom' });
    }
    const fields = input.facets?.map((f) => f.field) ?? [];
    if (new Set(fields).size !== fields.length) ctx.addIssue({ code: 'custom', path: ['facets'], message: 'must name each field once' });
  });
export type SearchInput = z.output<typeof SearchInput>;

/**
 * GET /v1/export (docs/contract.md, "Export"): search's filters and sort, every match in the search's order, as CSV
 * or NDJSON. `limit` cuts a walk into parts; `cursor` (from the previous part's X-Next-Cursor) or `after` (the last
 * K number received) resumes after a record.
 */
export const EXPORT_FORMATS = ['csv', 'ndjson'] as const;
export const ExportInput = z
  .strictObject({
    query: SearchInput.shape.query,
    applicant: SearchInput.shape.applicant,
    productCode: SearchInput.shape.productCode,
    yearFrom: Year,
    yearTo: Year,
    sort: SortInput.optional(),
    format: z.enum(EXPORT_FORMATS, { error: 'must be "csv" or "ndjson"' }),
    limit: int(1).nullable(),
    cursor: z.string(required('a string')).nullable(),
    after: KNumberInput.nullable(),
  })
  .superRefine((input, ctx) => {
    if (input.yearFrom !== null && input.yearTo !== null && input.yearTo < input.yearFrom) {
      ctx.addIssue({ code: 'custom', path: ['yearTo'], message: 'must not be before yearFrom' });
    }
    if (input.cursor !== null && input.after !== null) ctx.addIssue({ code: 'custom', path: ['after'], message: 'must not be given with cursor' });
  });
export type ExportInput = z.output<typeof ExportInput>;

export const DetailInput = z.strictObject({ id: KNumberInput });
export type DetailInput = z.output<typeof DetailInput>;

export const ClassificationInput = z.strictObject({ productCode: ProductCodeInput });
export type ClassificationInput = z.output<typeof ClassificationInput>;

export const TopProductCodesInput = z.strictObject({ limit: int(1, 100) });
export type TopProductCodesInput = z.output<typeof TopProductCodesInput>;

export const CatalogKind = z.enum(['clearance', 'product-code'], {
  error: (issue) => (issue.input === undefined ? 'is required' : 'must be "clearance" or "product-code"'),
});
export type CatalogKind = z.infer<typeof CatalogKind>;

export const CatalogInput = z.strictObject({
  kind: CatalogKind,
  limit: int(1, 500),
  cursor: z.string(required('a string or null')).nullable(),
});
export type CatalogInput = z.output<typeof CatalogInput>;

/**
 * device-510k.lineage (an extension, docs/lineage.md): the devices a clearance names, then theirs, up the chain
 * (`predicates`), or every clearance that names it, then those that name them (`descendants`).
 */
export const LineageInput = z.strictObject({
  id: DeviceNumberInput,
  direction: z.enum(LINEAGE_DIRECTIONS, { error: (issue) => (issue.input === undefined ? 'is required' : 'must be "predicates" or "descendants"') }),
  depth: int(1, MAX_LINEAGE_DEPTH).nullable(),
  kinds: z
    .array(z.enum(EDGE_KINDS, { error: 'must be "predicate" or "named"' }), required('a list of kinds or null'))
    .min(1, { error: 'must name at least one kind' })
    .max(EDGE_KINDS.length, { error: `must have at most ${EDGE_KINDS.length} entries` })
    .refine((kinds) => new Set(kinds).size === kinds.length, { error: 'must name each kind once' })
    .nullable(),
  limit: int(1, MAX_LINEAGE_LIMIT),
  cursor: z.string(required('a string or null')).nullable(),
});
export type LineageInput = z.output<typeof LineageInput>;

export const MetaInput = z.strictObject({});
export type MetaInput = z.output<typeof MetaInput>;

export const OPERATIONS = {
  'device-510k.search': SearchInput,
  'device-510k.detail': DetailInput,
  'device-510k.classification': ClassificationInput,
  'device-510k.top-product-codes': TopProductCodesInput,
  'device-510k.catalog': CatalogInput,
  'device-510k.meta': MetaInput,
  'device-510k.lineage': LineageInput,
} as const;
export type OperationName = keyof typeof OPERATIONS;
export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

export function isOperationName(value: unknown): value is OperationName {
  return typeof value === 'string' && Object.hasOwn(OPERATIONS, value);
}
