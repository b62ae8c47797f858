import { z } from 'zod';
import { ClearanceRecord } from './record.ts';
import { Classification, ProductCodeCount, ProductCodeEntry } from './classification.ts';
import { FacetField } from './operations.ts';
import { EDGE_KINDS } from './lineage.ts';

/** docs/contract.md section 7. */
export const SourceState = z.strictObject({
  mode: z.literal('corpus'),
  availability: z.enum(['available', 'unavailable']),
  freshness: z.enum(['current', 'stale', 'unknown']),
  freshnessEvidence: z.string().nullable(),
  sourceRevision: z.string().regex(/^sha256:[0-9a-f]{64}$/).nullable(),
  snapshotGeneratedAt: z.iso.datetime().nullable(),
  lastSuccessfulSyncAt: z.iso.datetime().nullable(),
  servedAt: z.iso.datetime({ precision: 3 }),
  warnings: z.array(z.string()),
});
export type SourceState = z.infer<typeof SourceState>;

export const Page = z.strictObject({
  itemsReturned: z.int().min(0),
  total: z.int().min(0),
  totalRelation: z.literal('exact'),
  hasNextPage: z.boolean(),
  nextCursor: z.string().nullable(),
  snapshotToken: z.string().nullable(),
  consistency: z.enum(['live-offset', 'keyset']),
});
export type Page = z.infer<typeof Page>;

/** Without the `facets` input: the contract's three facets of at most ten values. */
export const FacetValue = z.strictObject({
  value: z.union([z.string(), z.int()]),
  count: z.int().min(1),
});
export const Facet = z.strictObject({
  field: z.enum(['productCode', 'applicant', 'decisionYear']),
  values: z.array(FacetValue).max(10),
});
export type Facet = z.infer<typeof Facet>;

/** With the `facets` input (an extension): the fields asked for, as many values as asked, labels where known. */
export const RequestedFacetValue = z.strictObject({
  value: z.union([z.string(), z.int(), z.boolean()]),
  count: z.int().min(1),
  /** The device type of a product code, the name of a decision code. */
  label: z.string().optional(),
});
export const RequestedFacet = z.strictObject({ field: FacetField, values: z.array(RequestedFacetValue) });
export type RequestedFacet = z.infer<typeof RequestedFacet>;

const ReviewFigures = {
  count: z.int().min(1),
  min: z.int(),
  median: z.int(),
  p90: z.int(),
  max: z.int(),
};
/** `data.stats`, with the `stats` input (an extension). */
export const SearchStats = z.strictObject({
  reviewDays: z
    .strictObject({ ...ReviewFigures, byDecisionYear: z.array(z.strictObject({ year: z.int(), ...ReviewFigures })) })
    .nullable(),
});
export type SearchStats = z.infer<typeof SearchStats>;

/**
 * `data.spelling`, with the `spelling` input (an extension): queries with a word of the query that the index hardly
 * knows replaced by one of its own words a slip or two away, each with its exact number of matches under the same
 * filters, only those matching more than the query itself, most first (docs/search.md, "Did you mean").
 */
export const SpellingSuggestion = z.strictObject({
  query: z.string(),
  total: z.int().min(1),
  corrections: z.array(z.strictObject({ word: z.string(), correction: z.string() })).min(1),
});
export type SpellingSuggestion = z.infer<typeof SpellingSuggestion>;

export const SearchData = z.strictObject({
  items: z.array(ClearanceRecord).max(50),
  stats: SearchStats.optional(),
  spelling: z.array(SpellingSuggestion).max(4).optional(),
});
export const DetailData = z.strictObject({ record: ClearanceRecord });
export const ClassificationData = Classification;
export const TopProductCodesData = z.strictObject({ codes: z.array(ProductCodeCount).max(100) });
export const ClearanceCatalogData = z.strictObject({ items: z.array(ClearanceRecord).max(500) });
export const ProductCodeCatalogData = z.strictObject({ items: z.array(ProductCodeEntry).max(500) });
/**
 * A bulk download of the whole table of clearances (docs/data.md, "Bulk downloads"): a file of the snapshot, at
 * `path` under the snapshot's root (`/snapshot/` + path on the server), listed in the manifest with the same size and
 * sha256.
 */
export const Download = z.strictObject({
  format: z.enum(['parquet', 'sqlite']),
  path: z.string(),
  mediaType: z.string(),
  bytes: z.int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type Download = z.infer<typeof Download>;

export const MetaData = z.strictObject({
  title: z.string(),
  totalRecords: z.int().min(0).nullable(),
  supportedFilters: z.array(z.string()),
  supportedSorts: z.array(z.string()),
  sourceNotes: z.array(z.string()),
  // Extensions (docs/contract.md): the qualifiers `query` understands and the fields `facets` can count.
  qualifiers: z.array(z.strictObject({ name: z.string(), accepts: z.string() })),
  facetFields: z.array(z.string()),
  // An extension (docs/contract.md): the whole table as files for data tools.
  downloads: z.array(Download),
});
export type MetaData = z.infer<typeof MetaData>;

/** One device of a lineage answer: how far from the start, the device one step nearer it, and the edge between. */
export const LineageItem = z.strictObject({
  kNumber: z.string(),
  depth: z.int().min(1),
  via: z.string(),
  kind: z.enum(EDGE_KINDS),
  source: z.string(),
  /** The clearance, or null when this snapshot has no record of the number. */
  record: ClearanceRecord.nullable(),
});
export type LineageItem = z.infer<typeof LineageItem>;
export const LineageData = z.strictObject({
  items: z.array(LineageItem).max(500),
  /** Over the whole answer, not only this page. */
  byDepth: z.array(z.strictObject({ depth: z.int().min(1), count: z.int().min(1) })),
  /** By the record's decision year; null for devices without a record or a decision date (last). */
  byYear: z.array(z.strictObject({ year: z.int().nullable(), count: z.int().min(1) })),
  /** Edges met in the walk that lead back into a cycle (from `via` to `kNumber`, already in the answer), each once. */
  cycles: z.array(z.strictObject({ kNumber: z.string(), via: z.string(), kind: z.enum(EDGE_KINDS), source: z.string() })),
});
export type LineageData = z.infer<typeof LineageData>;

const envelope = <Op extends string, D extends z.ZodType>(operation: Op, data: D) =>
  z.strictObject({
    version: z.literal(1),
    operation: z.literal(operation),
    data,
    sourceState: SourceState,
  });

/** Success responses, one per operation; tests parse real answers with these. */
export const ResponseSchemas = {
  'device-510k.search': envelope('device-510k.search', SearchData).extend({
    page: Page,
    facets: z.union([z.array(Facet).length(3), z.array(RequestedFacet)]),
  }),
  'device-510k.detail': envelope('device-510k.detail', DetailData),
  'device-510k.classification': envelope('device-510k.classification', ClassificationData),
  'device-510k.top-product-codes': envelope('device-510k.top-product-codes', TopProductCodesData),
  'device-510k.catalog': envelope('device-510k.catalog', z.union([ClearanceCatalogData, ProductCodeCatalogData])).extend({
    page: Page,
  }),
  'device-510k.meta': envelope('device-510k.meta', MetaData),
  'device-510k.lineage': envelope('device-510k.lineage', LineageData).extend({ page: Page }),
} as const;

/** docs/contract.md section 2: every error code and its HTTP status, in the order checks run. */
export const ERROR_STATUS = {
  malformed_json: 400,
  invalid_request: 400,
  unsupported_version: 400,
  unknown_operation: 400,
  invalid_input: 400,
  invalid_cursor: 400,
  record_not_found: 404,
  product_code_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  request_too_large: 413,
  unsupported_media_type: 415,
  source_unavailable: 503,
  overloaded: 503,
  internal_error: 500,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;
export const ErrorCode = z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]);

export const ErrorDetail = z.strictObject({ path: z.string(), message: z.string() });
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorBody = z.strictObject({
  version: z.literal(1),
  operation: z.string().nullable(),
  error: z.strictObject({
    code: ErrorCode,
    message: z.string().min(1),
    details: z.array(ErrorDetail),
  }),
  sourceState: SourceState,
});
export type ErrorBody = z.infer<typeof ErrorBody>;
