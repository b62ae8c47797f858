// The search page: reads its state from the location hash, asks a data source (the API, or the snapshot's static
// files), and renders. One module wires the DOM; state.js, the sources and view.js do the work.
import { apiSource, probeApi } from './api-source.js';
import { kNumberIn, parseHash, searchKey, toHash, withChanges, PAGE_SIZE } from './state.js';
import * as view from './view.js';

const $ = (id) => document.getElementById(id);
const { h, num } = view;

const params = new URLSearchParams(location.search);
const snapshotBase = new URL(params.get('snapshot') ?? 'snapshot/', document.baseURI);
const endpoint = new URL('v1/query', document.baseURI);
const wide = matchMedia('(min-width: 52rem)').matches;
const BASE_TITLE = document.title;

let source = null;
let current = parseHash(location.hash);
let lastKey = null;
let searchSeq = 0;
let searchAbort = null;
let recordSeq = 0;
let firstResults = true;
let typing = false;
let typingTimer = 0;

// Static mode's module is loaded only when needed: a page served by the API never downloads it.
const staticSource = async (options) => (await import('./static-source.js')).staticSource(options);

async function chooseSource() {
  const forced = params.get('mode');
  if (forced === 'static') return staticSource({ snapshotBase });
  // One probe: a server answers the meta query; a static host answers 404/405 or its own error page.
  const meta = await probeApi(endpoint);
  if (meta) return apiSource({ endpoint, metaBody: meta });
  if (forced === 'server') throw new Error('The API did not answer at this address, and server mode was asked for.');
  return staticSource({ snapshotBase });
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
  const key = searchKey(state);
  if (key !== lastKey) {
    lastKey = key;
    void runSearch(state, focusKeyOf(document.activeElement), previous);
  }
  void showRecord(state, previous);
}

async function runSearch(state, focusKey, previous) {
  const seq = ++searchSeq;
  searchAbort?.abort();
  const abort = (searchAbort = new AbortController());
  $('main').setAttribute('aria-busy', 'true');
  $('status').textContent = 'Searching…';
  try {
    const res = await source.search(state, abort.signal);
    if (seq !== searchSeq) return;
    showAlert(res.warnings?.length ? res.warnings.join(' ') : null);
    view.renderResults($('list'), res.items, state);
    view.renderPager($('pager'), res.total, state);
    $('status').replaceChildren(statusText(state, res.total));
    addKNumberShortcut(state);
    if (res.facets) view.renderFacets($('facets'), res.facets, state);
    else if (res.loadFacets) {
      view.renderFacetsPending($('facets'));
      whenFiltersVisible(() => {
        if (seq !== searchSeq) return;
        res
          .loadFacets()
          .then((facets) => {
            if (seq === searchSeq) view.renderFacets($('facets'), facets, state);
            markFocusKeys();
          })
          .catch(() => seq === searchSeq && $('facets').replaceChildren(h('p', { class: 'muted' }, 'Filter counts could not be loaded.')));
      });
    }
    markFocusKeys();
    if (firstResults) {
      firstResults = false;
      performance.mark('first-results');
      document.documentElement.dataset.ready = 'true';
    }
    if (previous && previous.page !== state.page && !state.record) $('results-heading').focus();
    else restoreFocus(focusKey);
  } catch (err) {
    if (err?.name === 'AbortError' || seq !== searchSeq) return;
    lastKey = null;
    $('status').textContent = 'The search failed.';
    showAlert(err?.message ?? String(err));
  } finally {
    if (seq === searchSeq) $('main').removeAttribute('aria-busy');
  }
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

function statusText(state, total) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const q = state.q.trim();
  const what = `${num(total)} ${total === 1 ? 'clearance' : 'clearances'}`;
  const frag = document.createDocumentFragment();
  if (total === 0) {
    frag.append(q ? `No clearances match “${q}”` : 'No clearances match', state.productCode || state.applicant || state.from || state.to ? ' with these filters. Try removing a filter.' : '. Try fewer or shorter words.');
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
  for (const a of document.querySelectorAll('#facets a, #active a, #pager a')) a.dataset.focusKey = a.getAttribute('aria-label') ?? a.textContent;
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
  if (previous?.record === state.record && !section.hidden) return;
  const seq = ++recordSeq;
  const k = state.record;
  // On a phone an open filters panel would push the record below the fold.
  if (!matchMedia('(min-width: 52rem)').matches) $('filters-panel').open = false;
  const backHref = toHash({ ...state, record: null });
  section.hidden = false;
  results.hidden = true;
  view.renderRecordLoading(section, k, backHref);
  $('record-heading').focus();
  try {
    const record = await source.record(k);
    if (seq !== recordSeq) return;
    if (!record) {
      view.renderRecordMissing(section, k, backHref);
      $('record-heading').focus();
      return;
    }
    const filterHref = record.productCode ? toHash(withChanges(state, { productCode: record.productCode, q: '', applicant: null, from: null, to: null })) : null;
    view.renderRecord(section, record, backHref, filterHref);
    document.title = `${record.deviceName || k} (${k}) · FDA 510(k) clearances`;
    $('record-heading').focus();
    if (record.productCode) {
      const classification = await source.classification(record.productCode).catch(() => undefined);
      if (seq !== recordSeq) return;
      const box = $('classification');
      if (classification === undefined) box.replaceChildren(h('h3', {}, `Product code ${record.productCode}`), h('p', {}, 'The classification could not be loaded.'));
      else view.renderClassification(box, record.productCode, classification);
    }
  } catch (err) {
    if (seq !== recordSeq) return;
    section.replaceChildren(h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')), h('p', { role: 'alert' }, err?.message ?? String(err)));
  }
}

function renderAbout(about) {
  const total = about.totalRecords;
  if (typeof total === 'number') $('tagline').textContent = `${num(total)} medical device clearances from the US Food and Drug Administration's 510(k) database.`;
  view.renderFreshness($('freshness'), about);
  $('mode').textContent =
    source.mode === 'server' ? 'Answers come from this service’s API.' : 'Static copy: answers come from the snapshot’s files.';
  const coverage = $('coverage');
  if (source.mode === 'static' && typeof about.indexedRecords === 'number' && typeof total === 'number' && about.indexedRecords < total) {
    coverage.hidden = false;
    coverage.textContent = `Text search in this static copy covers the newest ${num(about.indexedRecords)} of ${num(total)} clearances; any clearance opens by its K number.`;
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
  $('years').addEventListener('submit', (e) => {
    e.preventDefault();
    const read = (id) => {
      const v = $(id).value.trim();
      return /^\d{4}$/.test(v) && Number(v) >= 1900 ? Number(v) : null;
    };
    let from = read('from');
    let to = read('to');
    if (from !== null && to !== null && to < from) [from, to] = [to, from];
    navigate(withChanges(current, { from, to }));
  });
  addEventListener('hashchange', () => route({ fromHistory: true }));
  addEventListener('popstate', () => route({ fromHistory: true }));
}

async function start() {
  wire();
  // Wide screens show the filters beside the results; on a phone they stay folded until asked for.
  if (wide) $('filters-panel').open = true;
  $('filters-panel').querySelector('summary').addEventListener('click', (e) => {
    if (matchMedia('(min-width: 52rem)').matches) e.preventDefault();
  });
  try {
    source = await chooseSource();
  } catch (err) {
    $('status').textContent = 'The page could not start.';
    showAlert(err?.message ?? String(err));
    return;
  }
  document.documentElement.dataset.mode = source.mode;
  route();
  source.about().then(renderAbout, () => {
    $('freshness').textContent = 'Data freshness: unknown (the snapshot description could not be loaded).';
  });
}

void start();
