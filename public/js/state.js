// The page's whole state lives in the location hash, so links, reloads and back/forward all work without a server
// that knows about routes. Pure functions only: no DOM, no fetch.

// The service's own rules (npm run build:page bundles them from its modules): the page keeps no copy of them.
import { freshnessOf as serviceFreshnessOf, QUALIFIERS, reviewDaysOf } from './service-rules.js';

export const PAGE_SIZES = [10, 25, 50];
export const PAGE_SIZE = PAGE_SIZES[0];

/**
 * @typedef {{ q: string, productCode: string|null, applicant: string|null, from: string|null, to: string|null,
 *   quals: Record<string, string>, page: number, size: number, sort: string|null, record: string|null,
 *   lineage: 'predicates'|'descendants'|null }} State
 * `from` and `to` bound the decision date, as YYYY-MM-DD, both ends included. `quals` are filters the service takes
 * as qualifiers in the query (panel, class, decision, …), by qualifier name; each also has its own hash key.
 */

/** @type {State} */
export const EMPTY_STATE = Object.freeze({ q: '', productCode: null, applicant: null, from: null, to: null, quals: Object.freeze({}), page: 1, size: PAGE_SIZE, sort: null, record: null, lineage: null });
/** The record view's lineage view: the record's predicates up the chain, or the clearances that name it. */
export const LINEAGE_DIRECTIONS = ['predicates', 'descendants'];

/**
 * The facet fields that filter through a qualifier: the field the service counts, the qualifier that selects one of
 * its values, how a value is written in the query, and how a person reads it. Only qualifiers of the service's own
 * table (QUALIFIERS) are kept.
 */
export const QUALIFIER_FACETS = [
  { field: 'advisoryCommittee', qualifier: 'panel', title: 'Review committee', term: (v) => quoted(v) },
  { field: 'deviceClass', qualifier: 'class', title: 'Device class', term: (v) => String(v), label: (v) => (/^[123]$/.test(String(v)) ? `Class ${'I'.repeat(Number(v))}` : ({ U: 'Unclassified', N: 'Not classified', F: 'HDE' })[v] ?? String(v)) },
  { field: 'decisionCode', qualifier: 'decision', title: 'Decision', term: (v) => String(v) },
  { field: 'submissionType', qualifier: 'type', title: 'Submission type', term: (v) => quoted(v) },
  { field: 'thirdParty', qualifier: 'thirdparty', title: 'Third-party review', term: yesNoTerm, label: yesNoLabel },
  { field: 'expeditedReview', qualifier: 'expedited', title: 'Expedited review', term: yesNoTerm, label: yesNoLabel },
  { field: 'statementOrSummary', qualifier: 'summary', title: '510(k) summary or statement', term: (v) => (/summary|yes/i.test(String(v)) ? 'yes' : 'no'), label: (v) => (/summary|yes/i.test(String(v)) ? 'Summary' : 'Statement') },
  { field: 'countryCode', qualifier: 'country', title: 'Applicant country', term: (v) => String(v) },
  { field: 'state', qualifier: 'state', title: 'Applicant state', term: (v) => String(v) },
].filter((f) => Object.hasOwn(QUALIFIERS, f.qualifier));
function quoted(v) {
  const s = String(v).replace(/"/g, '');
  return /[\s:]/.test(s) ? `"${s}"` : s;
}
function yesNoTerm(v) {
  return v === true || v === 'true' || v === 'yes' ? 'yes' : 'no';
}
function yesNoLabel(v) {
  return yesNoTerm(v) === 'yes' ? 'Yes' : 'No';
}
const QUALIFIER_NAMES = QUALIFIER_FACETS.map((f) => f.qualifier);

const validDay = (s) => {
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
};

/**
 * A date bound from a link or a form: "1990" (the year's first or last day, by `end`) or "1990-02-03"; years
 * before 1900 are dropped like the API's year filter drops them.
 */
export function dateBound(value, end) {
  const v = String(value ?? '').trim();
  if (/^\d{4}$/.test(v)) return Number(v) >= 1900 ? `${v}-${end ? '12-31' : '01-01'}` : null;
  return /^\d{4}-\d{2}-\d{2}$/.test(v) && Number(v.slice(0, 4)) >= 1900 && validDay(v) ? v : null;
}

/** Sorts the page offers: the API's, by the names `meta.supportedSorts` uses. */
export const SORT_LABELS = {
  relevance: 'Best match',
  'decisionDate:desc': 'Newest decision first',
  'decisionDate:asc': 'Oldest decision first',
  'receivedDate:desc': 'Newest received first',
  'reviewDays:desc': 'Longest review first',
  'kNumber:asc': '510(k) number',
};

/** Reads a hash such as `#q=stent&code=DTB&from=1990&to=2024-03-31&page=2&size=25&record=K123456`; anything malformed is dropped. */
export function parseHash(hash) {
  const p = new URLSearchParams(String(hash).replace(/^#/, ''));
  const code = p.get('code')?.trim().toUpperCase() ?? '';
  const applicant = p.get('applicant')?.trim() ?? '';
  const record = p.get('record')?.trim().toUpperCase() ?? '';
  const page = Number(p.get('page'));
  const size = Number(p.get('size'));
  const sort = p.get('sort') ?? '';
  let from = dateBound(p.get('from'), false);
  let to = dateBound(p.get('to'), true);
  if (from !== null && to !== null && to < from) [from, to] = [to, from];
  return {
    q: (p.get('q') ?? '').slice(0, 2048),
    productCode: /^[A-Z]{3}$/.test(code) ? code : null,
    applicant: applicant ? applicant.slice(0, 256) : null,
    from,
    to,
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    quals: qualsOf(p),
    size: PAGE_SIZES.includes(size) ? size : PAGE_SIZE,
    sort: Object.hasOwn(SORT_LABELS, sort) ? sort : null,
    // A K number, or a De Novo number (lineage edges name both; the record view says when there is no record).
    record: /^(K|DEN)\d{6}$/.test(record) ? record : null,
    lineage: /^(K|DEN)\d{6}$/.test(record) && LINEAGE_DIRECTIONS.includes(p.get('lineage')) ? p.get('lineage') : null,
  };
}

/** Qualifier filters from the hash: a value of at most 100 characters, no quotes (they would break the query). */
function qualsOf(p) {
  const quals = {};
  for (const name of QUALIFIER_NAMES) {
    const v = p.get(name)?.trim();
    if (v && v.length <= 100 && !v.includes('"')) quals[name] = v;
  }
  return quals;
}

/** A bound as the hash writes it: a whole year's first (or last) day is just the year, so links stay short. */
const shortBound = (date, end) => (date.endsWith(end ? '-12-31' : '-01-01') ? date.slice(0, 4) : date);

/** The hash for a state; defaults are left out so that links stay short. */
export function toHash(state) {
  const p = new URLSearchParams();
  if (state.q) p.set('q', state.q);
  if (state.productCode) p.set('code', state.productCode);
  if (state.applicant) p.set('applicant', state.applicant);
  if (state.from !== null) p.set('from', shortBound(state.from, false));
  if (state.to !== null) p.set('to', shortBound(state.to, true));
  for (const name of QUALIFIER_NAMES) if (state.quals?.[name]) p.set(name, state.quals[name]);
  if (state.sort) p.set('sort', state.sort);
  if (state.size !== PAGE_SIZE) p.set('size', String(state.size));
  if (state.page > 1) p.set('page', String(state.page));
  if (state.record) p.set('record', state.record);
  if (state.record && state.lineage) p.set('lineage', state.lineage);
  const s = p.toString();
  return s ? `#${s}` : '#';
}

const SEARCH_KEYS = ['q', 'productCode', 'applicant', 'from', 'to', 'quals', 'sort', 'size'];

/** A new state with `changes`; changing what is searched goes back to page 1 and closes the record. */
export function withChanges(state, changes) {
  const next = { ...state, ...changes };
  if (SEARCH_KEYS.some((k) => k in changes && changes[k] !== state[k])) {
    if (!('page' in changes)) next.page = 1;
    if (!('record' in changes)) next.record = null;
    if (!('lineage' in changes)) next.lineage = null;
  }
  return next;
}

/** What identifies a result list: two states with the same key show the same results. */
export function searchKey(state) {
  return JSON.stringify([state.q.trim(), state.productCode, state.applicant, state.from, state.to, state.quals, state.sort, state.size, state.page]);
}

/** The state a facet's year selects: that whole year. */
export const yearChanges = (year) => ({ from: `${year}-01-01`, to: `${year}-12-31` });

/** The single year a state's date range is, or null. */
export function wholeYear(state) {
  if (state.from === null || state.to === null) return null;
  const y = state.from.slice(0, 4);
  return state.from === `${y}-01-01` && state.to === `${y}-12-31` ? Number(y) : null;
}

/** True when the range does not start and end on a year's bounds, so a whole-year filter would widen it. */
export function rangeNeedsDays(state) {
  return (state.from !== null && !state.from.endsWith('-01-01')) || (state.to !== null && !state.to.endsWith('-12-31'));
}

/**
 * The facets the page asks for when the service takes a `facets` input: the three of the contract (every decision
 * year, in year order, for the histogram) and one per qualifier filter, each counted over every match.
 */
export function facetRequests(caps) {
  const fields = caps.facetFields ?? [];
  if (fields.length === 0) return null;
  // Size and order always given: the static page hands this input to the engine as it is, with no schema to fill in defaults.
  const wanted = [
    { field: 'productCode', size: 10, order: 'count' },
    { field: 'applicant', size: 10, order: 'count' },
    { field: 'decisionYear', size: null, order: 'value' },
    ...QUALIFIER_FACETS.filter((f) => caps.qualifiers?.includes(f.qualifier)).map((f) => ({ field: f.field, size: f.field === 'countryCode' || f.field === 'state' ? 10 : null, order: 'count' })),
  ];
  return wanted.filter((f) => fields.includes(f.field));
}

/**
 * The API's search input for a state (docs/contract.md section 3). `caps` says what the service accepts beyond the
 * contract's fields: `decided` (a day-precise `decided:` qualifier in the query), `qualifiers`, `sorts` and
 * `facetFields`.
 */
export function searchInput(state, caps = {}) {
  const days = caps.decided && (state.from !== null || state.to !== null) && rangeNeedsDays(state);
  const terms = [state.q.trim()];
  for (const f of QUALIFIER_FACETS) {
    const v = state.quals?.[f.qualifier];
    if (v !== undefined && caps.qualifiers?.includes(f.qualifier)) terms.push(`${f.qualifier}:${/[\s:]/.test(v) ? `"${v}"` : v}`);
  }
  if (days) terms.push(`decided:${state.from === null ? `<=${state.to}` : state.to === null ? `>=${state.from}` : `${state.from}..${state.to}`}`);
  const input = {
    query: terms.filter(Boolean).join(' '),
    applicant: state.applicant,
    productCode: state.productCode,
    yearFrom: days || state.from === null ? null : Number(state.from.slice(0, 4)),
    yearTo: days || state.to === null ? null : Number(state.to.slice(0, 4)),
    page: state.page,
    pageSize: state.size,
  };
  if (state.sort && caps.sorts?.includes(state.sort)) input.sort = state.sort;
  const facets = facetRequests(caps);
  if (facets) input.facets = facets;
  // Review times (median and 90th percentile, by decision year) of every match, for the page's chart.
  if (caps.stats) input.stats = true;
  return input;
}

/**
 * The export URL of a search (GET, so a link or a spreadsheet's "from web" import can use it): the search's filters
 * and sort as query parameters, every match, as CSV.
 */
export function exportUrlOf(base, input) {
  const url = new URL(base);
  for (const key of ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo', 'sort']) {
    const v = input[key];
    if (v !== null && v !== undefined && v !== '') url.searchParams.set(key, String(v));
  }
  url.searchParams.set('format', 'csv');
  return url;
}

/**
 * The feed URL of a search (GET /v1/feed, Atom): the search's filters as query parameters, its newest matches first.
 * No sort: a feed is always newest first.
 */
export function feedUrlOf(base, input) {
  const url = new URL(base);
  for (const key of ['query', 'applicant', 'productCode', 'yearFrom', 'yearTo']) {
    const v = input[key];
    if (v !== null && v !== undefined && v !== '') url.searchParams.set(key, String(v));
  }
  return url;
}

/** The state a qualifier facet's value selects, and whether it is the one selected now (then it clears it). */
export function qualifierChoice(state, facet, value) {
  const term = facet.term(value);
  const plain = term.replace(/^"|"$/g, '');
  const on = state.quals?.[facet.qualifier] === plain;
  const quals = { ...state.quals };
  if (on) delete quals[facet.qualifier];
  else quals[facet.qualifier] = plain;
  return { on, next: withChanges(state, { quals }) };
}

/** A query that is just a K number: the page offers to open it directly, even if text search does not list it. */
export function kNumberIn(query) {
  const m = /^\s*(k\d{6})\s*$/i.exec(query);
  return m ? m[1].toUpperCase() : null;
}

/**
 * Facet values as the API orders them (docs/contract.md section 6): count descending, then value ascending, at most 10,
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

/**
 * freshness as the server's sourceState computes it (docs/contract.md section 7), for the static page's footer: the
 * service's own function; no sync time (absent or empty) is none.
 */
export function freshnessOf(lastSuccessfulSyncAt, now, maxAgeHours) {
  return serviceFreshnessOf(lastSuccessfulSyncAt || null, now, maxAgeHours);
}

/** Whole days from `received` to `decided` (YYYY-MM-DD each), or null when either is missing: the records' own. */
export function reviewDays(received, decided) {
  return reviewDaysOf(received || null, decided || null);
}

/**
 * FDA's PDF of a clearance's 510(k) summary or statement: FDA files them by the K number's receipt year, in
 * `pdf2/`…`pdf25/` from 2002 and in `pdf/` before. Clearances received before 1996 have no published document.
 */
export function summaryPdfUrl(kNumber, statementOrSummary) {
  if (!statementOrSummary || !/^K\d{6}$/.test(kNumber)) return null;
  const yy = Number(kNumber.slice(1, 3));
  const year = yy >= 76 ? 1900 + yy : 2000 + yy;
  if (year < 1996) return null;
  const folder = year >= 2002 ? `pdf${year - 2000}` : 'pdf';
  return `https://www.accessdata.fda.gov/cdrh_docs/${folder}/${kNumber}.pdf`;
}

/**
 * Runs of years whose counts are far below the snapshot's typical year (under a tenth of the median of the years
 * that have any), so the page can say plainly that absence there means little. `counts` is [{ year, count }]
 * ascending; years with no entry count as zero. Returns [{ from, to, count }].
 */
export function thinYears(counts, { minYear = null, maxYear = null } = {}) {
  const byYear = new Map(counts.filter((c) => c.year !== null).map((c) => [c.year, c.count]));
  if (byYear.size === 0) return [];
  const years = [...byYear.keys()];
  const lo = minYear ?? Math.min(...years);
  const hi = maxYear ?? Math.max(...years);
  const sorted = [...byYear.values()].filter((n) => n > 0).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const limit = median / 10;
  const runs = [];
  for (let y = lo; y <= hi; y++) {
    const n = byYear.get(y) ?? 0;
    if (n >= limit) continue;
    const last = runs.at(-1);
    if (last && last.to === y - 1) {
      last.to = y;
      last.count += n;
    } else runs.push({ from: y, to: y, count: n });
  }
  return runs;
}

const DOWNLOAD_NAMES = { parquet: 'Parquet', sqlite: 'SQLite' };

/**
 * The bulk downloads a meta answer names (`downloads`), as links beside the snapshot's other files: `{ name, href,
 * bytes }`, in meta's order; entries that are not a plain file under `downloads/` are left out.
 */
export function downloadsOf(meta, snapshotBase) {
  const data = meta?.data ?? meta ?? {};
  const listed = Array.isArray(data.downloads) ? data.downloads : [];
  return listed
    .filter((d) => typeof d?.path === 'string' && /^downloads\/[A-Za-z0-9._-]+$/.test(d.path) && typeof d.format === 'string')
    .map((d) => ({
      name: DOWNLOAD_NAMES[d.format] ?? d.format,
      href: new URL(d.path, snapshotBase).href,
      bytes: Number.isSafeInteger(d.bytes) && d.bytes >= 0 ? d.bytes : null,
    }));
}

/** What a meta answer (the API's or the snapshot's meta.json) says the search accepts beyond the contract. */
export function capsOf(meta) {
  const data = meta?.data ?? meta ?? {};
  const sorts = Array.isArray(data.supportedSorts) ? data.supportedSorts.filter((s) => typeof s === 'string') : [];
  const listed = Array.isArray(data.qualifiers) ? data.qualifiers : Array.isArray(data.supportedQualifiers) ? data.supportedQualifiers : [];
  // Named as written in a query ("panel:") or bare ("panel").
  const qualifiers = listed.map((q) => (typeof q === 'string' ? q : q?.name)).filter((q) => typeof q === 'string').map((q) => q.replace(/:$/, ''));
  // What each qualifier takes, in meta's words, for the page's syntax help.
  const qualifierHelp = listed
    .filter((q) => typeof q?.name === 'string')
    .map((q) => ({ name: q.name.replace(/:$/, ''), accepts: typeof q.accepts === 'string' ? q.accepts : '' }));
  const filters = Array.isArray(data.supportedFilters) ? data.supportedFilters : [];
  const facetFields = Array.isArray(data.facetFields) ? data.facetFields.filter((f) => typeof f === 'string') : [];
  return {
    // A sort is only offered when a request can choose it: the contract's search input has none until the service
    // lists its extensions (qualifiers), which came with the `sort` input.
    sorts: filters.includes('sort') || qualifiers.length > 0 ? sorts : [],
    decided: qualifiers.includes('decided'),
    qualifiers,
    qualifierHelp,
    facetFields,
    // GET /v1/export and the `stats` input came with the `facets` input; meta names neither, so its presence stands
    // for them.
    exportUrl: facetFields.length > 0 ? 'export' : null,
    stats: facetFields.length > 0,
  };
}

/** Names people write for a field, mapped to the qualifier that searches it. */
const QUALIFIER_ALIASES = {
  company: 'applicant', manufacturer: 'applicant', firm: 'applicant', sponsor: 'applicant', owner: 'applicant',
  name: 'device', devicename: 'device', product: 'code', productcode: 'code', procode: 'code', committee: 'panel',
  classification: 'class', deviceclass: 'class', date: 'decided', year: 'decided', decisiondate: 'decided',
  receiveddate: 'received', submission: 'type', submissiontype: 'type', days: 'reviewdays', review: 'reviewdays',
};

/** A query's tokens as the grammar reads them: a quoted string (after an optional `-` and `name:`) is one token. */
function queryTokens(q) {
  return q.match(/-?(?:[A-Za-z]+:)?"[^"]*"?|\S+/g) ?? [];
}

/** Letters of `a` that must change to make `b` (Levenshtein), for a mistyped qualifier name. */
function editDistance(a, b) {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/**
 * The page's query with a "did you mean" answer's corrections made (each `{ word, correction }`: every standalone
 * occurrence of the word, in any case, as the service replaced it in the query it counted).
 */
export function correctedQuery(query, corrections) {
  return corrections.reduce((q, c) => q.replace(new RegExp(`(?<![\\p{L}\\p{N}])${c.word.replace(/[^a-z]/g, '')}(?![\\p{L}\\p{N}])`, 'giu'), c.correction), String(query ?? ''));
}

/**
 * What the user probably meant by a query that found nothing (or was refused): other queries, each with the reason
 * in a few words, most likely first. None is checked here: the page runs each and shows only those that find
 * something. `qualifiers` are the names the service takes (meta); at most `limit` are returned.
 */
export function suggestionsFor(query, qualifiers = [], limit = 8) {
  const q = String(query ?? '').trim();
  const tokens = queryTokens(q);
  if (tokens.length === 0) return [];
  const known = new Set(qualifiers);
  const out = [];
  const add = (words, why) => {
    const text = words.filter(Boolean).join(' ').replace(/\s+/g, ' ').trim();
    if (text && text !== q && !out.some((s) => s.q === text)) out.push({ q: text, why });
  };
  const isWord = (t) => t !== undefined && !/^(?:NOT|not|OR|or|AND|and)$/.test(t);
  // Fixes of syntax from other search engines, each on its own and all together.
  const fixes = [];
  const notAt = tokens.findIndex((t, i) => /^(?:NOT|not)$/.test(t) && i > 0 && isWord(tokens[i + 1]));
  if (notAt >= 0) {
    fixes.push({ why: 'NOT is not an operator here: a minus sign leaves a word out', apply: (ts) => ts.flatMap((t, i) => (/^(?:NOT|not)$/.test(t) && i > 0 && isWord(ts[i + 1]) ? [] : /^(?:NOT|not)$/.test(ts[i - 1] ?? '') && i > 1 ? [`-${t}`] : [t])) });
  }
  if (tokens.some((t, i) => t === 'or' && i > 0 && isWord(tokens[i + 1]))) {
    fixes.push({ why: 'OR in capitals matches either word; a lowercase "or" is searched as a word', apply: (ts) => ts.map((t, i) => (t === 'or' && i > 0 && isWord(ts[i + 1]) ? 'OR' : t)) });
  }
  if (tokens.some((t, i) => /^(?:AND|and|&&|\+)$/.test(t) && i > 0 && isWord(tokens[i + 1]))) {
    fixes.push({ why: 'every word must match already; "and" is searched as a word', apply: (ts) => ts.filter((t, i) => !(/^(?:AND|and|&&|\+)$/.test(t) && i > 0 && isWord(ts[i + 1]))) });
  }
  // A field name that is not a qualifier: the qualifier people mean by it (an alias, or a name one or two letters
  // away), else the value alone.
  const unknownOf = (t) => {
    const m = /^(-?)([A-Za-z]+):(.+)$/.exec(t);
    return m && !known.has(m[2].toLowerCase()) ? m : null;
  };
  const meant = (name) => {
    const alias = QUALIFIER_ALIASES[name];
    if (alias && known.has(alias)) return alias;
    const near = [...known].map((k) => ({ k, d: editDistance(name, k) })).sort((a, b) => a.d - b.d)[0];
    return near && near.d <= 2 ? near.k : null;
  };
  const unknown = known.size ? tokens.map(unknownOf).filter(Boolean) : [];
  if (unknown.some((m) => meant(m[2].toLowerCase()))) {
    const names = unknown.filter((m) => meant(m[2].toLowerCase())).map((m) => `${m[2]}: is not a qualifier, ${meant(m[2].toLowerCase())}: is`);
    fixes.push({ why: names.join('; '), apply: (ts) => ts.map((t) => { const m = unknownOf(t); const to = m && meant(m[2].toLowerCase()); return to ? `${m[1]}${to}:${m[3]}` : t; }) });
  }
  const fixed = fixes.reduce((ts, f) => f.apply(ts), tokens);
  if (fixes.length > 1) add(fixed, fixes.map((f) => f.why).join('; '));
  for (const f of fixes) add(f.apply(tokens), f.why);
  if (unknown.length) {
    add(tokens.map((t) => { const m = unknownOf(t); return m ? `${m[1]}${m[3]}` : t; }), `${unknown.map((m) => `${m[2]}:`).join(', ')} ${unknown.length === 1 ? 'is not a qualifier' : 'are not qualifiers'}: the value as words`);
  }
  // A qualifier with a quoted value asks for exactly that (an applicant's whole name): the words anywhere, or the
  // qualifier on each word.
  tokens.forEach((t, i) => {
    const m = /^(-?)([A-Za-z]+):"([^"]*)"?$/.exec(t);
    if (!m || m[1] || !known.has(m[2].toLowerCase())) return;
    const words = m[3].trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) return;
    const before = tokens.slice(0, i);
    const after = tokens.slice(i + 1);
    add([...before, ...words, ...after], `the words anywhere, not only as the exact ${m[2].toLowerCase()}`);
    add([...before, ...words.map((w) => `${m[2]}:${w}`), ...after], `${m[2]}: matching the start of each word, not the exact value`);
  });
  // A phrase in quotes needs its words side by side in the device name.
  tokens.forEach((t, i) => {
    const m = /^(-?)"([^"]*)"?$/.exec(t);
    if (!m || m[1]) return;
    add([...tokens.slice(0, i), m[2], ...tokens.slice(i + 1)], 'the words in any order and any field, not as a phrase');
  });
  // Too many words: each word left out in turn.
  const plain = fixed.filter((t) => !t.includes(':') && !t.startsWith('-') && !t.startsWith('"') && isWord(t));
  if (plain.length >= 2 && !fixed.includes('OR')) {
    for (const w of plain.slice(0, 6)) add(fixed.filter((t) => t !== w), `“${w}” left out`);
  }
  return out.slice(0, limit);
}
