import { BadQuery } from './plan.ts';

/**
 * The query parameters openFDA takes (its api_request.js names the same set), read and checked once where a request
 * enters. Defaults as openFDA's: `limit` 1 for a search and 100 for a count. Unlike openFDA, `skip` has no ceiling
 * and a count's `limit` has none either; a search's `limit` stays at most 1,000 (one page's records).
 */
export type OpenFdaParams = {
  search: string;
  count: string | null;
  limit: number;
  skip: number;
  sort: { field: string; descending: boolean } | null;
  searchAfter: string | null;
};

export const PARAMS = ['search', 'count', 'limit', 'skip', 'sort', 'search_after', 'api_key'] as const;
export const MAX_SEARCH_LIMIT = 1000;

const WHOLE = /^\d{1,15}$/;

export function parseParams(query: URLSearchParams): OpenFdaParams {
  const seen = new Set<string>();
  for (const name of query.keys()) {
    if (!(PARAMS as readonly string[]).includes(name)) {
      throw new BadQuery(`Invalid parameter: ${name}. The parameters are ${PARAMS.join(', ')}`);
    }
    if (seen.has(name)) throw new BadQuery(`The parameter ${name} is given more than once`);
    seen.add(name);
  }
  const get = (name: string) => query.get(name);
  const count = get('count')?.trim() || null;
  const whole = (name: string): number | null => {
    const raw = get(name);
    if (raw === null || raw.trim() === '') return null;
    if (!WHOLE.test(raw.trim())) throw new BadQuery(`Invalid ${name} parameter value: ${name} must be a whole number from 0 up`);
    return Number(raw.trim());
  };
  const limit = whole('limit') ?? (count ? 100 : 1);
  const skip = whole('skip');
  if (!count && limit > MAX_SEARCH_LIMIT) {
    throw new BadQuery(`Limit cannot exceed ${MAX_SEARCH_LIMIT} results for search requests. Use the skip or search_after param to get additional results.`);
  }
  if (count && skip !== null) throw new BadQuery('Should not use skip param when using count.');
  const searchAfter = get('search_after');
  if (searchAfter !== null && skip !== null) throw new BadQuery('The skip parameter is not supported when using search_after.');
  if (searchAfter !== null && count) throw new BadQuery('The search_after parameter is not supported when using count.');
  let sort: OpenFdaParams['sort'] = null;
  const rawSort = get('sort')?.trim();
  if (rawSort) {
    const m = /^([A-Za-z_][A-Za-z0-9_.]*)(?::(asc|desc))?$/.exec(rawSort);
    if (!m) throw new BadQuery(`Sort not supported: ${rawSort}. Write sort=field:asc or sort=field:desc`);
    sort = { field: m[1]!, descending: m[2] === 'desc' };
  }
  if (sort && count) throw new BadQuery('The sort parameter is not supported when using count.');
  return { search: get('search') ?? '', count, limit, skip: skip ?? 0, sort, searchAfter };
}
