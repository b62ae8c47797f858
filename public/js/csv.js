// CSV of clearance records: RFC 4180 (quoted where needed, CRLF line ends), UTF-8 with a byte-order mark so that
// Excel reads accents right. Pure functions: the page builds the file, the browser saves it.
import { reviewDays } from './state.js';

/** Columns in the record's order, with the review time and FDA's page added. */
export const CSV_COLUMNS = [
  ['kNumber', (r) => r.kNumber],
  ['deviceName', (r) => r.deviceName],
  ['applicant', (r) => r.applicant],
  ['productCode', (r) => r.productCode],
  ['decisionDate', (r) => r.decisionDate],
  ['decisionDescription', (r) => r.decisionDescription],
  ['receivedDate', (r) => r.receivedDate],
  ['reviewDays', (r) => r.reviewDays ?? reviewDays(r.receivedDate, r.decisionDate)],
  ['advisoryCommittee', (r) => r.advisoryCommittee],
  ['classificationCommittee', (r) => r.classificationCommittee],
  ['statementOrSummary', (r) => r.statementOrSummary],
  ['submissionType', (r) => r.submissionType],
  ['thirdParty', (r) => r.thirdParty],
  ['expeditedReview', (r) => r.expeditedReview],
  ['countryCode', (r) => r.countryCode],
  ['fdaUrl', (r) => r.source?.sourceUrl ?? `https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${r.kNumber}`],
];

export function csvCell(value) {
  if (value === null || value === undefined) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(records) {
  const rows = [CSV_COLUMNS.map(([name]) => name).join(',')];
  for (const r of records) rows.push(CSV_COLUMNS.map(([, get]) => csvCell(get(r))).join(','));
  return `\ufeff${rows.join('\r\n')}\r\n`;
}
