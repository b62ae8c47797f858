// Rendering: builds DOM nodes from plain values. Text always goes in as text nodes, never as HTML, because every
// string here comes from FDA's files.
import { EMPTY_STATE, QUALIFIER_FACETS, qualifierChoice, reviewDays, summaryPdfUrl, thinYears, toHash, wholeYear, withChanges, yearChanges } from './state.js';

/** h('a', { href: '#' }, 'text', child): a tiny element builder. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

const nf = new Intl.NumberFormat('en-US');
export const num = (n) => nf.format(n);

const FACET_LABELS = { productCode: 'Product code', applicant: 'Applicant', decisionYear: 'Decision year' };

/** The state a facet value selects (a year selects that whole year); clicking it again clears it. */
function facetState(state, field, value) {
  if (field === 'decisionYear') {
    const on = wholeYear(state) === Number(value);
    return { on, next: withChanges(state, on ? { from: null, to: null } : yearChanges(value)) };
  }
  const on = state[field] === String(value);
  return { on, next: withChanges(state, { [field]: on ? null : String(value) }) };
}

const QUALIFIER_FACET = new Map(QUALIFIER_FACETS.map((f) => [f.field, f]));

/**
 * The facets. Product codes carry their device type (`names`: code → name, filled in as classifications arrive, or
 * the service's own labels); decision years are a histogram in year order; the fields the service filters by
 * qualifier (committee, class, decision, …) select that qualifier.
 */
export function renderFacets(container, facets, state, names = new Map()) {
  container.replaceChildren(
    ...facets.map((facet) => {
      const id = `facet-${facet.field}`;
      const years = facet.field === 'decisionYear';
      const qualifier = QUALIFIER_FACET.get(facet.field) ?? null;
      const label = qualifier?.title ?? FACET_LABELS[facet.field] ?? facet.field;
      const details = h('details', { class: `facet facet-${facet.field}`, open: true }, h('summary', { id }, label));
      if (facet.values.length === 0) {
        details.append(h('p', { class: 'muted' }, 'No values among these results.'));
        return details;
      }
      const values = years ? [...facet.values].sort((a, b) => Number(a.value) - Number(b.value)) : facet.values;
      const max = Math.max(...values.map((v) => v.count));
      details.append(
        h('ul', { class: years ? 'facet-values histogram' : 'facet-values', 'aria-labelledby': id },
          values.map((v) => {
            const { on, next } = qualifier ? qualifierChoice(state, qualifier, v.value) : facetState(state, facet.field, v.value);
            const text = qualifier?.label ? qualifier.label(v.value) : `${v.value}`;
            const name = facet.field === 'productCode' ? v.label ?? names.get(String(v.value)) : qualifier && v.label && v.label !== text ? v.label : null;
            // The link's name is its visible text plus a few words for screen readers (no aria-label, which would
            // hide the device type and differ from what is on screen).
            return h('li', {},
              h('a', { class: on ? 'facet-value on' : 'facet-value', href: toHash(next), 'aria-current': on ? 'true' : null, 'data-value': String(v.value), 'data-count': v.count },
                h('span', { class: 'facet-label' }, h('span', { class: 'facet-code' }, text), name ? h('span', { class: 'facet-name' }, name) : null),
                years ? h('span', { class: 'bar', 'aria-hidden': 'true' }, h('span', { style: `width:${Math.max(2, Math.round((v.count / max) * 100))}%` })) : null,
                h('span', { class: 'count' }, h('span', { class: 'sr-only' }, ': '), num(v.count), h('span', { class: 'sr-only' }, ` ${v.count === 1 ? 'clearance' : 'clearances'}${on ? ', selected' : ''}`))),
            );
          }),
        ),
      );
      if (years && facet.values.length === 10 && !facet.all) details.append(h('p', { class: 'hint' }, 'The ten years with the most of these clearances, in year order.'));
      return details;
    }),
  );
}

/** Fills in device types on product-code facet values already on screen. */
export function nameProductCodes(container, names) {
  for (const a of container.querySelectorAll('.facet-productCode a.facet-value')) {
    const name = names.get(a.dataset.value);
    if (!name || a.querySelector('.facet-name')) continue;
    a.querySelector('.facet-label').append(h('span', { class: 'facet-name' }, name));
  }
}

/** Files smaller than this load without a progress bar: it would only flicker. */
const PROGRESS_MIN_BYTES = 100 * 1024;

/** "Loading filter counts…", with the bytes received of those expected when the source knows them and they are many. */
export function renderFacetsPending(container, progress = null) {
  renderLoading(container, { id: 'facets-loading', text: 'Loading filter counts…' }, progress, true);
}

/**
 * What the page is loading, in `container`: its words, then a bar and "N KB of M KB" while files of `progress.expected`
 * bytes arrive, when they are many. Below that only the words, or nothing when `always` is false (a short wait needs no
 * notice). Updates the bar in place, so that each piece that arrives does not rebuild the line.
 */
export function renderLoading(container, { id, text: label }, progress = null, always = false) {
  const big = progress && progress.expected >= PROGRESS_MIN_BYTES;
  if (!big) {
    if (always) container.replaceChildren(h('p', { class: 'muted' }, label));
    else container.replaceChildren();
    return;
  }
  const { loaded, expected } = progress;
  const bar = container.querySelector(`progress.load-progress[aria-labelledby="${id}"]`);
  const text = `${sizeText(loaded, expected)} of ${sizeText(expected, expected)}`;
  if (bar) {
    bar.value = loaded;
    bar.max = expected;
    container.querySelector('.load-bytes').textContent = text;
    return;
  }
  container.replaceChildren(
    h('p', { class: 'muted load' },
      h('span', { id }, label), ' ',
      h('progress', { class: 'load-progress', max: String(expected), value: String(loaded), 'aria-labelledby': id }), ' ',
      h('span', { class: 'load-bytes' }, text)),
  );
}

/** The review figures while their columns load: the section's heading and the progress, when the columns are large. */
export function renderReviewPending(container, progress) {
  if (!(progress && progress.expected >= PROGRESS_MIN_BYTES)) return;
  if (!container.querySelector('#review-loading')) {
    container.replaceChildren(h('h3', { id: 'review-heading' }, 'Review time'), h('div', { class: 'review-pending' }));
    container.hidden = false;
  }
  renderLoading(container.querySelector('.review-pending'), { id: 'review-loading', text: 'Loading the review figures…' }, progress);
}

/** Bytes in the unit that suits `scale` (KB below a megabyte, else MB with one decimal). */
function sizeText(bytes, scale) {
  return scale < 1024 * 1024 ? `${num(Math.round(bytes / 1024))} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function dateRangeLabel(state) {
  const y = wholeYear(state);
  if (y !== null) return `Decided in ${y}`;
  const short = (d, end) => (d.endsWith(end ? '-12-31' : '-01-01') ? d.slice(0, 4) : d);
  return `Decided ${state.from ? short(state.from, false) : '…'} to ${state.to ? short(state.to, true) : '…'}`;
}

export function renderActive(container, state) {
  const chips = [];
  const chip = (label, changes) => chips.push(h('li', {}, h('a', { class: 'chip', href: toHash(withChanges(state, changes)), 'aria-label': `Remove filter ${label}` }, label, h('span', { 'aria-hidden': 'true' }, '×'))));
  if (state.productCode) chip(`Product code ${state.productCode}`, { productCode: null });
  if (state.applicant) chip(`Applicant ${state.applicant}`, { applicant: null });
  if (state.from !== null || state.to !== null) chip(dateRangeLabel(state), { from: null, to: null });
  for (const f of QUALIFIER_FACETS) {
    const v = state.quals?.[f.qualifier];
    if (v === undefined) continue;
    const quals = { ...state.quals };
    delete quals[f.qualifier];
    chip(`${f.title}: ${f.label ? f.label(v) : v}`, { quals });
  }
  container.replaceChildren(...(chips.length ? [h('h3', { class: 'sr-only' }, 'Active filters'), h('ul', { class: 'chips' }, chips)] : []));
}

export function renderResults(list, items, state) {
  list.start = (state.page - 1) * state.size + 1;
  list.replaceChildren(
    ...items.map((item) => {
      const href = toHash({ ...state, record: item.kNumber });
      return h('li', { class: 'result' },
        h('a', { class: 'result-title', href }, item.deviceName || item.kNumber),
        h('p', { class: 'result-meta' },
          h('span', { class: 'k' }, item.kNumber),
          item.decisionDate ? h('span', { class: 'when' }, h('span', { class: 'date' }, `Decided ${item.decisionDate}`), reviewText(item)) : h('span', {}, 'No decision date'),
          item.applicant ? h('span', {}, item.applicant) : null,
          item.productCode ? h('span', {}, `Code ${item.productCode}`) : null,
        ),
      );
    }),
  );
}

/** ", 142-day review" after a result line's decision date: FDA's time from receipt to decision, when both dates are known. */
function reviewText(r) {
  const days = r.reviewDays ?? reviewDays(r.receivedDate, r.decisionDate);
  return days === null || days === undefined ? null : h('span', { class: 'review-days', 'data-days': days }, `, ${num(days)}-day review`);
}

const SVG = 'http://www.w3.org/2000/svg';
/** An SVG element with these attributes and children (the picture's counterpart of `h`). */
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}

/**
 * Review time of the search's matches (the API's `stats`): one line with the median and 90th percentile over every
 * match, a bar chart of both by decision year (inline SVG with a title and a description for screen readers; each bar
 * names its figures), and the same figures as a table behind "Show as a table".
 */
/** Fewer clearances than this in a year make its figures a small sample: drawn faint, and said so. */
export const SMALL_SAMPLE = 10;

/** A count in at most four characters, for a label under a bar: 7, 312, 1.2k, 15k. */
function compact(n) {
  return n < 1000 ? String(n) : n < 10_000 ? `${(n / 1000).toFixed(1).replace(/\.0$/, '')}k` : `${Math.round(n / 1000)}k`;
}

export function renderReviewStats(container, stats) {
  const all = stats?.reviewDays ?? null;
  if (!all) {
    container.hidden = true;
    container.replaceChildren();
    return;
  }
  const years = all.byDecisionYear.filter((y) => y.year > 0);
  const dayWord = (n) => `${num(n)} ${n === 1 ? 'day' : 'days'}`;
  const line = `Median ${dayWord(all.median)}, 90th percentile ${dayWord(all.p90)}, over ${num(all.count)} ${all.count === 1 ? 'clearance' : 'clearances'} with both dates.`;
  const width = 640;
  const height = 196;
  const pad = { left: 44, right: 8, top: 10, bottom: 40 };
  const top = Math.max(1, ...years.map((y) => y.p90));
  // A true year axis: each year has its place, so a year without clearances is a gap, not a closer neighbour.
  const first = years[0]?.year ?? 0;
  const span = years.length ? years.at(-1).year - first + 1 : 1;
  const slot = (width - pad.left - pad.right) / span;
  const bar = Math.max(1, slot * 0.8);
  const y = (days) => pad.top + (height - pad.top - pad.bottom) * (1 - Math.max(0, days) / top);
  const base = height - pad.bottom;
  const labelEvery = [1, 2, 5, 10, 20, 25, 50].find((n) => span / n <= 12) ?? 100;
  const small = years.some((f) => f.count < SMALL_SAMPLE);
  const chart = s('svg', { class: 'review-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'review-chart-title review-chart-desc', preserveAspectRatio: 'xMinYMin meet' },
    s('title', { id: 'review-chart-title' }, 'Review days by decision year: median and 90th percentile'),
    s('desc', { id: 'review-chart-desc' }, years.length
      ? `${years.length} ${years.length === 1 ? 'year' : 'years'} with clearances, ${years[0].year} to ${years.at(-1).year}. ${line}${small ? ` Years with fewer than ${SMALL_SAMPLE} clearances are drawn faint.` : ''} The table below gives each year's figures.`
      : line),
    s('line', { class: 'axis', x1: pad.left, x2: width - pad.right, y1: base, y2: base }),
    s('text', { class: 'tick', x: pad.left - 4, y: y(top) + 4, 'text-anchor': 'end' }, num(top)),
    s('text', { class: 'tick', x: pad.left - 4, y: base, 'text-anchor': 'end' }, '0'),
    s('text', { class: 'tick count-label', x: pad.left - 4, y: height - 6, 'text-anchor': 'end' }, 'n'),
    years.map((f) => {
      const at = f.year - first;
      const x = pad.left + at * slot + (slot - bar) / 2;
      const few = f.count < SMALL_SAMPLE;
      return s('g', { class: few ? 'year few' : 'year', 'data-year': f.year, 'data-count': f.count },
        s('title', {}, `${f.year}: median ${dayWord(f.median)}, 90th percentile ${dayWord(f.p90)} (${num(f.count)} ${f.count === 1 ? 'clearance' : 'clearances'}${few ? ', a small sample' : ''})`),
        s('rect', { class: 'p90', x, width: bar, y: y(f.p90), height: Math.max(0, base - y(f.p90)) }),
        s('rect', { class: 'median', x, width: bar, y: y(f.median), height: Math.max(0, base - y(f.median)) }),
        // Each year's count under its bar, where there is room for it; the table and the bar's title always have it.
        slot >= 14 || f.year % labelEvery === 0 ? s('text', { class: 'tick count', x: x + bar / 2, y: height - 6, 'text-anchor': 'middle' }, compact(f.count)) : null);
    }),
    // Year labels at round years of the axis, whether or not the year has clearances.
    Array.from({ length: span }, (_, at) => first + at).filter((year) => year % labelEvery === 0 || span === 1).map((year) =>
      s('text', { class: 'tick year-label', x: pad.left + (year - first) * slot + slot / 2, y: height - 22, 'text-anchor': 'middle' }, String(year))),
  );
  const table = h('table', { class: 'review-table' },
    h('caption', {}, 'Review days by decision year'),
    h('thead', {}, h('tr', {}, ['Decision year', 'Clearances', 'Median days', '90th percentile days'].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, years.map((f) => h('tr', { 'data-year': f.year },
      h('th', { scope: 'row' }, String(f.year)), h('td', { class: 'num' }, num(f.count)), h('td', { class: 'num' }, num(f.median)), h('td', { class: 'num' }, num(f.p90))))));
  const wasOpen = container.querySelector('details.review-table-details')?.open ?? false;
  const tableDetails = h('details', { class: 'review-table-details' }, h('summary', {}, 'Show as a table'), table);
  tableDetails.open = wasOpen;
  container.replaceChildren(
    h('h3', { id: 'review-heading' }, 'Review time'),
    h('p', { class: 'review-line', 'data-median': all.median, 'data-p90': all.p90 }, line),
    years.length ? h('div', { class: 'review-figure' }, chart,
      h('p', { class: 'legend', 'aria-hidden': 'true' }, h('span', { class: 'key median' }), ' median ', h('span', { class: 'key p90' }), ' 90th percentile',
        ' · n: clearances that year', small ? h('span', { class: 'small-note' }, ` · faint: fewer than ${SMALL_SAMPLE}, a small sample`) : null)) : null,
    years.length ? tableDetails : null,
  );
  container.hidden = false;
}

/**
 * The search syntax, short: words, exclusions, OR, phrases, and (where the service takes them) each qualifier with
 * what it accepts, in meta's words, and date ranges. Each example is a link that runs it.
 */
export function renderSyntaxHelp(container, caps, { engine } = {}) {
  const example = (q) => h('a', { href: toHash({ ...EMPTY_STATE, q }), class: 'example' }, h('code', {}, q));
  const rules = [
    h('li', {}, 'Words match the start of a word in the device name, applicant, K number or product code; every word must match: ', example('cath balloon'), '.'),
  ];
  if (engine === 'pagefind') {
    container.replaceChildren(h('ul', {}, rules), h('p', {}, 'This static copy searches with Pagefind: qualifiers, exclusions and OR need the service.'));
    return;
  }
  const names = caps.qualifierHelp ?? [];
  if (names.length) {
    rules.push(
      h('li', {}, h('code', {}, '-word'), ' leaves out what matches it: ', example('catheter -foley'), '. (NOT is not an operator.)'),
      h('li', {}, h('code', {}, 'OR'), ' in capitals between two words matches either: ', example('stent OR graft'), '.'),
      h('li', {}, 'Quotes keep words together as a phrase: ', example('"balloon catheter"'), '.'),
    );
  }
  const dated = names.some((q) => q.name === 'decided');
  const parts = [h('ul', {}, rules)];
  if (names.length) {
    parts.push(
      h('h3', { class: 'syntax-heading' }, 'Qualifiers'),
      h('p', {}, 'A qualifier searches one field: ', h('code', {}, 'name:value'), ', in quotes when the value has spaces (', example('panel:cardiovascular class:2'), ').'),
      h('dl', { class: 'qualifiers' }, names.map((q) => h('div', { class: 'qualifier', 'data-qualifier': q.name }, h('dt', {}, h('code', {}, `${q.name}:`)), h('dd', {}, q.accepts)))),
    );
  }
  parts.push(h('p', {}, dated
    ? ['Dates and years: ', example('decided:2020..2024'), ', ', example('decided:>=2023-06'), ', or the decision date range under Filters.']
    : 'Years: the decision date range under Filters.'));
  container.replaceChildren(...parts);
}

/** What a zero-result search may have meant: each suggestion a link that runs it, with its count and its reason. */
export function renderSuggestions(container, answer) {
  if (!answer) {
    container.hidden = true;
    container.replaceChildren();
    return;
  }
  container.hidden = false;
  if (answer.checking) {
    container.replaceChildren(h('p', { class: 'muted' }, 'Looking for a similar search that finds something…'));
    return;
  }
  if (answer.found.length === 0) {
    container.replaceChildren(h('p', { class: 'muted' }, 'No similar search finds anything either. The search syntax under the search box says how to ask.'));
    return;
  }
  container.replaceChildren(
    h('h3', { class: 'suggest-heading' }, 'Did you mean'),
    h('ul', {}, answer.found.map((s) => h('li', {},
      h('a', { href: s.href, class: s.spelling ? 'suggestion spelling' : 'suggestion', 'data-q': s.state.q, 'data-count': s.total }, s.label),
      ` · ${num(s.total)} ${s.total === 1 ? 'clearance' : 'clearances'}`,
      h('span', { class: 'why' }, ` (${s.why})`)))),
  );
}

export function renderPager(nav, total, state) {
  const pages = Math.max(1, Math.ceil(total / state.size));
  if (total <= state.size && state.page === 1) return nav.replaceChildren();
  const link = (label, page, rel) =>
    page >= 1 && page <= pages && page !== state.page
      ? h('a', { class: 'page-link', href: toHash({ ...state, page, record: null }), rel }, label)
      : h('span', { class: 'page-link disabled', 'aria-disabled': 'true' }, label);
  nav.replaceChildren(
    link('← Previous', state.page - 1, 'prev'),
    h('span', { class: 'page-of' }, `Page ${num(state.page)} of ${num(pages)}`),
    link('Next →', state.page + 1, 'next'),
  );
}

const yesNo = (v) => (v === true ? 'Yes' : v === false ? 'No' : null);

const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : null;
const countryName = (code) => {
  if (!code) return null;
  try {
    const name = regionNames?.of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
};

/** The applicant's address as FDA publishes it (members added by the build when the source has them). */
function addressOf(r) {
  const lines = [r.contact ? `Contact: ${r.contact}` : null, r.street1, r.street2, [r.city, r.state, r.zipCode ?? r.postalCode].filter(Boolean).join(', ') || null]
    .filter(Boolean);
  const address = r.address;
  if (address && typeof address === 'object') {
    for (const v of Object.values(address)) if (typeof v === 'string' && v && !lines.includes(v)) lines.push(v);
  }
  return lines.length ? lines : null;
}

/**
 * A clearance's fields for a person, in the order a regulatory reader looks for them. Bookkeeping members of the
 * API's record (id, title, evidenceStatus, source) are left out: they say nothing about the clearance.
 */
function recordRows(r, { codeName, filterHref }) {
  const days = r.reviewDays ?? reviewDays(r.receivedDate, r.decisionDate);
  const decision = r.decisionDescription ? `${r.decisionDescription}${r.decisionCode ? ` (${r.decisionCode})` : ''}` : r.decisionCode ?? null;
  const address = addressOf(r);
  return [
    ['kNumber', '510(k) number', r.kNumber],
    ['deviceName', 'Device name', r.deviceName || null],
    ['applicant', 'Applicant', r.applicant],
    ['address', 'Applicant address', address ? h('span', { class: 'lines' }, address.map((l) => h('span', {}, l))) : undefined],
    ['productCode', 'Product code', r.productCode
      ? h('span', {}, `${r.productCode}${codeName ? ` (${codeName})` : ''} `, h('a', { href: filterHref }, `all clearances with code ${r.productCode}`))
      : null],
    ['decisionDescription', 'Decision', decision],
    ['decisionDate', 'Decision date', r.decisionDate],
    ['receivedDate', 'Received', r.receivedDate],
    ['reviewDays', 'Review time', days === null ? null : `${num(days)} ${days === 1 ? 'day' : 'days'} from receipt to decision`],
    ['submissionType', 'Submission type', r.submissionType],
    ['statementOrSummary', '510(k) summary or statement', r.statementOrSummary],
    ['advisoryCommittee', 'Review advisory committee', r.advisoryCommittee],
    ['classificationCommittee', 'Classification advisory committee', r.classificationCommittee],
    ['thirdParty', 'Reviewed by a third party', yesNo(r.thirdParty)],
    ['expeditedReview', 'Expedited review', yesNo(r.expeditedReview)],
    ['countryCode', 'Applicant country', countryName(r.countryCode)],
  ].filter(([, , v]) => v !== undefined);
}

/**
 * Fields as a definition list. Fields the record leaves empty get no row of their own: they are named together in one
 * line after the list, so that a reader still learns what FDA does not say without a column of "Not given".
 */
function fieldRows(rows) {
  const given = rows.filter(([, , value]) => value !== null && value !== '');
  const missing = rows.filter(([, , value]) => value === null || value === '');
  return [
    h('dl', { class: 'fields' },
      given.map(([key, label, value]) =>
        h('div', { class: 'field' }, h('dt', {}, label), h('dd', { 'data-field': key }, value instanceof Node ? value : String(value))))),
    missing.length
      ? h('p', { class: 'not-given muted', 'data-fields': missing.map(([key]) => key).join(' ') },
        `Not in FDA's record: ${missing.map(([, label]) => label.replace(/^./, (c) => c.toLowerCase())).join(', ')}.`)
      : null,
  ];
}

export function renderRecordLoading(section, kNumber, backHref) {
  section.replaceChildren(
    h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')),
    h('h2', { id: 'record-heading', tabindex: '-1' }, kNumber),
    h('p', { class: 'muted' }, 'Loading the record…'),
  );
}

export function renderRecordMissing(section, kNumber, backHref) {
  section.replaceChildren(
    h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')),
    h('h2', { id: 'record-heading', tabindex: '-1' }, kNumber),
    h('p', {}, `There is no 510(k) clearance ${kNumber} in this snapshot.`),
  );
}

const external = (href, text) => h('a', { href, rel: 'noopener', target: '_blank' }, text, h('span', { class: 'sr-only' }, ' (opens in a new tab)'));

export function renderRecord(section, record, { backHref, filterHref, codeName = null }) {
  const fdaUrl = record.source?.sourceUrl ?? `https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${record.kNumber}`;
  const pdf = summaryPdfUrl(record.kNumber, record.statementOrSummary);
  const doc = /statement/i.test(record.statementOrSummary ?? '') ? 'statement' : 'summary';
  section.replaceChildren(
    ...[
      h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')),
      h('h2', { id: 'record-heading', tabindex: '-1' }, record.deviceName || record.kNumber),
      h('p', { class: 'record-sub' }, h('span', { class: 'k' }, record.kNumber),
        record.applicant ? ` · ${record.applicant}` : '',
        record.decisionDate ? ` · decided ${record.decisionDate}` : ''),
      h('ul', { class: 'record-links' },
        h('li', {}, external(fdaUrl, `${record.kNumber} on FDA's site`)),
        pdf ? h('li', {}, external(pdf, `The 510(k) ${doc} (PDF on FDA's site)`)) : null),
      h('h3', {}, 'Clearance'),
      ...fieldRows(recordRows(record, { codeName, filterHref })),
      h('div', { id: 'record-history', class: 'record-history' },
        h('h3', {}, 'History in this data'),
        h('p', { class: 'muted' }, 'Loading the record’s history…')),
      h('div', { id: 'classification', class: 'classification' },
        h('h3', {}, record.productCode ? `Product code ${record.productCode}` : 'Product code'),
        h('p', { class: 'muted' }, record.productCode ? 'Loading the classification…' : 'This clearance has no product code.'),
      ),
      h('div', { id: 'related', class: 'related' }),
    ].filter(Boolean),
  );
}

/** The record's members by the names the record view gives them, for the changes its history lists. */
const RECORD_LABELS = {
  kNumber: '510(k) number',
  deviceName: 'Device name',
  applicant: 'Applicant',
  productCode: 'Product code',
  decisionDescription: 'Decision',
  decisionCode: 'Decision code',
  decisionDate: 'Decision date',
  receivedDate: 'Received',
  reviewDays: 'Review time (days)',
  submissionType: 'Submission type',
  statementOrSummary: '510(k) summary or statement',
  advisoryCommittee: 'Review advisory committee',
  classificationCommittee: 'Classification advisory committee',
  thirdParty: 'Reviewed by a third party',
  expeditedReview: 'Expedited review',
  countryCode: 'Applicant country',
};

/** A build time in words: "2026-01-02 02:00 UTC". */
const buildTime = (at) => at.replace('T', ' ').replace(/:\d{2}(\.\d+)?Z$/, ' UTC');

/** A member's value before or after a change, in words. */
function changedValue(value) {
  if (value === null || value === undefined || value === '') return 'no value';
  if (typeof value === 'boolean') return value ? '“Yes”' : '“No”';
  return `“${typeof value === 'object' ? JSON.stringify(value) : String(value)}”`;
}

function changeItem(change) {
  const when = h('time', { datetime: change.at }, buildTime(change.at));
  if (change.kind === 'added') return h('li', { 'data-kind': 'added', 'data-at': change.at }, when, ': added to the data.');
  if (change.kind === 'removed') return h('li', { 'data-kind': 'removed', 'data-at': change.at }, when, ': removed from the data.');
  const fields = change.fields.map((f) => {
    const v = change.values[f] ?? {};
    return h('li', { 'data-field': f }, `${RECORD_LABELS[f] ?? words(f)} changed from ${changedValue(v.from)} to ${changedValue(v.to)}.`);
  });
  return h('li', { 'data-kind': 'changed', 'data-at': change.at }, when, `: ${fields.length === 1 ? 'one field' : `${fields.length} fields`} changed.`, h('ul', {}, fields));
}

/**
 * The record's history: when a build first saw it, each change a build recorded, and where the kept history starts,
 * so that "no changes" reads as "none since then". `history` is null for a snapshot that keeps no history.
 */
export function renderRecordHistory(container, history) {
  const heading = h('h3', {}, 'History in this data');
  if (history === undefined) return container.replaceChildren(heading, h('p', {}, 'The record’s history could not be loaded.'));
  if (history === null) return container.replaceChildren(heading, h('p', {}, 'This snapshot keeps no history of changes.'));
  const first = history.inBaseline
    ? h('p', { class: 'first-seen', 'data-at': history.firstSeenAt }, 'In the data since ', h('time', { datetime: history.firstSeenAt }, buildTime(history.firstSeenAt)), ', when this history began.')
    : h('p', { class: 'first-seen', 'data-at': history.firstSeenAt }, 'First seen in the data ', h('time', { datetime: history.firstSeenAt }, buildTime(history.firstSeenAt)), '.');
  const since = buildTime(history.completeSince);
  container.replaceChildren(
    heading,
    first,
    history.changes.length
      ? h('ol', { class: 'changes' }, history.changes.map(changeItem))
      : h('p', { class: 'no-changes' }, `No changes recorded since ${since}.`),
    h('p', { class: 'complete-since muted', 'data-at': history.completeSince }, `The history kept starts ${since}; changes before then are not recorded.`),
  );
}

/** Classification members in words; members the build adds later (FDA's flags) are shown by these labels. */
const CLASSIFICATION_LABELS = {
  deviceType: 'Device type',
  deviceClass: 'Device class',
  regulationNumber: 'Regulation (21 CFR)',
  medicalSpecialty: 'Medical specialty',
  reviewPanel: 'Review panel',
  definition: 'Definition',
  implant: 'Implant',
  lifeSustaining: 'Life-sustaining or life-supporting',
  gmpExempt: 'Exempt from good manufacturing practice',
  thirdPartyEligible: 'Eligible for third-party review',
  thirdPartyReviewCode: 'Third-party review code',
  // The route FDA requires for devices of this code (510(k), PMA, exempt): not the clearance's own submission type,
  // which the record view shows once as "Submission type".
  submissionType: 'Premarket route for this product code',
  unclassifiedReason: 'Why unclassified',
  reviewCode: 'Review code',
  summaryMalfunctionReporting: 'Summary malfunction reporting',
  physicalState: 'Physical state',
  technicalMethod: 'Technical method',
  targetArea: 'Target area',
  clearanceCount: 'Clearances in this snapshot',
};

const words = (key) => key.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/^./, (c) => c.toUpperCase());

function classificationValue(key, value) {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'boolean') return yesNo(value);
  if (key === 'deviceClass' && /^[123]$/.test(String(value))) return `Class ${'I'.repeat(Number(value))}`;
  if (key === 'clearanceCount' && typeof value === 'number') return num(value);
  if (key === 'regulationNumber' && /^\d{3}\.\d+$/.test(value)) {
    return h('a', { href: `https://www.ecfr.gov/current/title-21/section-${value}`, rel: 'noopener' }, `21 CFR ${value}`);
  }
  if (typeof value === 'object') {
    // A code with its name ({ code, name }), as FDA's layout documents some of them.
    if ('name' in value || 'code' in value) return [value.code, value.name].filter(Boolean).join(': ') || null;
    return JSON.stringify(value);
  }
  return String(value);
}

export function renderClassification(container, productCode, classification) {
  const heading = h('h3', {}, `Product code ${productCode}`);
  if (!classification) {
    container.replaceChildren(heading, h('p', {}, `FDA's classification file has no entry for ${productCode}.`));
    return;
  }
  const keys = [...Object.keys(CLASSIFICATION_LABELS).filter((k) => k in classification), ...Object.keys(classification).filter((k) => !(k in CLASSIFICATION_LABELS) && k !== 'productCode')];
  const known = keys.some((k) => k !== 'clearanceCount' && classification[k] !== null && classification[k] !== undefined);
  container.replaceChildren(
    ...[
      heading,
      known ? null : h('p', {}, `${productCode} appears on clearances but not in FDA's classification file.`),
      ...fieldRows(keys.map((k) => [k, CLASSIFICATION_LABELS[k] ?? words(k), classificationValue(k, classification[k])])),
    ].filter(Boolean),
  );
}

/** One list of other clearances (of the same product code, or the same applicant), with a link to all of them. */
export function renderRelated(container, { heading, items, total, allHref, exclude, state }) {
  const others = items.filter((r) => r.kNumber !== exclude);
  container.append(
    h('section', { class: 'related-list' },
      h('h3', {}, heading),
      others.length === 0
        ? h('p', { class: 'muted' }, 'None in this snapshot.')
        : h('ul', {}, others.map((r) => h('li', {},
          h('a', { href: toHash({ ...state, record: r.kNumber }) }, r.deviceName || r.kNumber),
          ` · ${r.kNumber}${r.decisionDate ? ` · ${r.decisionDate}` : ''}`))),
      total > items.length ? h('p', {}, h('a', { href: allHref }, `All ${num(total)} of them, this one included`)) : null,
    ),
  );
}

export function renderFreshness(p, about) {
  const parts = [];
  if (about.generatedAt) parts.push(`Snapshot built ${about.generatedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}`);
  if (about.decisionDateMax && !about.freshnessEvidence?.includes(about.decisionDateMax)) parts.push(`newest decision ${about.decisionDateMax}`);
  parts.push(`freshness: ${about.freshness}${about.freshnessEvidence ? ` (${about.freshnessEvidence})` : ''}`);
  if (about.lastSuccessfulSyncAt) parts.push(`last sync ${about.lastSuccessfulSyncAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}`);
  p.replaceChildren(h('span', { class: `fresh ${about.freshness}` }, parts.join(' · ')));
  p.dataset.freshness = about.freshness;
}

/** The footer's links to the bulk downloads (Parquet, SQLite); hidden when meta names none. */
export function renderDownloads(p, downloads) {
  const list = downloads ?? [];
  p.hidden = list.length === 0;
  const size = (bytes) => (bytes === null ? '' : ` (${bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} KB`})`);
  p.replaceChildren(
    'The whole table, one row a clearance: ',
    ...list.flatMap((d, i) => [i > 0 ? ' · ' : '', h('a', { href: d.href, download: '' }, `${d.name}${size(d.bytes)}`)]),
    '.',
  );
}

const KIND_NAMES = { pmn: "FDA's 510(k) file", 'openfda-json': 'openFDA 510(k) download', foiclass: "FDA's product classification file" };

/**
 * The coverage note: what the snapshot holds, where a user judges what a missing clearance means. One plain line
 * (and a warning for thin years) always in view; the sources, the years and the sync's operator detail behind
 * "details".
 */
export function renderCoverage(container, { about, years }) {
  const total = about.totalRecords;
  const thin = years ? thinYears(years) : [];
  const span = about.decisionDateMin && about.decisionDateMax ? ` decided ${about.decisionDateMin} to ${about.decisionDateMax}` : '';
  const when = (run) => (run.from === run.to ? `${run.from}` : `${run.from}–${run.to}`);
  const sources = about.sources ?? [];
  const summary = h('summary', {},
    h('span', { class: 'coverage-line' }, `This snapshot holds ${typeof total === 'number' ? num(total) : 'the'} clearances${span}.`),
    thin.flatMap((run) => [' ', h('span', { class: 'coverage-warn', 'data-thin': when(run) }, `Only ${num(run.count)} for ${when(run)}.`)]));
  const details = h('details', { class: 'coverage-details' },
    summary,
    thin.length
      ? h('p', {}, `FDA cleared thousands of devices a year in ${thin.map(when).join(', ')}; this snapshot's sources hold few of them, so a clearance missing from those years here is not evidence that FDA never cleared it.`)
      : null,
    sources.length
      ? h('table', {},
        h('caption', {}, 'Sources, in precedence order'),
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'File'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Records'), h('th', { scope: 'col' }, 'Decision dates'))),
        h('tbody', {}, sources.map((s) => h('tr', {},
          h('td', {}, s.name.split('/').pop()),
          h('td', {}, KIND_NAMES[s.kind] ?? s.kind),
          h('td', { class: 'num' }, s.kind === 'foiclass' ? '–' : num(s.records)),
          h('td', {}, s.decisionDateMin ? `${s.decisionDateMin} to ${s.decisionDateMax}` : '–')))))
      : null,
    years?.length
      ? h('p', { class: 'years-line' }, 'Clearances per decision year: ', years.filter((y) => y.year !== null).map((y) => `${y.year}: ${num(y.count)}`).join(', '), '.')
      : null,
    h('p', {}, about.lastSuccessfulSyncAt
      ? `Last successful update from FDA: ${about.lastSuccessfulSyncAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')} (${about.freshness}).`
      : 'This snapshot was built from files; no update from FDA is recorded.'),
  );
  const wasOpen = container.querySelector('details')?.open ?? false;
  details.open = wasOpen;
  container.replaceChildren(details);
  container.hidden = false;
}

/**
 * Service warnings (a failed nightly update, a cursor from an older snapshot): one plain sentence for the reader, the
 * operator's text (error codes, file names) only behind "details".
 */
/** A service warning in a reader's words; the operator's wording stays behind "details". */
export function plainWarning(warning) {
  if (/sync\b.*\bfailed/i.test(warning)) return 'The last update from FDA did not complete, so the newest clearances may be missing. The data shown is the last complete snapshot.';
  if (/more than \d+ hours ago/i.test(warning)) return 'The data has not been updated from FDA recently, so the newest clearances may be missing.';
  if (/cursor/i.test(warning)) return 'The data changed while you were paging; the pages may overlap or skip a few clearances.';
  return 'The service added a note to these answers.';
}

export function renderNotice(container, warnings) {
  if (!warnings?.length) {
    container.hidden = true;
    container.replaceChildren();
    return;
  }
  const plain = [...new Set(warnings.map(plainWarning))];
  container.replaceChildren(
    ...plain.map((text) => h('p', {}, text)),
    h('details', {}, h('summary', {}, 'Details'), h('ul', { class: 'operator' }, warnings.map((w) => h('li', {}, w)))),
  );
  container.hidden = false;
}
