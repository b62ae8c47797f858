// The page's whole state lives in the location hash, so links, reloads and back/forward all work without a server
// that knows about routes. Pure functions only: no DOM, no fetch.

export const PAGE_SIZE = 10;

/** @typedef {{ q: string, productCode: string|null, applicant: string|null, from: number|null, to: number|null, page: number, record: string|null }} State */

/** @type {State} */
export const EMPTY_STATE = Object.freeze({ q: '', productCode: null, applicant: null, from: null, to: null, page: 1, record: null });

const year = (v) => (v !== null && /^\d{4}$/.test(v) && Number(v) >= 1900 ? Number(v) : null);

/** Reads a hash such as `#q=stent&code=DTB&from=1990&page=2&record=K123456`; anything malformed is dropped. */
export function parseHash(hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const code = p.get('code')?.trim().toUpperCase() ?? '';
  const applicant = p.get('applicant')?.trim() ?? '';
  const record = p.get('record')?.trim().toUpperCase() ?? '';
  const page = Number(p.get('page'));
  let from = year(p.get('from'));
  let to = year(p.get('to'));
  if (from !== null && to !== null && to < from) [from, to] = [to, from];
  return {
    q: (p.get('q') ?? '').slice(0, 2048),
    productCode: /^[A-Z]{3}$/.test(code) ? code : null,
    applicant: applicant ? applicant.slice(0, 256) : null,
    from,
    to,
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    record: /^K\d{6}$/.test(record) ? record : null,
  };
}

/** The hash for a state; defaults are left out so that links stay short. */
export function toHash(state) {
  const p = new URLSearchParams();
  if (state.q) p.set('q', state.q);
  if (state.productCode) p.set('code', state.productCode);
  if (state.applicant) p.set('applicant', state.applicant);
  if (state.from !== null) p.set('from', String(state.from));
  if (state.to !== null) p.set('to', String(state.to));
  if (state.page > 1) p.set('page', String(state.page));
  if (state.record) p.set('record', state.record);
  const s = p.toString();
  return s ? `#${s}` : '#';
}

const SEARCH_KEYS = ['q', 'productCode', 'applicant', 'from', 'to'];

/** A new state with `changes`; changing what is searched goes back to page 1 and closes the record. */
export function withChanges(state, changes) {
  const next = { ...state, ...changes };
  if (SEARCH_KEYS.some((k) => k in changes && changes[k] !== state[k])) {
    if (!('page' in changes)) next.page = 1;
    if (!('record' in changes)) next.record = null;
  }
  return next;
}

/** What identifies a result list: two states with the same key show the same results. */
export function searchKey(state) {
  return JSON.stringify([state.q.trim(), state.productCode, state.applicant, state.from, state.to, state.page]);
}

/** The API's search input for a state (CONTRACT section 3). */
export function searchInput(state) {
  return {
    query: state.q,
    applicant: state.applicant,
    productCode: state.productCode,
    yearFrom: state.from,
    yearTo: state.to,
    page: state.page,
    pageSize: PAGE_SIZE,
  };
}

/** A query that is just a K number: the page offers to open it directly, even if text search does not list it. */
export function kNumberIn(query) {
  const m = /^\s*(k\d{6})\s*$/i.exec(query);
  return m ? m[1].toUpperCase() : null;
}

/**
 * Facet values as the API orders them (CONTRACT section 6): count descending, then value ascending, at most 10,
 * zero counts dropped. `counts` is an object of value → count, as Pagefind gives filter counts.
 */
export function topValues(counts, limit = 10, numeric = false) {
  return Object.entries(counts)
    .filter(([, count]) => count > 0)
    .map(([value, count]) => ({ value: numeric ? Number(value) : value, count }))
    .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0))
    .slice(0, limit);
}

/** The decision years a year range covers, within the years the snapshot holds. */
export function yearsBetween(from, to, minYear, maxYear) {
  const lo = Math.max(from ?? minYear, minYear);
  const hi = Math.min(to ?? maxYear, maxYear);
  const years = [];
  for (let y = lo; y <= hi; y++) years.push(String(y));
  return years;
}

/** freshness as the server's sourceState computes it (CONTRACT section 7), for the static page's footer. */
export function freshnessOf(lastSuccessfulSyncAt, now, maxAgeHours = 48) {
  if (!lastSuccessfulSyncAt) return 'unknown';
  const age = now - Date.parse(lastSuccessfulSyncAt);
  return age <= maxAgeHours * 3_600_000 ? 'current' : 'stale';
}
