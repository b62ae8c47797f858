import type { z } from 'zod';
import { FACET_VALUES_MAX, MAX_FACET_SIZE } from '../../contract/index.ts';
import type { McpBackend } from './backend.ts';
import { nextPageAfter } from './budget.ts';
import { answerError, errorResult, given, listFit, listResult, listResultOf, parseArgs, textResult, type ListSpec, type ToolResult } from './results.ts';
import {
  ChangesSinceArgs,
  ChangesSinceOutput,
  COMPACT_MEMBERS,
  CountByArgs,
  CountByOutput,
  GetClassificationArgs,
  GetClassificationOutput,
  GetClearanceArgs,
  GetClearanceOutput,
  DEFAULT_LINEAGE_LIMIT,
  LineageArgs,
  LineageOutput,
  MAX_CYCLES_SHOWN,
  ReviewTimeArgs,
  ReviewTimeOutput,
  SearchArgs,
  SearchOutput,
  type CompactClearance,
} from './schemas.ts';
import { renderChanges, renderClassification, renderClearance, renderCounts, renderLineage, renderReviewTimes, renderSearch } from './text.ts';

/** What a tool runs with: where answers come from, and the byte budget of one result. */
export type ToolContext = { backend: McpBackend; budgetBytes: number };

export type Tool = {
  name: string;
  title: string;
  description: string;
  input: z.ZodType;
  output: z.ZodType;
  /**
   * The result is a function of the snapshot, the arguments as `input` reads them and the byte budget alone (no
   * clock, no state kept elsewhere), so a finished one may be kept and sent again (result-cache.ts).
   */
  cacheable?: true;
  run(args: unknown, context: ToolContext): Promise<ToolResult>;
};

/**
 * A tool whose `run` is given its arguments as `input` reads them: arguments the schema refuses are answered with the
 * tool's `invalid_input` result (parseArgs) and never reach `run`.
 */
function defineTool<S extends z.ZodType>(
  definition: Omit<Tool, 'input' | 'run'> & { input: S; run(args: z.output<S>, context: ToolContext): Promise<ToolResult> },
): Tool {
  const { run, ...rest } = definition;
  return {
    ...rest,
    async run(args, context) {
      const parsed = parseArgs(definition.input, args, definition.name);
      return parsed.ok ? run(parsed.value, context) : parsed.result;
    },
  };
}

type Json = Record<string, unknown>;
type SearchBody = {
  data: { items: Json[]; stats?: { reviewDays: z.infer<typeof ReviewTimeOutput>['reviewDays'] } };
  page: { total: number; hasNextPage: boolean };
  facets: { field: string; values: { value: string | number | boolean; count: number; label?: string }[] }[];
};

/** The search members every search-backed tool shares, filled in as the envelope requires. */
function searchInput(a: { query?: string | undefined; applicant?: string | null | undefined; productCode?: string | null | undefined; yearFrom?: number | null | undefined; yearTo?: number | null | undefined }) {
  return { query: a.query ?? '', applicant: a.applicant ?? null, productCode: a.productCode ?? null, yearFrom: a.yearFrom ?? null, yearTo: a.yearTo ?? null };
}

function compact(record: Json): CompactClearance {
  const out: Json = {};
  for (const m of COMPACT_MEMBERS) out[m] = record[m];
  return out as CompactClearance;
}

const searchClearances = defineTool({
  name: 'search_clearances',
  title: 'Search 510(k) clearances',
  description: [
    'Searches every FDA 510(k) clearance since 1976 and answers a page of matching records with the exact total and the top product codes, applicants and decision years over all matches (not an estimate).',
    'Query language: words must all match (as word prefixes) the device name, K number, product code, applicant or device type; "quoted phrase"; a OR b; -word excludes; qualifiers code:DQY, applicant:medtronic, device:catheter, panel:cardiovascular, class:2, decision:SESE, type:special, thirdparty:yes, country:DE, state:MN, decided:2024 or decided:2024-01-01..2024-03-31, received:>=2023-06, reviewdays:>180, predicate:K123456 (clearances that name that device as a predicate), kind:predicate or kind:named (narrows predicate:).',
    'Example: {"query":"pulse oximeter decided:2024","sort":"decisionDate:desc","pageSize":20}. For counts by a field use count_by; for one whole record use get_clearance.',
  ].join('\n'),
  input: SearchArgs,
  output: SearchOutput,
  cacheable: true,
  async run(a, { backend, budgetBytes }) {
    const page = a.page ?? 1;
    const pageSize = a.pageSize ?? 10;
    const answer = await backend.query('device-510k.search', { ...searchInput(a), page, pageSize, ...(a.sort && { sort: a.sort }) });
    if (answer.status !== 200) return answerError(answer);
    const body = answer.body as SearchBody;
    const items = body.data.items.map(compact);
    const base = given(a);
    return listResult({
      tool: 'search_clearances',
      what: 'records of this page',
      count: items.length,
      budgetBytes,
      structuredOf: (k, cut) =>
        ({
          total: body.page.total,
          page,
          pageSize,
          hasNextPage: body.page.hasNextPage || cut !== null,
          items: items.slice(0, k),
          facets: body.facets as SearchOutput['facets'],
          cut,
          next: cut ? { ...base, ...nextPageAfter(page, pageSize, k) } : body.page.hasNextPage ? { ...base, page: page + 1, pageSize } : null,
        }) satisfies SearchOutput,
      textOf: (structured) => renderSearch(a.query, structured),
    });
  },
});

const getClearance = defineTool({
  name: 'get_clearance',
  title: 'One 510(k) clearance',
  description:
    'The whole record of one 510(k) clearance by its K number: device, applicant and address, product code, dates, decision, review days, submission type, flags. Example: {"id":"K162054"}. An unknown K number is an error (record_not_found).',
  input: GetClearanceArgs,
  output: GetClearanceOutput,
  cacheable: true,
  async run(a, { backend }) {
    const answer = await backend.query('device-510k.detail', { id: a.id });
    if (answer.status !== 200) return answerError(answer);
    const record = (answer.body as { data: { record: Json } }).data.record;
    return textResult({ record }, renderClearance(record));
  },
});

const getClassification = defineTool({
  name: 'get_classification',
  title: 'A product code\'s classification',
  description:
    'What an FDA product code means: device type, device class (1, 2, 3), regulation number, medical specialty, review panel, definition and flags (implant, life-sustaining, third-party eligible, GMP exempt). Example: {"productCode":"DXY"}. An unknown code is an error (product_code_not_found).',
  input: GetClassificationArgs,
  output: GetClassificationOutput,
  cacheable: true,
  async run(a, { backend }) {
    const answer = await backend.query('device-510k.classification', { productCode: a.productCode });
    if (answer.status !== 200) return answerError(answer);
    const classification = (answer.body as { data: Json }).data;
    return textResult({ classification }, renderClassification(classification));
  },
});

const DEFAULT_COUNT_SIZE = 25;

const countBy = defineTool({
  name: 'count_by',
  title: 'Count clearances by a field',
  description: [
    `Exact counts of the values of one field over every clearance matching a search (all of them by default): how many clearances per product code, applicant, decision year or day, committee, device class, decision code, submission type, country or state. Counts are exact, unlike openFDA's count (capped at 1,000 estimated terms), and up to ${FACET_VALUES_MAX.toLocaleString('en-US')} values can be listed (size null: every value; a field with more values among the matches is refused: ask for a size, or narrow the search).`,
    'Takes the same query and filters as search_clearances. Example: "who cleared the most pulse oximeters in 2024" is {"field":"applicant","query":"pulse oximeter decided:2024","size":10}; clearances per year is {"field":"decisionYear","size":null,"order":"value"}.',
  ].join('\n'),
  input: CountByArgs,
  output: CountByOutput,
  cacheable: true,
  async run(a, { backend, budgetBytes }) {
    const offset = a.offset ?? 0;
    const size = a.size === undefined ? DEFAULT_COUNT_SIZE : a.size;
    const order = a.order ?? 'count';
    // One value more than shown says whether more follow, unless that one would pass what an answer lists: then a
    // full window says more may follow, and asking for them names the bound.
    const reach = size === null ? null : offset + size;
    let asked = reach === null ? null : reach < FACET_VALUES_MAX ? reach + 1 : reach;
    const ask = (n: number | null) =>
      backend.query('device-510k.search', { ...searchInput(a), page: 1, pageSize: 1, facets: [{ field: a.field, size: n === null || n > MAX_FACET_SIZE ? null : n, order }] });
    let answer = await ask(asked);
    // A host may bound the values below the contract's figure (docs/limits.md), and the tool cannot know it: when the
    // one value more is what passed that bound, the window asked for is asked again on its own.
    if (reach !== null && asked !== reach && refusedSize(answer)) answer = await ask((asked = reach));
    if (answer.status !== 200) return countError(answer, offset);
    const body = answer.body as SearchBody;
    const all = body.facets[0]?.values ?? [];
    const window = all.slice(offset, size === null ? undefined : offset + size);
    const after = all.length > offset + window.length || (reach !== null && asked === reach && all.length === reach && window.length > 0);
    const base = given(a);
    return listResult({
      tool: 'count_by',
      what: 'values',
      count: window.length,
      budgetBytes,
      structuredOf: (k, cut) =>
        ({
          field: a.field,
          order,
          total: body.page.total,
          offset,
          values: window.slice(0, k),
          hasMore: cut !== null || after,
          cut,
          next: cut || after ? { ...base, offset: offset + k } : null,
        }) satisfies CountByOutput,
      textOf: (structured) => renderCounts(a.query ?? '', structured),
    });
  },
});

/** Whether the search refused count_by's one facet for the values it would list. */
function refusedSize(answer: Parameters<typeof answerError>[0]): boolean {
  const detail = (answer.body as { error?: { details?: { path?: unknown }[] } } | null)?.error?.details?.[0];
  return answer.status === 400 && detail?.path === 'input.facets[0].size';
}

/**
 * count_by's refusal: the search's refusal of a facet over the values an answer lists (docs/limits.md) said of the
 * tool's own arguments; any other error as the service gave it.
 */
function countError(answer: Parameters<typeof answerError>[0], offset: number): ToolResult {
  const detail = (answer.body as { error?: { details?: { path?: unknown; message?: unknown }[] } } | null)?.error?.details?.[0];
  if (answer.status !== 400 || detail?.path !== 'input.facets[0].size' || typeof detail.message !== 'string') return answerError(answer);
  const message = `${detail.message}${offset > 0 ? '; a later page counts its offset too (offset + size)' : ''}`;
  return errorResult({ code: 'invalid_input', message: `arguments.size ${message}.`, details: [{ path: 'arguments.size', message }] });
}

const reviewTimeStats = defineTool({
  name: 'review_time_stats',
  title: 'How long FDA took to review',
  description:
    'Review time (days from FDA receiving a 510(k) to its decision) over every clearance matching a search: count, min, median, 90th percentile and max, overall and by decision year. Takes the same query and filters as search_clearances. Example: {"query":"code:DQY","yearFrom":2015}.',
  input: ReviewTimeArgs,
  output: ReviewTimeOutput,
  cacheable: true,
  async run(a, { backend, budgetBytes }) {
    const answer = await backend.query('device-510k.search', { ...searchInput(a), page: 1, pageSize: 1, stats: true });
    if (answer.status !== 200) return answerError(answer);
    const body = answer.body as SearchBody;
    const stats = body.data.stats?.reviewDays ?? null;
    const years = stats?.byDecisionYear ?? [];
    const base = given(a);
    return listResult({
      tool: 'review_time_stats',
      what: 'decision years',
      count: years.length,
      budgetBytes,
      structuredOf: (k, cut) =>
        ({
          total: body.page.total,
          reviewDays: stats && { ...stats, byDecisionYear: years.slice(0, k) },
          cut,
          // The years not shown, asked on their own: the figures of that answer are over those years only.
          next: cut ? { ...base, yearFrom: (years[k] as { year: number }).year } : null,
        }) satisfies ReviewTimeOutput,
      textOf: (structured) => renderReviewTimes(a.query ?? '', structured),
      cutNote: ' (its figures cover only those years)',
    });
  },
});

type ChangesBody = Omit<z.infer<typeof ChangesSinceOutput>, 'sets' | 'historyStartsAfterSince'> & { historyStartsAfterSince?: true } & { sets: (z.infer<typeof ChangesSinceOutput>['sets'][number] & { changes: Json[] })[] };

const changesSince = defineTool({
  name: 'changes_since',
  title: 'What changed since a day',
  description:
    'The clearances added, changed (with each member before and after) or removed by the nightly rebuilds after a day, oldest first, as this service recorded them from FDA\'s files. Example: {"since":"2026-11-01"}. For a day before the history kept, every kept change is listed and historyStartsAfterSince says that earlier ones are not known.',
  input: ChangesSinceArgs,
  output: ChangesSinceOutput,
  async run(a, { backend, budgetBytes }) {
    const offset = a.offset ?? 0;
    const answer = await backend.changes(a.since);
    if (answer.status !== 200) return answerError(answer);
    const body = answer.body as ChangesBody;
    const all = body.sets.flatMap((s) => s.changes.map((c) => ({ at: s.at, ...c })));
    const window = all.slice(offset);
    const sets = body.sets.map(({ changes: _changes, ...set }) => set);
    return listResult({
      tool: 'changes_since',
      what: 'changes',
      count: window.length,
      budgetBytes,
      structuredOf: (k, cut) =>
        ({
          since: body.since,
          completeSince: body.completeSince,
          historyStartsAfterSince: body.historyStartsAfterSince === true,
          snapshot: body.snapshot,
          sets,
          totalChanges: all.length,
          offset,
          changes: window.slice(0, k) as ChangesSinceOutput['changes'],
          cut,
          next: cut ? { since: a.since, offset: offset + k } : null,
        }) satisfies ChangesSinceOutput,
      textOf: renderChanges,
    });
  },
});

type LineageBody = {
  data: { items: (Omit<LineageOutput['items'][number], 'record'> & { record: Json | null })[] } & Pick<LineageOutput, 'byDepth' | 'byYear' | 'cycles'>;
  page: { total: number; hasNextPage: boolean; nextCursor: string | null };
};

/**
 * Room kept for a cursor in `next` while a cut lineage page is fitted to the budget: the cursor that goes on after the
 * last device shown is asked for once the count is known, and is shorter than this.
 */
const CURSOR_ROOM = 'x'.repeat(400);

const lineage = defineTool({
  name: 'lineage',
  title: 'A clearance\'s predicates and descendants',
  description: [
    'Follows the predicate chain of a 510(k): the devices it was compared to (its predicates), then their predicates, up to the oldest; or the other way, every clearance that names it, then those that name them. Answers breadth first, each device once with the device one step nearer the start (via), the kind of edge (predicate: read from its 510(k) summary; named: its number appears in the documents) and a short record; exact totals by depth and by decision year; edges that loop back (cycles) are listed, never followed twice.',
    'Example: {"id":"K860894","direction":"descendants","depth":2}. direction defaults to predicates, depth to the whole chain, kinds to both, limit to 25 devices a page; pass `next` back for the next page. A number that is neither a record nor in any edge is an error (record_not_found).',
  ].join('\n'),
  input: LineageArgs,
  output: LineageOutput,
  async run(a, { backend, budgetBytes }) {
    const input = { id: a.id, direction: a.direction ?? 'predicates', depth: a.depth ?? null, kinds: a.kinds ?? null, limit: a.limit ?? DEFAULT_LINEAGE_LIMIT, cursor: a.cursor ?? null };
    const answer = await backend.query('device-510k.lineage', input);
    if (answer.status !== 200) return answerError(answer);
    const body = answer.body as LineageBody;
    const items = body.data.items.map((i) => ({ ...i, record: i.record && compact(i.record) }));
    const base = given(a);
    let cursorAfterCut: string = CURSOR_ROOM;
    const spec: ListSpec<LineageOutput> = {
      tool: 'lineage',
      what: 'devices of this page',
      count: items.length,
      budgetBytes,
      structuredOf: (k, cut) => ({
        id: input.id,
        direction: input.direction,
        depth: input.depth,
        kinds: input.kinds,
        total: body.page.total,
        items: items.slice(0, k),
        byDepth: body.data.byDepth,
        byYear: body.data.byYear,
        cycles: body.data.cycles.slice(0, MAX_CYCLES_SHOWN),
        cyclesTotal: body.data.cycles.length,
        hasNextPage: body.page.hasNextPage || cut !== null,
        cut,
        next: cut ? { ...base, cursor: cursorAfterCut } : body.page.hasNextPage ? { ...base, cursor: body.page.nextCursor } : null,
      }),
      textOf: renderLineage,
    };
    const k = listFit(spec);
    if (k === items.length) return listResultOf(spec, k);
    // Cut: the cursor after the k-th device is the one the same question with a limit of k ends with.
    const again = await backend.query('device-510k.lineage', { ...input, limit: Math.max(1, k) });
    if (again.status !== 200) return answerError(again);
    cursorAfterCut = (again.body as LineageBody).page.nextCursor ?? CURSOR_ROOM;
    return listResultOf(spec, k);
  },
});

/** Every tool, in the order tools/list gives them. */
export const TOOLS: readonly Tool[] = [searchClearances, countBy, getClearance, getClassification, reviewTimeStats, changesSince, lineage];
