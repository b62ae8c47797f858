import { z } from 'zod';
import {
  Classification,
  ClassificationInput,
  ClearanceRecord,
  DetailInput,
  Facet,
  FacetField,
  IsoDate,
  LINEAGE_DIRECTIONS,
  LineageData,
  LineageInput,
  LineageItem,
  MAX_FACET_SIZE,
  RequestedFacetValue,
  SearchInput,
  SearchStats,
  SortInput,
} from '../../contract/index.ts';
import { ChangeSet, HistoryChange } from '../../contract/history.ts';

/**
 * The tools' arguments and results, made from the contract's schemas: a tool takes the members of an operation's
 * input it needs, each optional but the one that says what to answer, and defaults the rest as the envelope would be
 * filled in by hand. Descriptions are written for a model choosing arguments.
 */

const S = SearchInput.shape;

const PAGE_SIZE = S.pageSize.optional().describe('Records per page, 1 to 50 (default 10).');
const PAGE = S.page.optional().describe('Which page, from 1 (default 1).');

/** The filters every search-backed tool takes: all optional, each narrowing the set. */
export const SearchFilters = {
  applicant: S.applicant.optional().describe('Only this applicant, the exact company name ignoring case and runs of spaces (for a part of a name use the query qualifier applicant:word).'),
  productCode: S.productCode.optional().describe('Only this three-letter FDA product code, for example "DQY".'),
  yearFrom: S.yearFrom.optional().describe('Only clearances decided in this year or later.'),
  yearTo: S.yearTo.optional().describe('Only clearances decided in this year or earlier.'),
};

const QUERY = S.query.describe('The query language, "" for every clearance: words (all must match, as prefixes), "quoted phrases", OR, -exclusions and qualifiers such as code:DQY applicant:medtronic decided:2024 reviewdays:>180 class:2 panel:cardiovascular.');
const OPTIONAL_QUERY = S.query.optional().describe('The query language as in search_clearances; omitted or "" for every clearance.');

export const SearchArgs = z.strictObject({
  query: QUERY,
  ...SearchFilters,
  sort: SortInput.optional().describe('The order: relevance (default), decisionDate:desc, decisionDate:asc, receivedDate:desc, reviewDays:desc or kNumber:asc.'),
  page: PAGE,
  pageSize: PAGE_SIZE,
});
export type SearchArgs = z.output<typeof SearchArgs>;

export const GetClearanceArgs = z.strictObject({ id: DetailInput.shape.id.describe('The K number, for example "K162054".') });
export const GetClassificationArgs = z.strictObject({
  productCode: ClassificationInput.shape.productCode.describe('The three-letter product code, for example "DXY".'),
});

export const CountByArgs = z.strictObject({
  field: FacetField.describe('The field to count: productCode, applicant, decisionYear, receivedYear, decisionDate, receivedDate, advisoryCommittee, deviceClass, decisionCode, submissionType, thirdParty, expeditedReview, statementOrSummary, countryCode, state or predicate (the devices the matches name as predicates).'),
  query: OPTIONAL_QUERY,
  ...SearchFilters,
  size: z
    .int()
    .min(1)
    .max(MAX_FACET_SIZE)
    .nullable()
    .optional()
    .describe(`How many values, 1 to ${MAX_FACET_SIZE}; null for every value (default 25).`),
  order: z.enum(['count', 'value']).optional().describe('"count" (default, largest first) or "value" (years and days in time order, names alphabetically).'),
  offset: z.int().min(0).optional().describe('Values to skip: the next page of a long list, as a cut answer says.'),
});
export type CountByArgs = z.output<typeof CountByArgs>;

export const ReviewTimeArgs = z.strictObject({ query: OPTIONAL_QUERY, ...SearchFilters });
export type ReviewTimeArgs = z.output<typeof ReviewTimeArgs>;

export const ChangesSinceArgs = z.strictObject({
  since: IsoDate.describe('A day, YYYY-MM-DD: the changes the snapshot recorded after its start (UTC).'),
  offset: z.int().min(0).optional().describe('Changes to skip: the next page of a long list, as a cut answer says.'),
});
export type ChangesSinceArgs = z.output<typeof ChangesSinceArgs>;

/** How an answer was cut to fit the byte budget, or null when it is whole. */
export const Cut = z
  .strictObject({
    shown: z.int().min(0).describe('Entries of the list shown.'),
    of: z.int().min(0).describe('Entries the list had before it was cut.'),
    budgetBytes: z.int().describe('The byte budget each of the JSON and the text stays within.'),
  })
  .nullable();

/** The arguments that ask for what follows (the next page), or null at the end. */
export const Next = z.record(z.string(), z.unknown()).nullable();

/** A clearance in a list: the members a reader needs to tell it apart; get_clearance gives the whole record. */
export const CompactClearance = ClearanceRecord.pick({
  kNumber: true,
  deviceName: true,
  applicant: true,
  productCode: true,
  decisionDate: true,
  decisionDescription: true,
  receivedDate: true,
  reviewDays: true,
});
export type CompactClearance = z.infer<typeof CompactClearance>;
export const COMPACT_MEMBERS = Object.keys(CompactClearance.shape) as (keyof CompactClearance)[];

export const SearchOutput = z.strictObject({
  total: z.int().min(0).describe('Every clearance that matches, counted exactly.'),
  page: z.int().min(1),
  pageSize: z.int().min(1),
  hasNextPage: z.boolean(),
  items: z.array(CompactClearance),
  facets: z.array(Facet).describe('The top product codes, applicants and decision years over every match.'),
  cut: Cut,
  next: Next,
});
export type SearchOutput = z.infer<typeof SearchOutput>;

export const GetClearanceOutput = z.strictObject({ record: ClearanceRecord });
export const GetClassificationOutput = z.strictObject({ classification: Classification });

export const CountByOutput = z.strictObject({
  field: FacetField,
  order: z.enum(['count', 'value']),
  total: z.int().min(0).describe('Every clearance that matches the search, counted exactly.'),
  offset: z.int().min(0),
  values: z.array(RequestedFacetValue).describe('Each value with its exact count (a product code labelled with its device type).'),
  hasMore: z.boolean().describe('Whether more values follow these.'),
  cut: Cut,
  next: Next,
});
export type CountByOutput = z.infer<typeof CountByOutput>;

export const ReviewTimeOutput = z.strictObject({
  total: z.int().min(0),
  reviewDays: SearchStats.shape.reviewDays.describe('Days from receipt to decision over every match with both dates: count, min, median, p90, max, and the same by decision year; null when none has both.'),
  cut: Cut,
  next: Next,
});
export type ReviewTimeOutput = z.infer<typeof ReviewTimeOutput>;

export const ChangeEntry = HistoryChange.extend({ at: ChangeSet.shape.at });
export const ChangesSinceOutput = z.strictObject({
  since: z.string(),
  completeSince: z.string().describe('How far back the history is complete.'),
  historyStartsAfterSince: z.boolean().describe('True when the history kept starts after `since`: changes before completeSince are not known.'),
  snapshot: z.string(),
  sets: z.array(ChangeSet.omit({ changes: true })).describe('The builds after `since` that changed something, oldest first, with their counts.'),
  totalChanges: z.int().min(0),
  offset: z.int().min(0),
  changes: z.array(ChangeEntry).describe('Each change: when, which K number, added, changed (with the members before and after) or removed.'),
  cut: Cut,
  next: Next,
});
export type ChangesSinceOutput = z.infer<typeof ChangesSinceOutput>;

const L = LineageInput.shape;

/** Devices a lineage page shows when the call gives no limit. */
export const DEFAULT_LINEAGE_LIMIT = 25;

export const LineageArgs = z.strictObject({
  id: L.id.describe('The K or DEN number to start from, for example "K860894".'),
  direction: L.direction
    .optional()
    .describe('"predicates" (default): the devices it was compared to, then theirs, up the chain; "descendants": every clearance that names it, then those that name them.'),
  depth: L.depth.optional().describe('How many steps to follow, 1 to 50; null or omitted for the whole chain.'),
  kinds: L.kinds
    .optional()
    .describe('Only edges of these kinds: ["predicate"] (a summary read says so) or ["named"] (the number appears in its documents); null or omitted for both.'),
  limit: L.limit.optional().describe(`Devices a page, 1 to 500 (default ${DEFAULT_LINEAGE_LIMIT}).`),
  cursor: L.cursor.optional().describe('Omitted for the first page; then the cursor an answer\'s `next` gives, with the same id, direction, depth and kinds.'),
});
export type LineageArgs = z.output<typeof LineageArgs>;

/** Cycles a lineage result lists at most; `cyclesTotal` counts them all. */
export const MAX_CYCLES_SHOWN = 20;

const D = LineageData.shape;

export const LineageOutput = z.strictObject({
  id: z.string().describe('The device the walk starts from.'),
  direction: z.enum(LINEAGE_DIRECTIONS),
  depth: L.depth,
  kinds: L.kinds,
  total: z.int().min(0).describe('Devices in the whole answer (every page), counted exactly.'),
  items: z
    .array(LineageItem.extend({ record: CompactClearance.nullable().describe('The clearance in short (get_clearance gives it whole), or null when this snapshot has no record of the number.') }))
    .describe('Breadth first: by depth, then by number. via is the device one step nearer the start; kind and source are those of the edge between them.'),
  byDepth: D.byDepth.describe('Devices at each depth, over the whole answer.'),
  byYear: D.byYear.describe('Devices by their decision year, over the whole answer; null for those without a record or a date.'),
  cycles: D.cycles.describe(`Edges that lead back into the walk (from via to kNumber), the first ${MAX_CYCLES_SHOWN}.`),
  cyclesTotal: z.int().min(0),
  hasNextPage: z.boolean(),
  cut: Cut,
  next: Next,
});
export type LineageOutput = z.infer<typeof LineageOutput>;
