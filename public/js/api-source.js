// Server mode: every answer comes from POST /v1/query (the envelope of the spec and docs/contract.md).
import { capsOf, downloadsOf, searchInput } from './state.js';
import { readSnapshotHead } from './snapshot-head.js';

export class ApiFailure extends Error {
  constructor(message, code = null, status = 0) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

async function query(endpoint, operation, input, signal) {
  let res;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ version: 1, operation, input }),
      signal,
    });
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    throw new ApiFailure('The service could not be reached. Check your connection and try again.');
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    // A proxy's HTML error page: reported below with the status alone.
  }
  if (!res.ok || !body || body.version !== 1) {
    throw new ApiFailure(body?.error?.message ?? `The service answered with HTTP status ${res.status}.`, body?.error?.code ?? null, res.status);
  }
  return body;
}

/**
 * Asks the service once for its description: `{ meta }` when it answers; `{ preparing }` when it is there but has no
 * data yet (HTTP 503, as while the first build of a snapshot runs: worth asking again, after `retryAfter` seconds
 * when it says so); null when there is no API here (a static host answers 404 or 405 to a POST, or an HTML page),
 * and the page falls back to static mode.
 */
export async function probeApi(endpoint, signal) {
  let res;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ version: 1, operation: 'device-510k.meta', input: {} }),
      signal,
    });
  } catch (err) {
    if (err?.name === 'AbortError') throw err;
    return null;
  }
  const body = await res.json().catch(() => null);
  if (res.status === 503) {
    const retryAfter = Number(res.headers.get('Retry-After'));
    return { preparing: body?.error?.message ?? 'The service has no data yet.', retryAfter: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null };
  }
  if (res.ok && body?.version === 1 && body.operation === 'device-510k.meta' && body.data) return { meta: body };
  return null;
}

export function apiSource({ endpoint, metaBody, snapshotBase }) {
  let meta = metaBody;
  const caps = capsOf(metaBody);
  let head = null;
  // The server serves the snapshot's manifest too: the coverage note reads its sources from the same bytes as static mode.
  const readHead = () => (head ??= readSnapshotHead(snapshotBase).catch(() => null));
  return {
    mode: 'server',
    engine: 'api',
    caps,
    async init() {},

    async about() {
      meta ??= await query(endpoint, 'device-510k.meta', {});
      // sourceState says all the footer needs (its evidence names the newest decision); no manifest download.
      const s = meta.sourceState;
      return {
        title: meta.data.title,
        totalRecords: meta.data.totalRecords,
        indexedRecords: meta.data.totalRecords,
        generatedAt: s.snapshotGeneratedAt,
        lastSuccessfulSyncAt: s.lastSuccessfulSyncAt,
        decisionDateMax: /newest decision (\d{4}-\d{2}-\d{2})/.exec(s.freshnessEvidence ?? '')?.[1] ?? null,
        freshness: s.freshness,
        freshnessEvidence: s.freshnessEvidence,
        availability: s.availability,
        warnings: s.warnings,
        decisionDateMin: (await readHead())?.decisionDateMin ?? null,
        sources: (await readHead())?.sources ?? [],
        downloads: downloadsOf(meta, snapshotBase),
      };
    },

    /**
     * Decision years over the whole snapshot, ascending: one search with the `facets` input where the service takes
     * it; the contract's search counts only the ten most frequent years, so without it this asks one year at a time
     * (a query without words is a range of the index: no scan).
     */
    async yearCounts() {
      if (caps.facetFields.includes('decisionYear')) {
        const input = { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facets: [{ field: 'decisionYear', size: null, order: 'value' }] };
        const body = await query(endpoint, 'device-510k.search', input);
        return body.facets.find((f) => f.field === 'decisionYear').values.map((v) => ({ year: Number(v.value), count: v.count }));
      }
      const h = await readHead();
      const lo = Number((h?.decisionDateMin ?? '1976').slice(0, 4));
      const hi = Number((h?.decisionDateMax ?? String(new Date().getUTCFullYear())).slice(0, 4));
      const years = [];
      for (let y = lo; y <= hi; y++) years.push(y);
      const out = [];
      for (let i = 0; i < years.length; i += 8) {
        const batch = years.slice(i, i + 8);
        const totals = await Promise.all(batch.map((y) =>
          query(endpoint, 'device-510k.search', { query: '', applicant: null, productCode: null, yearFrom: y, yearTo: y, page: 1, pageSize: 1 }).then((b) => b.page.total)));
        batch.forEach((year, j) => out.push({ year, count: totals[j] }));
      }
      return out;
    },

    async search(state, signal) {
      const body = await query(endpoint, 'device-510k.search', searchInput(state, caps), signal);
      return { items: body.data.items, total: body.page.total, facets: body.facets, stats: body.data.stats ?? null, warnings: body.sourceState.warnings };
    },

    /**
     * "Did you mean" (the `spelling` input): the query with a word the index hardly knows corrected, each with its
     * exact count under the same filters, those finding more than the search itself, most first.
     */
    async spelling(state, _total, signal) {
      const { facets: _f, stats: _s, sort: _o, ...input } = searchInput(state, caps);
      const body = await query(endpoint, 'device-510k.search', { ...input, page: 1, pageSize: 1, spelling: true }, signal);
      return body.data.spelling ?? [];
    },

    async record(kNumber, signal) {
      try {
        return (await query(endpoint, 'device-510k.detail', { id: kNumber }, signal)).data.record;
      } catch (err) {
        if (err instanceof ApiFailure && err.code === 'record_not_found') return null;
        throw err;
      }
    },

    /** A page of a lineage (docs/lineage.md): `{ data, page }` of device-510k.lineage. */
    async lineage(input, signal) {
      const body = await query(endpoint, 'device-510k.lineage', input, signal);
      return { data: body.data, page: body.page };
    },

    async classification(productCode, signal) {
      try {
        return (await query(endpoint, 'device-510k.classification', { productCode }, signal)).data;
      } catch (err) {
        if (err instanceof ApiFailure && err.code === 'product_code_not_found') return null;
        throw err;
      }
    },
  };
}
