import type { ClearanceRecord } from '../contract/index.ts';

/**
 * What a CSV export is, in one place for every writer: the columns, the cell rule (quoting and formula protection),
 * the row of a record, and the file's name. The server's export writes rows from the records' bytes (csv.ts) with the
 * same output; the static page, which has no server, runs this module bundled as public/js/csv-format.js
 * (npm run build:page), so both modes give the same bytes for the same search.
 */

/** The CSV's columns: every member of a record, `source` as its URL; `id` and `title` repeat kNumber and deviceName. */
export const CSV_COLUMNS = [
  'kNumber', 'deviceName', 'applicant', 'productCode', 'decisionDate', 'decisionCode', 'decisionDescription', 'receivedDate',
  'reviewDays', 'advisoryCommittee', 'classificationCommittee', 'statementOrSummary', 'submissionType', 'thirdParty',
  'expeditedReview', 'contact', 'street1', 'street2', 'city', 'state', 'zipCode', 'postalCode', 'countryCode', 'sourceUrl',
] as const;

/** The file's start: a UTF-8 byte-order mark (so that Excel reads accents right) and the header row. */
export const CSV_HEAD = `\uFEFF${CSV_COLUMNS.join(',')}\r\n`;

/**
 * A text cell that a spreadsheet would read as a formula starts with one of = + - @ a tab or a carriage return (OWASP,
 * "CSV Injection"); one that starts with an apostrophe gets one too, so that the protection can be undone exactly.
 */
const PROTECTED_START = /^[=+\-@\t\r']/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled; null (or a member the record
 * lacks) is an empty field. A text value starting with = + - @ a tab or a carriage return gets a leading apostrophe
 * first, as OWASP advises, so that a spreadsheet shows it as text instead of running it as a formula; so does a text
 * value that starts with an apostrophe itself (FDA names such as `'ONE TOUCH' LATEX…`). A program gets the value
 * back exactly by dropping one leading apostrophe from a text cell that has one. Numbers and booleans are written as
 * they are (a negative review time stays a number).
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const s = PROTECTED_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** The row of a parsed record, CRLF included. */
export function csvRowOf(r: ClearanceRecord): string {
  return `${CSV_COLUMNS.map((c) => csvCell(c === 'sourceUrl' ? r.source?.sourceUrl : r[c])).join(',')}\r\n`;
}

/** A whole CSV file of `records`, in their order. */
export function csvText(records: readonly ClearanceRecord[]): string {
  let out = CSV_HEAD;
  for (const r of records) out += csvRowOf(r);
  return out;
}

/** What names an export: the search's inputs (GET /v1/export's query parameters). */
export type ExportSearch = {
  query: string;
  applicant: string | null;
  productCode: string | null;
  yearFrom: number | null;
  yearTo: number | null;
  sort?: string | null | undefined;
};

/** Letters and digits of `text`, lower case, accents dropped, anything else one hyphen. */
function slug(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The longest name part the search gives, so that a long query still makes a name every file system takes. */
const MAX_SEARCH_CHARS = 80;

/**
 * The file name of an export, which says the search: `device-510k-<search>-<snapshot id>.<extension>`, the search
 * as its words, filters, years and sort (for example `device-510k-catheter-not-foley-code-dqy-1990-2000-5b01966a3bf51458.csv` for `catheter -foley`),
 * `all` for no search. Plain ASCII letters, digits and hyphens, so it goes into a Content-Disposition header as it is.
 */
export function exportFileName(search: ExportSearch, snapshotId: string | null, extension: 'csv' | 'ndjson' = 'csv'): string {
  const parts: string[] = [];
  // An exclusion reads as one: `catheter -foley` names catheter-not-foley, not the same file as `catheter foley`.
  if (search.query.trim()) parts.push(slug(search.query.replace(/(^|\s)-(?=\S)/g, '$1not ')));
  if (search.applicant) parts.push(`applicant-${slug(search.applicant)}`);
  if (search.productCode) parts.push(`code-${slug(search.productCode)}`);
  const { yearFrom: from, yearTo: to } = search;
  if (from !== null || to !== null) parts.push(from === to ? `${from}` : from === null ? `to-${to}` : to === null ? `from-${from}` : `${from}-${to}`);
  if (search.sort && search.sort !== 'relevance') parts.push(`by-${slug(search.sort)}`);
  let what = parts.filter(Boolean).join('-');
  if (what.length > MAX_SEARCH_CHARS) what = what.slice(0, MAX_SEARCH_CHARS).replace(/-+$/, '');
  const id = snapshotId ? slug(snapshotId) : '';
  return `device-510k-${what || 'all'}${id ? `-${id}` : ''}.${extension}`;
}
