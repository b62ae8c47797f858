// Rendering: builds DOM nodes from plain values. Text always goes in as text nodes, never as HTML, because every
// string here comes from FDA's files.
import { PAGE_SIZE, toHash, withChanges } from './state.js';

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

/** The state a facet value selects (a year selects the range of that one year); clicking it again clears it. */
function facetState(state, field, value) {
  if (field === 'decisionYear') {
    const y = Number(value);
    const on = state.from === y && state.to === y;
    return { on, next: withChanges(state, on ? { from: null, to: null } : { from: y, to: y }) };
  }
  const on = state[field] === String(value);
  return { on, next: withChanges(state, { [field]: on ? null : String(value) }) };
}

export function renderFacets(container, facets, state) {
  container.replaceChildren(
    ...facets.map((facet) => {
      const id = `facet-${facet.field}`;
      const details = h('details', { class: 'facet', open: true },
        h('summary', { id }, FACET_LABELS[facet.field] ?? facet.field),
      );
      if (facet.values.length === 0) {
        details.append(h('p', { class: 'muted' }, 'No values among these results.'));
        return details;
      }
      details.append(
        h('ul', { class: 'facet-values', 'aria-labelledby': id },
          facet.values.map((v) => {
            const { on, next } = facetState(state, facet.field, v.value);
            const label = `${v.value}`;
            return h('li', {},
              h('a', { class: on ? 'facet-value on' : 'facet-value', href: toHash(next), 'aria-current': on ? 'true' : null,
                'aria-label': `${FACET_LABELS[facet.field]} ${label}, ${num(v.count)} clearances${on ? ', selected; select to remove' : ''}` },
                h('span', { class: 'facet-label' }, label), h('span', { class: 'count' }, num(v.count))),
            );
          }),
        ),
      );
      return details;
    }),
  );
}

export function renderFacetsPending(container) {
  container.replaceChildren(h('p', { class: 'muted' }, 'Loading filter counts…'));
}

export function renderActive(container, state) {
  const chips = [];
  const chip = (label, changes) => chips.push(h('li', {}, h('a', { class: 'chip', href: toHash(withChanges(state, changes)), 'aria-label': `Remove filter ${label}` }, label, h('span', { 'aria-hidden': 'true' }, '×'))));
  if (state.productCode) chip(`Product code ${state.productCode}`, { productCode: null });
  if (state.applicant) chip(`Applicant ${state.applicant}`, { applicant: null });
  if (state.from !== null || state.to !== null) {
    const label = state.from === state.to ? `Year ${state.from}` : `Years ${state.from ?? '…'}–${state.to ?? '…'}`;
    chip(label, { from: null, to: null });
  }
  container.replaceChildren(...(chips.length ? [h('h3', { class: 'sr-only' }, 'Active filters'), h('ul', { class: 'chips' }, chips)] : []));
}

export function renderResults(list, items, state) {
  list.start = (state.page - 1) * PAGE_SIZE + 1;
  list.replaceChildren(
    ...items.map((item) => {
      const href = toHash({ ...state, record: item.kNumber });
      const when = item.decisionDate ?? item.decisionYear;
      return h('li', { class: 'result' },
        h('a', { class: 'result-title', href }, item.deviceName || item.kNumber),
        h('p', { class: 'result-meta' },
          h('span', { class: 'k' }, item.kNumber),
          when ? h('span', {}, `Decided ${when}`) : h('span', {}, 'No decision date'),
          item.applicant ? h('span', {}, item.applicant) : null,
          item.productCode ? h('span', {}, `Code ${item.productCode}`) : null,
        ),
      );
    }),
  );
}

export function renderPager(nav, total, state) {
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  if (total <= PAGE_SIZE && state.page === 1) return nav.replaceChildren();
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

/** Every member of a clearance record, in the contract's order, with a label a person understands. */
const RECORD_FIELDS = [
  ['kNumber', '510(k) number'],
  ['deviceName', 'Device name'],
  ['applicant', 'Applicant'],
  ['productCode', 'Product code'],
  ['decisionDate', 'Decision date'],
  ['decisionDescription', 'Decision'],
  ['receivedDate', 'Received'],
  ['advisoryCommittee', 'Review advisory committee'],
  ['classificationCommittee', 'Classification advisory committee'],
  ['statementOrSummary', 'Statement or summary'],
  ['submissionType', 'Submission type'],
  ['thirdParty', 'Third-party review', yesNo],
  ['expeditedReview', 'Expedited review', yesNo],
  ['countryCode', 'Country'],
  ['evidenceStatus', 'Evidence status'],
  ['id', 'Record id'],
  ['title', 'Title'],
];
const SOURCE_FIELDS = [
  ['sourceId', 'Source id'],
  ['collection', 'Collection'],
  ['recordId', 'Record id in collection'],
  ['textOrigin', 'Text origin'],
  ['schemaVersion', 'Source schema version'],
];
const CLASSIFICATION_FIELDS = [
  ['deviceType', 'Device type'],
  ['deviceClass', 'Device class'],
  ['regulationNumber', 'Regulation (21 CFR)'],
  ['medicalSpecialty', 'Medical specialty'],
  ['reviewPanel', 'Review panel'],
  ['definition', 'Definition'],
  ['clearanceCount', 'Clearances in this snapshot', (n) => (typeof n === 'number' ? num(n) : null)],
];

function fieldList(obj, fields, extra = {}) {
  return h('dl', { class: 'fields' },
    fields.map(([key, label, fmt]) => {
      if (!(key in obj)) return null;
      const raw = obj[key];
      const shown = fmt ? fmt(raw) : raw;
      const value = extra[key] ?? (shown === null || shown === undefined || shown === '' ? h('span', { class: 'muted' }, 'Not given') : String(shown));
      return h('div', { class: 'field' }, h('dt', {}, label), h('dd', { 'data-field': key }, value));
    }),
  );
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

export function renderRecord(section, record, backHref, filterHref) {
  const fdaUrl = record.source?.sourceUrl;
  const extra = {};
  if (record.productCode) {
    extra.productCode = h('span', {}, record.productCode, ' ', h('a', { href: filterHref }, `(all clearances with code ${record.productCode})`));
  }
  section.replaceChildren(
    ...[
    h('p', {}, h('a', { class: 'back', href: backHref }, '← Back to results')),
    h('h2', { id: 'record-heading', tabindex: '-1' }, record.deviceName || record.kNumber),
    h('p', { class: 'record-sub' }, h('span', { class: 'k' }, record.kNumber),
      record.applicant ? ` · ${record.applicant}` : '',
      record.decisionDate ? ` · decided ${record.decisionDate}` : ''),
    fdaUrl ? h('p', {}, h('a', { class: 'fda', href: fdaUrl, rel: 'noopener', target: '_blank' }, `View ${record.kNumber} on FDA's site`, h('span', { class: 'sr-only' }, ' (opens in a new tab)'))) : null,
    h('h3', {}, 'Clearance'),
    fieldList(record, RECORD_FIELDS, extra),
    h('h3', {}, 'Source'),
    fieldList(record.source ?? {}, [...SOURCE_FIELDS, ['sourceUrl', 'Source URL']], fdaUrl ? { sourceUrl: h('a', { href: fdaUrl, rel: 'noopener' }, fdaUrl) } : {}),
    h('div', { id: 'classification', class: 'classification' },
      h('h3', {}, record.productCode ? `Product code ${record.productCode}` : 'Product code'),
      h('p', { class: 'muted' }, record.productCode ? 'Loading the classification…' : 'This clearance has no product code.'),
    ),
    ].filter(Boolean),
  );
}

export function renderClassification(container, productCode, classification) {
  const heading = h('h3', {}, `Product code ${productCode}`);
  if (!classification) {
    container.replaceChildren(heading, h('p', {}, `FDA's classification file has no entry for ${productCode}.`));
    return;
  }
  const known = CLASSIFICATION_FIELDS.some(([k]) => k !== 'clearanceCount' && classification[k] !== null && classification[k] !== undefined);
  const extra = {};
  const reg = classification.regulationNumber;
  if (reg && /^\d{3}\.\d+$/.test(reg)) {
    extra.regulationNumber = h('a', { href: `https://www.ecfr.gov/current/title-21/section-${reg}`, rel: 'noopener' }, `21 CFR ${reg}`);
  }
  container.replaceChildren(
    ...[
      heading,
      known ? null : h('p', {}, `${productCode} appears on clearances but not in FDA's classification file.`),
      fieldList(classification, CLASSIFICATION_FIELDS, extra),
    ].filter(Boolean),
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
