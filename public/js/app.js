// The search page: reads its state from the location hash, asks a data source (the API, or the snapshot's static
// files), and renders. One module wires the DOM; state.js, the sources and view.js do the work.
import { apiSource, probeApi } from './api-source.js';
import { recordHistoryReader } from './record-history.js';
import { fetchJson } from './snapshot-head.js';
import { SORT_LABELS, correctedQuery, dateBound, exportUrlOf, feedUrlOf, kNumberIn, parseHash, rangeNeedsDays, searchInput, searchKey, suggestionsFor, toHash, withChanges } from './state.js';
import * as view from './view.js';

const $ = (id) => document.getElementById(id);
const { h, num } = view;

const params = new URLSearchParams(location.search);
const snapshotBase = new URL(params.get('snapshot') ?? 'snapshot/', document.baseURI);
const endpoint = new URL('v1/query', document.baseURI);
const isWide = () => matchMedia('(min-width: 52rem)').matches;
const BASE_TITLE = document.title;
/** Records a CSV built by paging the search (no export URL) holds at most. */
const PAGED_EXPORT_LIMIT = 5_000;

let source = null;
let current = parseHash(location.hash);
let lastKey = null;
let searchSeq = 0;
let searchAbort = null;
let recordSeq = 0;
let firstResults = true;
let typing = false;
let typingTimer = 0;
let lastTotal = 0;
let focusResultsNext = false;
/** Settles when the first search has been answered or has failed. */
let firstAnswered = () => {};
const firstAnswer = new Promise((resolve) => (firstAnswered = resolve));

/** Device types by product code, for facets and records; filled as classifications arrive. */
const codeNames = new Map();
const codeLoads = new Map();
function loadCodeName(code) {
  if (!codeLoads.has(code)) {
    codeLoads.set(code, source.classification(code).then(
      (c) => (c?.deviceType ? codeNames.set(code, c.deviceType) : null, c),
      () => (codeLoads.delete(code), undefined),
    ));
  }
  return codeLoads.get(code);
}

/** Whether the snapshot's bulk downloads are served beside it (service.json says when not). */
let downloadsServed = true;

async function chooseSource() {
  const forced = params.get('mode');
  if (forced !== 'static') {
    // service.json says whether an API answers beside the page (the server's copy names it; a static host's copy
    // says null), so a static host never sees a POST it must refuse with an error in the console.
    const service = await fetch(new URL('service.json', document.baseURI)).then((r) => (r.ok ? r.json() : null)).catch(() => null);
    // A host that leaves the snapshot's bulk downloads out (the Worker's assets) says `downloads: null`.
    downloadsServed = service?.downloads !== null;
    const api = service && 'api' in service ? service.api : undefined;
    if (api !== null || forced === 'server') {
      const at = api ? new URL(api, document.baseURI) : endpoint;
      const meta = await probeUntilReady(at);
      if (meta) return apiSource({ endpoint: at, metaBody: meta, snapshotBase });
      if (forced === 'server') throw new Error('The API did not answer at this address, and server mode was asked for.');
    }
  }
  return staticSourceFor();
}

/**
 * Waits between asks while the service prepares its data (HTTP 503, as during the first build of a snapshot):
 * doubling from 1 s up to 15 s, or the service's own Retry-After up to 60 s; after 30 minutes the page stops and says
 * so, rather than asking forever.
 */
const PREPARE_FIRST_MS = 1_000;
const PREPARE_MAX_MS = 15_000;
const PREPARE_RETRY_AFTER_MAX_MS = 60_000;
const PREPARE_GIVE_UP_MS = 30 * 60_000;

/** The service's meta once it has data, asking again while it answers 503; null when there is no API at `at`. */
async function probeUntilReady(at) {
  const started = Date.now();
  let wait = PREPARE_FIRST_MS;
  for (;;) {
    const answer = await probeApi(at);
    if (!answer?.preparing) {
      if (document.documentElement.dataset.preparing) {
        delete document.documentElement.dataset.preparing;
        $('status').textContent = 'Loading…';
      }
      return answer?.meta ?? null;
    }
    if (Date.now() - started > PREPARE_GIVE_UP_MS) {
      throw new Error('The service is still preparing its data after 30 minutes. Try reloading the page later.');
    }
    const ms = answer.retryAfter ? Math.min(answer.retryAfter * 1000, PREPARE_RETRY_AFTER_MAX_MS) : wait;
    wait = Math.min(wait * 2, PREPARE_MAX_MS);
    document.documentElement.dataset.preparing = 'true';
    $('status').textContent = `The data is being prepared: the service is building its search data and is not ready yet. This page tries again on its own (next in ${Math.round(ms / 1000)} s).`;
    await new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/**
 * Static mode: the API's engine over the snapshot's own index. Pagefind only where the snapshot has a Pagefind index
 * (an option of the build) and either `?engine=pagefind` asks for it or the snapshot predates the chunked index and
 * its whole index is too large to download.
 */
async function staticSourceFor() {
  // The index's directory, the snapshot's meta and the modules are asked for together, not one after another: each
  // round trip costs a phone about 150 ms. A first view that searches needs the engine too; the landing page does not.
  const wantsPagefind = params.get('engine') === 'pagefind';
  // A first view of a lineage reads no search index: the index's directory waits for the first search (the search
  // behind the view runs once the view has its records), so that it does not share a phone's link with the view's
  // files. index.html leaves out its preload on such an address.
  const lineageFirst = Boolean(current.record && current.lineage) && !wantsPagefind;
  const directory = wantsPagefind || lineageFirst ? null : fetchJson(new URL('search/chunks.json', snapshotBase).href).catch(() => null);
  const meta = fetchJson(new URL('meta.json', snapshotBase).href);
  meta.catch(() => {});
  if (!wantsPagefind && (current.q.trim() !== '' || current.productCode || current.applicant || current.from !== null || current.to !== null || Object.keys(current.quals).length > 0)) {
    import('./search-engine.js').catch(() => {});
  }
  // A first view of a lineage needs its view, the walk and the lineage header, not the search index: its walk starts
  // as soon as the modules are in, while the index's directory still loads.
  const module = import('./static-source.js');
  let early = null;
  let lineageHeader = null;
  if (current.record && current.lineage) {
    // The view's modules first: they are small, and a phone's link carries answers in turn, so asked for after the
    // closure file they would arrive after it and the view would wait for them.
    import('./lineage.js').catch(() => {});
    import('./lineage-engine.js').catch(() => {});
    // The header and the tables of the start's closure file (its whole lineage; the number without its last three
    // digits names it), both at once: the header would name the file one round trip later. The tables (their most
    // bytes: CLOSURE_TABLES_BYTES of lineage-source.js) say where the start's entry is, read next. A lineage too long for the closure file, or a snapshot without
    // one, walks the shards after it.
    const header = fetch(new URL('lineage/index.json', snapshotBase).href);
    lineageHeader = header;
    const path = `lineage/closure/${current.lineage}/${current.record.slice(0, -3)}.bin`;
    // index.html asked for the tables already (`lineageTables`) while the page loaded.
    const asked = window.lineageTables?.path === path ? window.lineageTables : null;
    const first = [{ path, response: asked?.response ?? fetch(new URL(path, snapshotBase).href, { headers: { Range: 'bytes=0-6003' } }) }];
    first[0].response.catch(() => {});
    header.catch(() => {});
    early = module.then((m) => {
      const started = m.recordsAndLineage(snapshotBase, { header, first });
      started.lineage.prepare(current.record, current.lineage);
      return started;
    });
    early.catch(() => {});
  }
  const { engineHeader, hasPagefind, staticSource } = await module;
  // A snapshot with lineage files has the chunked index too (it came first), so the index can be read later; one
  // without them (its header missing) is one built before lineage, which may need Pagefind: read as before.
  if (lineageFirst && (await lineageHeader.catch(() => null))?.ok) {
    const source = staticSource({ snapshotBase, later: () => engineHeader(snapshotBase), meta, started: await early.catch(() => null) });
    source.prefetch(current);
    return source;
  }
  const header = wantsPagefind ? null : await engineHeader(snapshotBase, directory);
  if (header) {
    const source = staticSource({ snapshotBase, header, meta, started: await early?.catch(() => null) });
    source.prefetch(current);
    return source;
  }
  if (!(await hasPagefind(snapshotBase))) {
    throw new Error(
      wantsPagefind
        ? 'This snapshot has no Pagefind index (it was built without --pagefind), so ?engine=pagefind cannot be used here. Open the page without ?engine=pagefind to search with the snapshot’s own index.'
        : 'This snapshot has no search index the page can read: neither its chunked index (search/chunks.json) nor a Pagefind index.',
    );
  }
  return (await import('./pagefind-source.js')).staticSource({ snapshotBase });
}

function showAlert(message) {
  const el = $('alert');
  el.hidden = !message;
  el.textContent = message ?? '';
}

function syncForm(state) {
  if (document.activeElement !== $('q') || !typing) $('q').value = state.q;
  if (document.activeElement !== $('from')) $('from').value = state.from ?? '';
  if (document.activeElement !== $('to')) $('to').value = state.to ?? '';
  $('size').value = String(state.size);
  if (source?.caps.sorts.length) $('sort').value = state.sort && source.caps.sorts.includes(state.sort) ? state.sort : source.caps.sorts[0];
  const note = $('date-note');
  const widened = !source?.caps.decided && (state.from !== null || state.to !== null) && rangeNeedsDays(state);
  note.hidden = !widened;
  note.textContent = widened ? 'This service filters decision dates by whole years: the results cover every day of the years chosen.' : '';
}

/** Moves to a state: a new history entry, or (while typing) a replaced one so back does not replay keystrokes. */
function navigate(state, { replace = false } = {}) {
  const hash = toHash(state);
  if (hash === (location.hash || '#')) return;
  if (replace) history.replaceState(null, '', hash);
  else history.pushState(null, '', hash);
  route();
}

function focusKeyOf(el) {
  return el?.dataset?.focusKey ?? null;
}

function restoreFocus(key) {
  if (!key) return;
  const el = document.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
  if (el) el.focus();
}

function route({ fromHistory = false } = {}) {
  const state = parseHash(location.hash);
  const previous = current;
  current = state;
  if (fromHistory) typing = false;
  syncForm(state);
  view.renderActive($('active'), state);
  const focusKey = focusKeyOf(document.activeElement);
  const shown = showRecord(state, previous);
  const key = searchKey(state);
  if (key !== lastKey) {
    lastKey = key;
    // An address that opens a record (or its lineage) first shows no results: the search behind it waits until the
    // record's view is drawn, so that its files do not take a phone's link from the view's.
    if (state.record && firstResults) void shown.catch(() => {}).then(() => key === lastKey && runSearch(state, focusKey, previous));
    else void runSearch(state, focusKey, previous);
  }
}

/** The line under the status while a search's own files load (a phrase's forward word lists at a million records). */
const SEARCH_LOADING = { id: 'search-loading-text', text: 'Loading the search index for this search…' };

async function runSearch(state, focusKey, previous) {
  const seq = ++searchSeq;
  searchAbort?.abort();
  const abort = (searchAbort = new AbortController());
  $('main').setAttribute('aria-busy', 'true');
  $('status').textContent = 'Searching…';
  $('search-loading').replaceChildren();
  view.renderSuggestions($('suggest'), null);
  $('link-status').textContent = '';
  try {
    const res = await source.search(state, abort.signal, (loaded, expected) => seq === searchSeq && view.renderLoading($('search-loading'), SEARCH_LOADING, { loaded, expected }));
    if (seq !== searchSeq) return;
    $('search-loading').replaceChildren();
    showAlert(null);
    view.renderNotice($('notice'), res.warnings);
    view.renderResults($('list'), res.items, state);
    view.renderPager($('pager'), res.total, state);
    view.renderReviewStats($('review'), res.stats);
    lastTotal = res.total;
    $('status').replaceChildren(statusText(state, res.total));
    // Which address these results answer: lets a test (or a script) wait for a given search to be on screen.
    $('results').dataset.answers = toHash(state);
    addKNumberShortcut(state);
    if (res.total === 0) void showSuggestions(state, seq);
    else if (res.total < FEW_FOR_SPELLING) void showSpelling(state, seq, res.total);
    showFollow(state);
    showFacets(res, state, seq);
    // After the counts are asked for: a source that loads both may then load the counts first. With the filters
    // folded (a phone), the review figures wait until the end of the results comes near the screen or the filters
    // open, so that columns nobody looks at yet do not take the link.
    if (!res.stats && res.loadStats) {
      let started = false;
      const start = () => {
        if (started || seq !== searchSeq) return;
        started = true;
        res
          .loadStats((loaded, expected) => seq === searchSeq && view.renderReviewPending($('review'), { loaded, expected }))
          .then((stats) => seq === searchSeq && view.renderReviewStats($('review'), stats))
          .catch(() => seq === searchSeq && view.renderReviewStats($('review'), null));
      };
      if ($('filters-panel').open) start();
      else {
        whenNear($('pager'), start);
        whenFiltersVisible(start);
      }
    }
    markFocusKeys();
    if (firstResults) {
      firstResults = false;
      performance.mark('first-results');
      document.documentElement.dataset.ready = 'true';
      void showCoverage();
    }
    if (focusResultsNext) {
      focusResultsNext = false;
      $('results-heading').focus();
    } else if (previous && previous.page !== state.page && !state.record) $('results-heading').focus();
    else restoreFocus(focusKey);
  } catch (err) {
    if (err?.name === 'AbortError' || seq !== searchSeq) return;
    $('search-loading').replaceChildren();
    lastKey = null;
    // A query the service refuses (a field name that is not a qualifier, a malformed value) is the query's mistake,
    // not a failure: say so, with the service's reason, and offer what it may mean.
    const refused = err?.code === 'invalid_input' || err?.name === 'QueryError';
    $('status').textContent = refused ? 'Not searched: the query has a mistake (see above).' : 'The search failed.';
    showAlert(err?.message ?? String(err));
    if (refused) void showSuggestions(state, seq);
  } finally {
    if (seq === searchSeq) $('main').removeAttribute('aria-busy');
    firstAnswered();
  }
}

/** Suggestions a zero-result answer checks at most: each is one search. */
const SUGGESTIONS_CHECKED = 8;
/** Suggestions shown at most, of those that find something. */
const SUGGESTIONS_SHOWN = 4;

/**
 * For a search that found nothing: what the user probably meant (other syntax, fewer words, no filters), each run
 * first, and shown with its count only when it finds something.
 */
async function showSuggestions(state, seq) {
  const box = $('suggest');
  const filtered = state.productCode || state.applicant || state.from !== null || state.to !== null || Object.keys(state.quals).length > 0;
  const fresh = { ...state, page: 1, record: null };
  const candidates = suggestionsFor(state.q, source.caps.qualifiers).map((s) => ({ state: { ...fresh, q: s.q }, label: s.q, why: s.why }));
  if (filtered) {
    const all = { ...fresh, productCode: null, applicant: null, from: null, to: null, quals: {} };
    candidates.unshift({ state: all, label: state.q.trim() || 'every clearance', why: 'without the filters' });
    for (const c of candidates.slice(1, 4)) candidates.push({ state: { ...all, q: c.state.q }, label: c.label, why: `${c.why}; without the filters` });
  }
  const spelling = spellingOf(state, 0);
  if (candidates.length === 0) {
    const corrected = await spelling;
    if (seq !== searchSeq || corrected.length === 0) return;
    view.renderSuggestions(box, { found: corrected });
    markFocusKeys();
    return;
  }
  view.renderSuggestions(box, { checking: true });
  const checked = candidates.slice(0, SUGGESTIONS_CHECKED);
  const totals = await Promise.all(checked.map((c) => source.search({ ...c.state, size: 10 }).then((r) => r.total, () => 0)));
  const corrected = await spelling;
  if (seq !== searchSeq) return;
  const others = checked.map((c, i) => ({ ...c, total: totals[i], href: toHash(c.state) })).filter((c) => c.total > 0 && !corrected.some((s) => s.label === c.label));
  view.renderSuggestions(box, { found: [...corrected, ...others.slice(0, SUGGESTIONS_SHOWN)] });
  markFocusKeys();
}

/** Below this many matches, a search also looks for a spelling that finds more. */
const FEW_FOR_SPELLING = 3;

/**
 * "Did you mean" from the index's own words: the search with a word the index hardly knows corrected, each with its
 * exact count under the same filters (the service's `spelling` input, or the same engine over a static snapshot),
 * those that find more than the search itself. None when the source offers none or fails.
 */
async function spellingOf(state, total) {
  if (!source.spelling) return [];
  const fresh = { ...state, page: 1, record: null };
  const answered = await source.spelling(fresh, total).catch(() => []);
  return answered.map((s) => {
    const q = correctedQuery(state.q, s.corrections);
    const next = { ...fresh, q };
    return { state: next, label: q, why: s.corrections.map((c) => `“${c.correction}” for “${c.word}”`).join(', '), total: s.total, href: toHash(next), spelling: true };
  }).filter((s) => s.label !== state.q);
}

/** For a search that found a few: a spelling that finds more, if there is one (nothing shown otherwise). */
async function showSpelling(state, seq, total) {
  const found = await spellingOf(state, total);
  if (seq !== searchSeq || found.length === 0) return;
  view.renderSuggestions($('suggest'), { found });
  markFocusKeys();
}

function showFacets(res, state, seq) {
  const render = (facets) => {
    // Asked for with the `facets` input, the years are every year of the matches.
    const allYears = source.caps.facetFields?.includes('decisionYear');
    view.renderFacets($('facets'), facets.map((f) => (f.field === 'decisionYear' && allYears ? { ...f, all: true } : f)), state, codeNames);
    markFocusKeys();
    // The service labels product codes itself when asked for facets; otherwise the classifications name them.
    const codes = facets.find((f) => f.field === 'productCode')?.values.filter((v) => !v.label).map((v) => String(v.value)) ?? [];
    for (const code of codes.filter((c) => !codeNames.has(c))) {
      loadCodeName(code).then(() => seq === searchSeq && view.nameProductCodes($('facets'), codeNames));
    }
  };
  if (res.facets) return render(res.facets);
  if (!res.loadFacets) return;
  view.renderFacetsPending($('facets'));
  // Facets counted before the rest are shown above the line that says the rest are loading.
  const pending = () => $('facets').querySelector('.facets-pending') ?? $('facets');
  let progress = null;
  whenFiltersVisible(() => {
    if (seq !== searchSeq) return;
    res
      .loadFacets(
        (loaded, expected) => seq === searchSeq && view.renderFacetsPending(pending(), (progress = { loaded, expected })),
        (some) => {
          if (seq !== searchSeq) return;
          render(some);
          const box = h('div', { class: 'facets-pending' });
          $('facets').append(box);
          view.renderFacetsPending(box, progress);
        },
      )
      .then((facets) => seq === searchSeq && render(facets))
      .catch(() => seq === searchSeq && $('facets').replaceChildren(h('p', { class: 'muted' }, 'Filter counts could not be loaded.')));
  });
}

/** Runs `fn` once `el` is on screen or 200 px below it (at once where the browser cannot tell). */
function whenNear(el, fn) {
  if (typeof IntersectionObserver !== 'function') return fn();
  const io = new IntersectionObserver((entries) => {
    if (!entries.some((e) => e.isIntersecting)) return;
    io.disconnect();
    fn();
  }, { rootMargin: '0px 0px 200px 0px' });
  io.observe(el);
}

/** Runs `fn` now if the filters panel is open, else when it is first opened (a folded panel on a phone). */
function whenFiltersVisible(fn) {
  const panel = $('filters-panel');
  if (panel.open) return fn();
  const onToggle = () => {
    if (!panel.open) return;
    panel.removeEventListener('toggle', onToggle);
    fn();
  };
  panel.addEventListener('toggle', onToggle);
}

/**
 * "Follow this search": the Atom feed of this exact search from the API in server mode; in static mode the
 * snapshot's feed of the newest clearances (static hosts carry no feed per search).
 */
function showFollow(state) {
  const link = $('follow');
  if (source.mode === 'server') {
    link.href = feedUrlOf(new URL('feed', endpoint), searchInput(state, source.caps)).href;
    link.textContent = 'Follow this search';
    link.removeAttribute('title');
  } else {
    // A static host has no feed per search: the one feed it has covers every search, and the link says so (in one
    // line on a phone, so the results stay on the first screen; its title says it in full).
    link.href = new URL('feeds/new.atom', snapshotBase).href;
    link.textContent = 'Follow all new clearances (no search feed)';
    link.title = 'This host has no feed per search: this feed has every new clearance, so it covers this search.';
  }
  link.hidden = false;
}

function statusText(state, total) {
  const pages = Math.max(1, Math.ceil(total / state.size));
  const q = state.q.trim();
  const what = `${num(total)} ${total === 1 ? 'clearance' : 'clearances'}`;
  const frag = document.createDocumentFragment();
  if (total === 0) {
    const filtered = state.productCode || state.applicant || state.from || state.to || Object.keys(state.quals).length > 0;
    frag.append(q ? `No clearances match “${q}”` : 'No clearances match', filtered ? ' with these filters. Try removing a filter.' : '. Try fewer or shorter words.');
  } else if (state.page > pages) {
    frag.append(`${what}; page ${num(state.page)} is past the last page. `, h('a', { href: toHash({ ...state, page: 1 }) }, 'Go to page 1'));
  } else {
    frag.append(q ? `${what} ${total === 1 ? 'matches' : 'match'} “${q}”` : `${what}`, pages > 1 ? ` · page ${num(state.page)} of ${num(pages)}` : '');
  }
  return frag;
}

function addKNumberShortcut(state) {
  const k = kNumberIn(state.q);
  const existing = $('k-shortcut');
  existing?.remove();
  if (!k) return;
  $('status').after(h('p', { id: 'k-shortcut', class: 'shortcut' }, h('a', { href: toHash({ ...state, record: k }) }, `Open clearance ${k}`)));
}

/** Links that are re-rendered get a stable key so focus can return to the same control after a search. */
function markFocusKeys() {
  for (const a of document.querySelectorAll('#facets a, #active a, #pager a')) a.dataset.focusKey = a.dataset.value ? `${a.closest('details')?.className}:${a.dataset.value}` : a.getAttribute('aria-label') ?? a.textContent;
}

async function showRecord(state, previous) {
  const section = $('record');
  const results = $('results');
  if (!state.record) {
    section.hidden = true;
    results.hidden = false;
    document.title = BASE_TITLE;
    if (previous?.record) {
      const link = document.querySelector(`#list a[href$="record=${previous.record}"]`);
      (link ?? $('results-heading')).focus();
    }
    return;
  }
  if (previous?.record === state.record && previous?.lineage === state.lineage && !section.hidden) return;
  const seq = ++recordSeq;
  const k = state.record;
  // On a phone an open filters panel would push the record below the fold.
  if (!isWide()) $('filters-panel').open = false;
  const backHref = toHash({ ...state, record: null, lineage: null });
  section.hidden = false;
  results.hidden = true;
  if (state.lineage) return showLineage(state, seq, 'showLineageView');
  view.renderRecordLoading(section, k, backHref);
  $('record-heading').focus();
  try {
    const record = await source.record(k);
    if (seq !== recordSeq) return;
    if (!record) {
      view.renderRecordMissing(section, k, backHref);
      $('record-heading').focus();
      void showLineage(state, seq, 'showLineageSummary');
      return;
    }
    const fresh = { q: '', productCode: null, applicant: null, from: null, to: null, quals: {}, page: 1, size: state.size, sort: null, record: null };
    const filterHref = record.productCode ? toHash({ ...fresh, productCode: record.productCode }) : null;
    const classification = record.productCode ? loadCodeName(record.productCode) : Promise.resolve(null);
    view.renderRecord(section, record, { backHref, filterHref, codeName: codeNames.get(record.productCode) ?? null });
    document.title = `${record.deviceName || k} (${k}) · FDA 510(k) clearances`;
    $('record-heading').focus();
    void showRelated(record, fresh, seq);
    void showHistory(record.kNumber, seq);
    void showLineage(state, seq, 'showLineageSummary');
    if (record.productCode) {
      const c = await classification;
      if (seq !== recordSeq) return;
      const box = $('classification');
      if (c === undefined) box.replaceChildren(h('h3', {}, `Product code ${record.productCode}`), h('p', {}, 'The classification could not be loaded.'));
      else view.renderClassification(box, record.productCode, c);
      const dd = section.querySelector('dd[data-field="productCode"] > span');
      if (c?.deviceType && dd && !dd.textContent.includes(c.deviceType)) dd.firstChild.textContent = `${record.productCode} (${c.deviceType}) `;
    }
  } catch (err) {
    if (seq !== recordSeq) return;
    section.replaceChildren(h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')), h('p', { role: 'alert' }, err?.message ?? String(err)));
  }
}

/** The record view's lineage part, or the lineage view (lineage.js, loaded when first needed). */
async function showLineage(state, seq, part) {
  const lineage = source.lineage ? await import('./lineage.js') : null;
  if (lineage && seq === recordSeq) await lineage[part]($('record'), { state, source, endpoint, snapshotBase, current: () => seq === recordSeq });
}

/** Record histories from the snapshot's history files (the same files in server and static mode). */
let recordHistory = null;

/** The record's history in the data: first seen, each change, and where the kept history starts. */
async function showHistory(kNumber, seq) {
  recordHistory ??= recordHistoryReader(snapshotBase);
  const history = await recordHistory(kNumber).catch(() => undefined);
  const box = $('record-history');
  if (seq !== recordSeq || !box) return;
  view.renderRecordHistory(box, history);
  box.dataset.loaded = 'true';
}

/** Other clearances of the record's product code and of its applicant: the newest few, and a link to all. */
async function showRelated(record, fresh, seq) {
  const box = $('related');
  const lists = [];
  if (record.productCode) lists.push({ heading: `Other clearances with product code ${record.productCode}`, state: { ...fresh, productCode: record.productCode } });
  if (record.applicant) lists.push({ heading: `Other clearances from ${record.applicant}`, state: { ...fresh, applicant: record.applicant } });
  const answers = await Promise.all(lists.map((l) => source.search({ ...l.state, size: 6 }).catch(() => null)));
  if (seq !== recordSeq || !box) return;
  lists.forEach((l, i) => {
    const res = answers[i];
    if (!res) return box.append(h('p', { class: 'muted' }, `${l.heading}: could not be loaded.`));
    view.renderRelated(box, { heading: l.heading, items: res.items, total: res.total, allHref: toHash(l.state), exclude: record.kNumber, state: current });
  });
}

let aboutCache = null;
const about = () => (aboutCache ??= source.about());

/** The coverage note: what the snapshot holds at once, the thin years once the per-year counts are in. */
async function showCoverage() {
  const a = await about().catch(() => null);
  if (!a) return;
  view.renderCoverage($('coverage'), { about: a, years: null });
  const years = await source.yearCounts().catch(() => null);
  if (years) view.renderCoverage($('coverage'), { about: a, years });
}

function renderAbout(a) {
  const total = a.totalRecords;
  if (typeof total === 'number') $('tagline').textContent = `${num(total)} medical device clearances from the US Food and Drug Administration's 510(k) database.`;
  view.renderFreshness($('freshness'), a);
  view.renderDownloads($('downloads'), downloadsServed ? a.downloads : []);
  $('mode').textContent =
    source.mode === 'server'
      ? 'Answers come from this service’s API.'
      : source.engine === 'pagefind'
        ? 'Static copy: text search runs on Pagefind, whose word matching and order differ from the service’s; totals may differ. Sorting and qualifier filters need the service.'
        : 'Static copy: answers come from the snapshot’s files, by the same rules as the service.';
}

function setupControls() {
  const sorts = source.caps.sorts;
  $('sort-field').hidden = sorts.length === 0;
  $('sort').replaceChildren(...sorts.map((s) => h('option', { value: s }, SORT_LABELS[s] ?? s)));
  view.renderSyntaxHelp($('syntax-body'), source.caps, { engine: source.engine });
  if (source.engine === 'pagefind') $('q-hint').textContent = 'Every word must match; Pagefind also matches other forms of a word (“catheters” for “catheter”).';
}

async function download() {
  const button = $('download');
  const status = $('download-status');
  const state = current;
  if (source.caps.exportUrl) {
    // The service streams every match itself: a plain link, so the browser saves it as it arrives.
    const url = exportUrlOf(new URL(source.caps.exportUrl, endpoint), searchInput(state, source.caps));
    location.assign(url.href);
    status.textContent = `Downloading all ${num(lastTotal)} clearances as CSV.`;
    return;
  }
  button.disabled = true;
  try {
    let records;
    let total;
    let snapshotId = null;
    if (source.exportRecords) {
      ({ records, total, snapshotId } = await source.exportRecords(state, (n, of) => (status.textContent = `Collecting ${num(n)} of ${num(of)}…`)));
    } else {
      records = [];
      total = lastTotal;
      const size = 50;
      for (let page = 1; records.length < Math.min(total, PAGED_EXPORT_LIMIT); page++) {
        const res = await source.search({ ...state, page, size });
        if (res.items.length === 0) break;
        records.push(...res.items.slice(0, PAGED_EXPORT_LIMIT - records.length));
        status.textContent = `Collecting ${num(records.length)} of ${num(Math.min(total, PAGED_EXPORT_LIMIT))}…`;
      }
    }
    // The server's own CSV writer and file name (src/operations/csv-format.ts, bundled): the same bytes as its export.
    const { csvText, exportFileName } = await import('./csv-format.js');
    const blob = new Blob([csvText(records)], { type: 'text/csv;charset=utf-8' });
    const a = h('a', { href: URL.createObjectURL(blob), download: exportFileName(searchInput(state, source.caps), snapshotId) });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    status.textContent =
      records.length < total
        ? `Downloaded the first ${num(records.length)} of ${num(total)} clearances: this page collects at most ${num(records.length)} records one file at a time. Narrow the search to get the rest.`
        : `Downloaded all ${num(records.length)} ${records.length === 1 ? 'clearance' : 'clearances'} as CSV.`;
  } catch (err) {
    status.textContent = `The download failed: ${err?.message ?? err}`;
  } finally {
    button.disabled = false;
  }
}

/** The address of the current search: the page's own URL with the state's hash, so opening it repeats the search. */
function searchLink() {
  const url = new URL(location.href);
  url.hash = toHash({ ...current, record: null });
  return url.href;
}

/** Copies the search's link; where the browser will not (no clipboard access), shows it selected to copy by hand. */
async function copyLink() {
  const status = $('link-status');
  const link = searchLink();
  $('copy-link').dataset.link = link;
  try {
    await navigator.clipboard.writeText(link);
    status.replaceChildren('Link copied: it opens this search with its filters, sort and page.');
  } catch {
    const box = h('input', { type: 'text', readonly: true, value: link, class: 'link-box', 'aria-label': 'Link to this search' });
    status.replaceChildren('Copy this link to share the search: ', box);
    box.focus();
    box.select();
  }
}

function wire() {
  $('search').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(typingTimer);
    const q = $('q').value;
    const wasTyping = typing;
    typing = false;
    navigate(withChanges(current, { q }), { replace: wasTyping });
    if (q === current.q) $('results-heading').focus();
  });
  $('q').addEventListener('input', () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(() => {
      const q = $('q').value;
      if (q === current.q) return;
      navigate(withChanges(current, { q }), { replace: typing });
      typing = true;
    }, 250);
  });
  $('dates').addEventListener('submit', (e) => {
    e.preventDefault();
    let from = dateBound($('from').value, false);
    let to = dateBound($('to').value, true);
    if (from !== null && to !== null && to < from) [from, to] = [to, from];
    if (!isWide()) {
      $('filters-panel').open = false;
      focusResultsNext = true;
    }
    navigate(withChanges(current, { from, to }));
  });
  $('size').addEventListener('change', () => navigate(withChanges(current, { size: Number($('size').value) })));
  $('sort').addEventListener('change', () => {
    const sort = $('sort').value;
    navigate(withChanges(current, { sort: sort === source.caps.sorts[0] ? null : sort }));
  });
  $('download').addEventListener('click', () => void download());
  $('copy-link').addEventListener('click', () => void copyLink());
  // On a phone the filters sit above the results: after choosing one, fold them so the new results are in view.
  $('facets').addEventListener('click', (e) => {
    if (!e.target.closest?.('a.facet-value') || isWide()) return;
    $('filters-panel').open = false;
    focusResultsNext = true;
  });
  addEventListener('hashchange', () => route({ fromHistory: true }));
  addEventListener('popstate', () => route({ fromHistory: true }));
}

async function start() {
  wire();
  // Wide screens show the filters beside the results; on a phone they stay folded until asked for.
  if (isWide()) $('filters-panel').open = true;
  $('filters-panel').querySelector('summary').addEventListener('click', (e) => {
    if (isWide()) e.preventDefault();
  });
  try {
    source = await chooseSource();
    await source.init();
  } catch (err) {
    $('status').textContent = 'The page could not start.';
    showAlert(err?.message ?? String(err));
    return;
  }
  document.documentElement.dataset.mode = source.mode;
  document.documentElement.dataset.engine = source.engine;
  setupControls();
  route();
  // The footer's freshness waits for the first answer (or its failure), so that its file does not share a phone's
  // link with what the first results need.
  await firstAnswer;
  about().then(renderAbout, () => {
    $('freshness').textContent = 'Data freshness: unknown (the snapshot description could not be loaded).';
  });
}

void start();
