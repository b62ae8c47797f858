// Lineage on the page (docs/lineage.md): in the record view, the devices a clearance names and the clearances that
// name it; in the lineage view, the whole chain either way as a layered picture (inline SVG) with a table beside it,
// a page at a time, its CSV and its feed. Every answer is device-510k.lineage's, from the service (server mode) or
// from the snapshot's lineage files walked in the page (static mode, lineage-source.js): the same answer either way.
import { readSnapshotHead } from './snapshot-head.js';
import { toHash } from './state.js';
import { h, num, s } from './view.js';

/** Devices a page of the lineage view shows (and draws): a column of the picture stays readable. */
export const LINEAGE_PAGE = 50;
/** Clearances naming a record that its record view lists; the lineage view has them all. */
const CITED_LISTED = 25;
/** Devices the record view lists among those a record names (a summary names a handful; a few name hundreds). */
const NAMED_LISTED = 500;
/** Devices a lineage CSV holds at most: 40 requests of 500. */
export const LINEAGE_CSV_LIMIT = 20_000;

/** An element's children replaced by those given, leaving out the null ones. */
const fill = (el, ...children) => el.replaceChildren(...children.filter((c) => c !== null && c !== undefined && c !== false));
const fdaPage = (k) => `https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${k}`;
const external = (href, text) => h('a', { href, rel: 'noopener', target: '_blank' }, text, h('span', { class: 'sr-only' }, ' (opens in a new tab)'));
// A device drawn before the answer has no record yet (`record: undefined`), but the lineage files give its decision
// year and whether the snapshot has its record (`year`, `hasRecord`).
const yearOf = (item) => (item.record === undefined ? (item.year ? String(item.year) : null) : (item.record?.decisionDate?.slice(0, 4) ?? null));
const hasRecord = (item) => (item.record === undefined ? item.hasRecord : item.record !== null);
const KIND_TEXT = { predicate: 'predicate, read from its summary', named: 'named in its documents' };
const STEP_WORD = { predicates: 'up', descendants: 'down' };

/** The input of device-510k.lineage: every member given, as the contract asks. */
const question = (id, direction, depth, limit, cursor = null) => ({ id, direction, depth, kinds: null, limit, cursor });

/** A lineage answer, or an empty one for a number the snapshot knows nothing of (404 record_not_found). */
async function answerOf(source, input) {
  try {
    return await source.lineage(input);
  } catch (err) {
    if (err?.code === 'record_not_found') return { data: { items: [], byDepth: [], byYear: [], cycles: [] }, page: { total: 0, hasNextPage: false, nextCursor: null } };
    throw err;
  }
}

/** One device of a list: its number (to its own record and lineage), what the data says of it, and the edge's kind. */
function deviceItem(item, hrefOf) {
  const year = yearOf(item);
  return h('li', { 'data-k': item.kNumber, 'data-kind': item.kind, 'data-via': item.via, 'data-depth': item.depth },
    h('a', { href: hrefOf(item.kNumber) }, item.kNumber),
    item.record ? ` · ${item.record.deviceName || 'no device name'}${year ? ` (${year})` : ''}` : ' · no record in this data (',
    item.record ? null : external(fdaPage(item.kNumber), 'FDA’s page'),
    item.record ? null : ')',
    ' ', h('span', { class: `kind kind-${item.kind}` }, item.kind), h('span', { class: 'sr-only' }, `: ${KIND_TEXT[item.kind] ?? item.kind}, by ${item.source}`));
}

/** A number's record view (direction null), or its lineage view in a direction, keeping the search behind it. */
const hrefsOf = (state) => (k, direction) => toHash({ ...state, record: k, lineage: direction });

/**
 * The record view's part, before the record's history: the devices the record names (its predicates) and the
 * clearances that name it, with links to the lineage view both ways.
 */
export async function showLineageSummary(section, { state, source, current }) {
  const k = state.record;
  const hrefOf = hrefsOf(state);
  const box = h('div', { id: 'lineage', class: 'lineage' });
  const at = section.querySelector('#record-history');
  if (at) at.before(box);
  else section.append(box);
  box.replaceChildren(h('h3', {}, 'Predicates'), h('p', { class: 'muted' }, 'Loading the devices it names and those that name it…'));
  let named;
  let citing;
  try {
    [named, citing] = await Promise.all([
      answerOf(source, question(k, 'predicates', 1, NAMED_LISTED)),
      answerOf(source, question(k, 'descendants', 1, CITED_LISTED)),
    ]);
  } catch (err) {
    if (current()) box.replaceChildren(h('h3', {}, 'Predicates'), h('p', {}, `The lineage could not be loaded: ${err?.message ?? err}`));
    return;
  }
  if (!current()) return;
  const record = (n) => hrefOf(n, null);
  const n = citing.page.total;
  fill(box,
    h('h3', { id: 'predicates-heading' }, 'Predicates'),
    named.page.total === 0
      ? h('p', { class: 'named-count', 'data-count': 0 }, `No device in this data is named by ${k}.`)
      : h('p', { class: 'named-count', 'data-count': named.page.total }, `${k} names ${num(named.page.total)} ${named.page.total === 1 ? 'device' : 'devices'}:`),
    named.data.items.length ? h('ul', { class: 'lineage-list named-list', 'aria-labelledby': 'predicates-heading' }, named.data.items.map((i) => deviceItem(i, record))) : null,
    named.page.hasNextPage ? h('p', {}, h('a', { href: hrefOf(k, 'predicates') }, `All ${num(named.page.total)} in the lineage view`)) : null,
    h('h3', { id: 'cited-heading', class: 'cited-count', 'data-count': n }, `Cited as a predicate by ${num(n)} ${n === 1 ? 'clearance' : 'clearances'}`),
    citing.data.items.length ? h('ul', { class: 'lineage-list cited-list', 'aria-labelledby': 'cited-heading' }, citing.data.items.map((i) => deviceItem(i, record))) : null,
    citing.page.hasNextPage ? h('p', {}, `The first ${num(citing.data.items.length)} by number; `, h('a', { href: hrefOf(k, 'descendants') }, `all ${num(n)} by year in the lineage view`), '.') : null,
    h('p', { class: 'lineage-links' }, 'Lineage: ',
      h('a', { href: hrefOf(k, 'predicates') }, 'predicates up to the oldest'), ' · ',
      h('a', { href: hrefOf(k, 'descendants') }, 'every clearance that descends from it')),
  );
}

/** Positions of the picture: a column per depth, a row per device of the page in that column. */
const COL = 176;
const BOX = { w: 136, h: 20 };
const ROW = 26;
const TOP = 28;

/**
 * The page's devices as a layered picture: the start at the left, one column per depth, each device a link to its
 * own lineage, an edge from the device one step nearer the start (solid: a predicate read from a summary; dashed:
 * named in the documents), a device without a record hollow. An edge from a device of another page starts at the
 * column's edge.
 */
function picture(k, direction, items, hrefOf) {
  const depths = [0, ...new Set(items.map((i) => i.depth))];
  const column = new Map(depths.map((d, i) => [d, i]));
  const rows = new Map();
  const at = new Map();
  const place = (n, depth) => {
    const row = rows.get(depth) ?? 0;
    rows.set(depth, row + 1);
    at.set(n, { x: 8 + column.get(depth) * COL, y: TOP + row * ROW });
  };
  place(k, 0);
  for (const i of items) place(i.kNumber, i.depth);
  const height = TOP + Math.max(...rows.values()) * ROW + 4;
  const width = 8 + depths.length * COL;
  const step = STEP_WORD[direction];
  const edges = items.map((i) => {
    const to = at.get(i.kNumber);
    const from = at.get(i.via) ?? { x: to.x - COL + BOX.w, y: to.y, off: true };
    const x1 = from.off ? to.x - 24 : from.x + BOX.w;
    const y1 = from.y + BOX.h / 2;
    const y2 = to.y + BOX.h / 2;
    return s('path', { class: `edge edge-${i.kind}`, d: `M${x1},${y1} C${x1 + 20},${y1} ${to.x - 20},${y2} ${to.x},${y2}` });
  });
  const node = (n, item) => {
    const p = at.get(n);
    const year = item ? yearOf(item) : null;
    const shown = year ? `${n} · ${year}` : n;
    // The accessible name starts with the text shown, so speech input can name what it sees.
    const label = item
      ? `${shown}: ${year ? `decided ${year}` : 'no record in this data'}, ${item.depth} ${item.depth === 1 ? 'step' : 'steps'} ${step} from ${k}, via ${item.via} (${KIND_TEXT[item.kind] ?? item.kind})`
      : `${shown}: the start`;
    return s('a', { href: hrefOf(n, direction), 'aria-label': label, class: `node${item ? ` node-${item.kind}` : ' node-start'}${item && !hasRecord(item) ? ' node-norecord' : ''}`, 'data-k': n },
      s('title', {}, label),
      s('rect', { x: p.x, y: p.y, width: BOX.w, height: BOX.h, rx: 3 }),
      s('text', { x: p.x + 6, y: p.y + 14 }, shown));
  };
  return s('svg', { class: 'lineage-chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'group', 'aria-labelledby': 'lineage-chart-title lineage-chart-desc' },
    s('title', { id: 'lineage-chart-title' }, `Lineage of ${k}: ${direction === 'predicates' ? 'its predicates, up the chain' : 'the clearances that descend from it'}`),
    s('desc', { id: 'lineage-chart-desc' }, `${items.length} ${items.length === 1 ? 'device' : 'devices'} of this page, one column per step ${step} from ${k}; solid lines are predicates read from a summary, dashed lines numbers named in the documents; the table beside it gives the same.`),
    depths.map((d) => s('text', { class: 'col-label', x: 8 + column.get(d) * COL, y: 14, 'aria-hidden': 'true' }, d === 0 ? 'Start' : `${d} ${d === 1 ? 'step' : 'steps'} ${step}`)),
    s('g', { 'aria-hidden': 'true' }, edges),
    node(k, null),
    items.map((i) => node(i.kNumber, i)));
}

/** The page's devices as a table: the same as the picture, with the record's name and FDA's page where none. */
function table(items, hrefOf, direction) {
  return h('table', { class: 'lineage-table' },
    h('caption', {}, 'The devices of this page'),
    h('thead', {}, h('tr', {}, ['Number', 'Step', 'Via', 'Kind', 'Source', 'Decided', 'Device'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, items.map((i) => h('tr', { 'data-k': i.kNumber, 'data-depth': i.depth, 'data-via': i.via, 'data-kind': i.kind, 'data-source': i.source },
      h('th', { scope: 'row' }, h('a', { href: hrefOf(i.kNumber, direction) }, i.kNumber)),
      h('td', {}, String(i.depth)),
      h('td', {}, i.via),
      h('td', {}, h('span', { class: `kind kind-${i.kind}` }, i.kind)),
      h('td', {}, i.source),
      h('td', {}, i.record === undefined ? (yearOf(i) ?? '') : (i.record?.decisionDate ?? '')),
      h('td', {}, i.record ? h('a', { href: hrefOf(i.kNumber, null) }, i.record.deviceName || 'no device name') : hasRecord(i) ? h('span', { class: 'muted record-loading' }, 'loading its record…') : external(fdaPage(i.kNumber), 'no record here: FDA’s page'))))));
}

/** Counts of the whole answer (not only the page) as a small table. */
function countTable(caption, head, rows) {
  return h('table', { class: 'lineage-counts' }, h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, head), h('th', { scope: 'col' }, 'Devices'))),
    h('tbody', {}, rows.map(([k, n]) => h('tr', {}, h('th', { scope: 'row' }, k), h('td', {}, num(n))))));
}

/**
 * The lineage view of the record in the state's direction: a page at a time (Next and Previous keep the cursors), its
 * counts, the picture and the table, a CSV of the whole lineage, and the feed that follows it: in server mode
 * `/v1/feed?predicate=`; a static host has none per device, and the view says so beside the feed of all it has.
 */
export async function showLineageView(section, { state, source, endpoint, snapshotBase, current }) {
  const { record: k, lineage: direction } = state;
  const hrefOf = hrefsOf(state);
  const backHref = toHash({ ...state, lineage: null });
  const feed = new URL('feed', endpoint);
  feed.searchParams.set('predicate', k);
  const follow = source.mode === 'server'
    ? { href: feed.href, text: `Follow new clearances that name ${k}` }
    : { href: new URL('feeds/new.atom', snapshotBase).href, text: 'Follow all new clearances', note: ` (this host has no feed of the clearances that name ${k}; they are among all new clearances)` };
  // The snapshot's id names the CSV file only: read when one is asked for, not beside the view's own files.
  const snapshotId = () => readSnapshotHead(snapshotBase).then((head) => head?.snapshotId ?? null, () => null);
  document.title = `Lineage of ${k} · FDA 510(k) clearances`;
  const cursors = [null];
  const other = direction === 'predicates' ? 'descendants' : 'predicates';
  const heading = h('h2', { id: 'record-heading', tabindex: '-1' }, `Lineage of ${k}: ${direction === 'predicates' ? 'predicates up to the oldest' : 'the clearances that descend from it'}`);
  const body = h('div', { class: 'lineage-body' }, h('p', { class: 'muted' }, 'Loading the lineage…'));
  const csvStatus = h('span', { class: 'lineage-csv-status', role: 'status' });
  const csvButton = h('button', { type: 'button', class: 'lineage-csv' }, 'Download this lineage as CSV');
  csvButton.addEventListener('click', () => downloadCsv({ k, direction, source, snapshotId: snapshotId(), button: csvButton, status: csvStatus }));
  fill(section,
    h('p', {}, h('a', { class: 'back', href: backHref }, `← Back to ${k}`)),
    heading,
    h('p', { class: 'lineage-links' }, h('a', { href: hrefOf(k, other) }, other === 'predicates' ? 'Its predicates instead' : 'Its descendants instead')),
    h('p', { class: 'lineage-follow' }, follow.href ? h('a', { href: follow.href, class: 'follow' }, follow.text) : null, follow.note ?? null),
    h('p', {}, csvButton, ' ', csvStatus),
    body,
  );
  heading.focus();
  // Says what the body shows while the walk runs and when it ends (the body itself is busy meanwhile, so it says nothing).
  const progress = h('p', { class: 'lineage-progress sr-only', role: 'status' });
  body.before(progress);
  let showing = 0;
  const show = async (page) => {
    const seq = ++showing;
    const live = () => current() && seq === showing;
    body.setAttribute('aria-busy', 'true');
    delete body.dataset.shows;
    delete body.dataset.records;
    let answer;
    try {
      const input = question(k, direction, null, LINEAGE_PAGE, cursors[page]);
      // Static mode draws the first devices as the walk finds them, each exactly as the answer will have it, and the
      // whole view but for the records when the lineage is known whole before its records are read.
      answer = source.lineage.progressive && cursors[page] === null
        ? await answerOf({ lineage: (q) => source.lineage.progressive(q, (part) => live() && (part.names ? nameRows(part.names) : part.whole ? render(part.whole, page, false) : showPart(part))) }, input)
        : await answerOf(source, input);
    } catch (err) {
      if (live()) {
        body.removeAttribute('aria-busy');
        progress.textContent = '';
        body.replaceChildren(h('p', { role: 'alert' }, `The lineage could not be loaded: ${err?.message ?? err}`));
      }
      return;
    }
    if (!live()) return;
    render(answer, page, true);
  };
  /**
   * An answer's page: its total, cycles, picture and table, pager and counts. `records` false: the answer but for
   * its records (still read; the view stays busy, and the table says each record is loading), true: the answer.
   */
  const render = (answer, page, records) => {
    if (records) body.removeAttribute('aria-busy');
    delete body.dataset.partial;
    // Which question and page the body shows, for whoever waits on it (a test, an extension), and whether with its records.
    body.dataset.shows = `${k} ${direction} ${page + 1}`;
    if (records) body.dataset.records = body.dataset.shows;
    const { data, page: p } = answer;
    cursors[page + 1] = p.nextCursor;
    const first = page * LINEAGE_PAGE + 1;
    const last = first + data.items.length - 1;
    const deepest = data.byDepth.at(-1)?.depth ?? 0;
    const loaded = `Lineage loaded: ${num(p.total)} ${p.total === 1 ? 'device' : 'devices'} in ${num(deepest)} ${deepest === 1 ? 'step' : 'steps'}`;
    progress.textContent = !records ? `${loaded}; loading their records.` : drawn ? `${loaded}.` : '';
    drawn = records ? 0 : -1;
    const pager = h('nav', { class: 'lineage-pager', 'aria-label': 'Pages of the lineage' },
      page > 0 ? h('button', { type: 'button', class: 'prev', onclick: () => show(page - 1) }, 'Previous') : null,
      p.hasNextPage ? h('button', { type: 'button', class: 'next', onclick: () => show(page + 1) }, 'Next') : null);
    fill(body,
      h('p', { class: 'lineage-total', 'data-total': p.total },
        p.total === 0
          ? `No device in this data is ${direction === 'predicates' ? `named by ${k}` : `descended from ${k}`}.`
          : `${num(p.total)} ${p.total === 1 ? 'device' : 'devices'} in ${num(deepest)} ${deepest === 1 ? 'step' : 'steps'}${p.total > data.items.length ? `; devices ${num(first)} to ${num(last)} below, by step then number` : ''}.`),
      data.cycles.length ? h('p', { class: 'lineage-cycles' }, `The chain loops back ${data.cycles.length === 1 ? 'once' : `${num(data.cycles.length)} times`} (${data.cycles.map((c) => `${c.via} names ${c.kNumber}`).join('; ')}); each device is shown once.`) : null,
      data.items.length ? figure(data.items) : null,
      data.items.length ? pager : null,
      p.total ? h('div', { class: 'lineage-count-tables' },
        countTable('Devices by step', 'Step', data.byDepth.map((d) => [String(d.depth), d.count])),
        countTable('Devices by decision year', 'Year', data.byYear.map((y) => [y.year === null ? 'no record or date' : String(y.year), y.count]))) : null,
    );
  };
  const figure = (items) => h('div', { class: 'lineage-figure' },
    h('div', { class: 'lineage-picture' }, picture(k, direction, items, hrefOf),
      h('p', { class: 'legend' }, h('span', { class: 'key key-predicate', 'aria-hidden': 'true' }), ' predicate (read from its summary) ',
        h('span', { class: 'key key-named', 'aria-hidden': 'true' }), ' named in its documents · a hollow box: no record in this data')),
    table(items, hrefOf, direction));
  /** The table's devices still waiting for their records, named as the answer will name them. */
  const nameRows = (names) => {
    for (const cell of body.querySelectorAll('.lineage-table tbody tr td .record-loading')) {
      const k = cell.closest('tr')?.dataset.k;
      if (k && names.has(k)) cell.replaceWith(h('a', { href: hrefOf(k, null) }, names.get(k) || 'no device name'));
    }
  };
  /** Devices drawn before the answer (0: none): the picture and table are drawn again only when there are more. */
  let drawn = 0;
  /**
   * What the walk has found final so far, before its answer: the first devices (all of those within `depth` steps,
   * as many as a page holds), drawn as the answer will draw them, and a line that says the rest is still loading (the
   * steps beyond, or only the records when the whole lineage is known).
   * No count of the whole lineage, no pager: those wait for the answer.
   */
  const showPart = ({ items, known, depth, complete = false }) => {
    const line = complete
      ? `${num(known)} ${known === 1 ? 'device' : 'devices'} in ${num(depth)} ${depth === 1 ? 'step' : 'steps'}; loading their records…`
      : `${num(known)} ${known === 1 ? 'device' : 'devices'} found so far, within ${num(depth)} ${depth === 1 ? 'step' : 'steps'}; still loading the steps beyond…`;
    progress.textContent = `Loading the lineage: ${num(known)} ${known === 1 ? 'device' : 'devices'} found so far.`;
    body.dataset.partial = `${k} ${direction} ${known}`;
    const said = body.querySelector('.lineage-partial');
    if (said && items.length === drawn) {
      said.textContent = line;
      Object.assign(said.dataset, { known, depth });
      return;
    }
    drawn = items.length;
    fill(body, h('p', { class: 'lineage-partial muted', 'data-known': known, 'data-depth': depth }, line), items.length ? figure(items) : null);
  };
  await show(0);
}

/** Every device of the lineage (up to LINEAGE_CSV_LIMIT) as CSV: the edge's members, then the record's. */
async function downloadCsv({ k, direction, source, snapshotId, button, status }) {
  button.disabled = true;
  try {
    const { CSV_COLUMNS, csvCell } = await import('./csv-format.js');
    const columns = CSV_COLUMNS.filter((c) => c !== 'kNumber');
    let out = `\uFEFF${['kNumber', 'depth', 'via', 'kind', 'source', ...columns].join(',')}\r\n`;
    let cursor = null;
    let rows = 0;
    let total = 0;
    do {
      const { data, page } = await answerOf(source, question(k, direction, null, 500, cursor));
      total = page.total;
      for (const i of data.items) {
        const r = i.record ?? {};
        out += `${[i.kNumber, i.depth, i.via, i.kind, i.source, ...columns.map((c) => (c === 'sourceUrl' ? r.source?.sourceUrl : r[c]))].map(csvCell).join(',')}\r\n`;
      }
      rows += data.items.length;
      cursor = page.nextCursor;
      status.textContent = `Collecting ${num(rows)} of ${num(total)}…`;
    } while (cursor && rows < LINEAGE_CSV_LIMIT);
    const id = await snapshotId;
    const name = `device-510k-lineage-${k.toLowerCase()}-${direction}${id ? `-${id.toLowerCase().replace(/[^a-z0-9]+/g, '-')}` : ''}.csv`;
    const a = h('a', { href: URL.createObjectURL(new Blob([out], { type: 'text/csv;charset=utf-8' })), download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    status.textContent = rows < total ? `Downloaded the first ${num(rows)} of ${num(total)} devices.` : `Downloaded all ${num(rows)} ${rows === 1 ? 'device' : 'devices'} as CSV.`;
  } catch (err) {
    status.textContent = `The download failed: ${err?.message ?? err}`;
  } finally {
    button.disabled = false;
  }
}
