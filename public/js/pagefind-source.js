// Static mode over Pagefind: for a snapshot whose own search index is too large for a browser (see
// ENGINE_MAX_BYTES in static-source.js), or when asked for with ?engine=pagefind. Pagefind answers text search and
// the three filters by its own rules (it stems words and ranks by its own score), so totals and order can differ
// from the API's; the page says so. The record shards and product-code shards answer the record view.
import { freshnessOf, kNumberIn, topValues, yearsBetween } from './state.js';
import { fetchJson, readSnapshotHead } from './snapshot-head.js';

const FACET_FIELDS = ['productCode', 'applicant', 'decisionYear'];

export function staticSource({ snapshotBase }) {
  const url = (path) => new URL(path, snapshotBase).href;
  const shards = new Map();
  const shard = (path) => {
    if (!shards.has(path)) shards.set(path, fetchJson(url(path)).catch((err) => (shards.delete(path), Promise.reject(err))));
    return shards.get(path);
  };

  // The browser index is several Pagefind indexes (pagefind/indexes.json lists them, newest first): the first is
  // Pagefind's primary index and the rest are merged into it, which sums their results and their filter counts.
  let indexes = null;
  const loadIndexes = () => {
    indexes ??= fetchJson(url('pagefind/indexes.json')).catch((err) => ((indexes = null), Promise.reject(err)));
    return indexes;
  };
  let pagefind = null;
  const loadPagefind = () => {
    pagefind ??= loadIndexes().then(async (list) => {
      // A snapshot from before the split has one index at pagefind/ and no list.
      const [primary, ...rest] = list === null ? [{ path: '' }] : list.indexes;
      if (!primary) return { search: async () => ({ results: [], filters: {} }), filters: async () => ({}) };
      const pf = await import(url(`pagefind/${primary.path}pagefind.js`));
      await pf.options({ baseUrl: '/' });
      await pf.init();
      // Pagefind adds merged indexes in call order, which is the order of the results without query words.
      await Promise.all(rest.map((index) => pf.mergeIndex(url(`pagefind/${index.path}`), { baseUrl: '/' })));
      return pf;
    });
    return pagefind;
  };

  // Facet counts need Pagefind's filter files, the largest download of a static first search; they are fetched once
  // the first results are on screen and the filters are visible (on a phone: when the filters are opened), and every
  // later search then gets its counts at once.
  let filtersReady = null;
  const loadFilters = () => {
    filtersReady ??= loadPagefind().then((pf) => pf.filters());
    return filtersReady;
  };
  let filtersLoaded = false;

  const facetsOf = (filters) =>
    FACET_FIELDS.map((field) => ({ field, values: topValues(filters?.[field] ?? {}, 10, field === 'decisionYear') }));

  return {
    mode: 'static',
    engine: 'pagefind',
    caps: { sorts: [], decided: false, qualifiers: [], facetFields: [], exportUrl: null },
    async init() {},

    /** Per-year counts would need all of Pagefind's filter files up front, the largest download it has: not asked for. */
    async yearCounts() {
      return null;
    },

    async about() {
      const [meta, head, list] = await Promise.all([
        fetchJson(url('meta.json')),
        readSnapshotHead(snapshotBase).catch(() => null),
        loadIndexes().catch(() => null),
      ]);
      const indexed = list?.records ?? null;
      const freshness = freshnessOf(head?.lastSuccessfulSyncAt ?? null, Date.now());
      return {
        title: meta?.title ?? 'FDA 510(k) Premarket Notifications',
        totalRecords: meta?.totalRecords ?? null,
        indexedRecords: indexed,
        generatedAt: head?.generatedAt ?? null,
        lastSuccessfulSyncAt: head?.lastSuccessfulSyncAt ?? null,
        decisionDateMax: head?.decisionDateMax ?? null,
        decisionDateMin: head?.decisionDateMin ?? null,
        freshness,
        freshnessEvidence: head?.lastSuccessfulSyncAt ? null : 'no sync recorded; built from files',
        availability: 'available',
        warnings: [],
        sources: head?.sources ?? [],
      };
    },

    async search(state, signal) {
      const k = kNumberIn(state.q);
      if (k) return this.searchKNumber(k, state);
      const pf = await loadPagefind();
      const filters = {};
      if (state.productCode) filters.productCode = state.productCode;
      if (state.applicant) filters.applicant = state.applicant;
      if (state.from !== null || state.to !== null) {
        // Years without clearances are simply values no record has; the range only needs an upper bound.
        const year = (d) => (d === null ? null : Number(d.slice(0, 4)));
        const years = yearsBetween(year(state.from), year(state.to), 1900, new Date().getUTCFullYear() + 1);
        if (years.length === 0) return { items: [], total: 0, facets: facetsOf({}), loadFacets: null, warnings: [] };
        filters.decisionYear = { any: years };
      }
      const term = state.q.trim() ? state.q : null;
      const run = async () => {
        const res = await pf.search(term, { filters });
        signal?.throwIfAborted();
        return res;
      };
      const res = await run();
      const start = (state.page - 1) * state.size;
      const page = await Promise.all(res.results.slice(start, start + state.size).map((r) => r.data()));
      signal?.throwIfAborted();
      return {
        // Pagefind's fragments hold only the decision year; the page's records come from their shards for the day.
        items: await Promise.all(page.map(async (d) => {
          const kNumber = /K\d{6}/.exec(d.url)?.[0] ?? '';
          const full = await this.record(kNumber).catch(() => null);
          return full ?? { kNumber, deviceName: d.meta.title ?? '', applicant: d.meta.applicant ?? null, productCode: d.meta.productCode ?? null, decisionDate: null };
        })),
        total: res.results.length,
        facets: filtersLoaded ? facetsOf(res.filters) : null,
        loadFacets: filtersLoaded
          ? null
          : () =>
              loadFilters().then(async () => {
                filtersLoaded = true;
                return facetsOf((await run()).filters);
              }),
        warnings: [],
      };
    },

    /**
     * A query that is one K number is answered from its record shard, not from Pagefind: exact even for clearances
     * beyond the text index's cap, and one small file instead of the search runtime.
     */
    async searchKNumber(k, state) {
      const r = await this.record(k);
      const year = r?.decisionDate ? Number(r.decisionDate.slice(0, 4)) : null;
      const norm = (s) => s.trim().replace(/\s+/g, ' ').toLowerCase();
      const passes =
        r !== null &&
        (!state.productCode || r.productCode === state.productCode) &&
        (!state.applicant || (r.applicant !== null && norm(r.applicant) === norm(state.applicant))) &&
        (state.from === null || (year !== null && year >= Number(state.from.slice(0, 4)))) &&
        (state.to === null || (year !== null && year <= Number(state.to.slice(0, 4))));
      const items = passes && state.page === 1 ? [r] : [];
      const counts = (value) => (passes && value !== null ? { [value]: 1 } : {});
      return {
        items: items.map((x) => ({ ...x, decisionYear: year === null ? null : String(year) })),
        total: passes ? 1 : 0,
        facets: facetsOf({ productCode: counts(r?.productCode ?? null), applicant: counts(r?.applicant ?? null), decisionYear: counts(year) }),
        loadFacets: null,
        warnings: [],
      };
    },

    async record(kNumber) {
      const records = await shard(`records/${kNumber.slice(0, 5)}.json`);
      return records?.find((r) => r.kNumber === kNumber) ?? null;
    },

    async classification(productCode) {
      const entries = await shard(`product-codes/${productCode.slice(0, 1)}.json`);
      return entries?.find((e) => e.productCode === productCode) ?? null;
    },
  };
}
