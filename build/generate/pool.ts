import { PMN_COLUMNS } from '../sources/parse.ts';
import { dayOf, parseFdaDate } from './dates.ts';

/*
 * The real rows a generated set is drawn from. Text stays in "latin1" strings (one char per byte), so every byte of
 * FDA's Windows-1252 files goes back out unchanged and the output can hold nothing cp1252 cannot encode.
 */
const col = (name: (typeof PMN_COLUMNS)[number]): number => PMN_COLUMNS.indexOf(name);
const RECEIVED = col('DATERECEIVED');
const DECISION_DATE = col('DECISIONDATE');
const APPLICANT_FIRST = col('APPLICANT');
const DEVICE_FIRST = col('DECISION');
const MAX_REVIEW_DAYS = 3650;

export type PmnFile = { name: string; header: string; rows: string[][] };

export type Pool = {
  /** FDA's header line, without its CRLF. */
  header: string;
  /** APPLICANT…POSTAL_CODE of one real row, joined by `|`: who submitted, and where from. */
  applicants: string[];
  /** DECISION…DEVICENAME of one real row, joined by `|`: what was cleared (product code, committee, name…). */
  devices: string[];
  /** Days from receipt to decision of every real row that has both (1 to 3,650). */
  reviewDays: Int32Array;
  /** Real DECISIONDATE values that are impossible or before 1976 (FDA-side glitches such as `08/04/0020`). */
  glitchDates: string[];
  /** Share of real rows whose decision date is such a glitch. */
  glitchRate: number;
  /** The oldest real receipt (FDA's 510(k) program began in May 1976): no generated receipt comes before it. */
  firstDay: number;
  /** The newest real decision date: no generated date goes past it. */
  lastDay: number;
};

/** Splits one pmn file (as a latin1 string) into its header and 22-column rows; a bad column count is an error. */
export function parsePmnText(name: string, text: string): PmnFile {
  const lines = text.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const header = lines.shift();
  if (header === undefined || header.replaceAll('\0', '') !== PMN_COLUMNS.join('|')) {
    throw new Error(`${name}: expected FDA's pmn header line (${PMN_COLUMNS.length} columns starting KNUMBER|APPLICANT)`);
  }
  const rows = lines.map((line, i) => {
    const fields = line.split('|');
    if (fields.length !== PMN_COLUMNS.length) {
      throw new Error(`${name} line ${i + 2}: expected ${PMN_COLUMNS.length} columns, got ${fields.length}`);
    }
    return fields;
  });
  return { name, header, rows };
}

/** Gathers the pool from parsed files. Only rows of K numbers count: De Novo (DEN) rows would be odd as 510(k)s. */
export function buildPool(files: readonly PmnFile[]): Pool {
  const first = files[0];
  if (!first) throw new Error('Expected at least one pmn file to draw from');
  const applicants: string[] = [];
  const devices: string[] = [];
  const reviewDays: number[] = [];
  const glitchDates: string[] = [];
  let rows = 0;
  let firstDay = Number.POSITIVE_INFINITY;
  let lastDay = Number.NEGATIVE_INFINITY;
  const earliest = dayOf(1976, 1, 1);
  for (const file of files) {
    if (file.header !== first.header) throw new Error(`${file.name}: header line differs from ${first.name}'s`);
    for (const fields of file.rows) {
      if (!/^K\d{6}$/.test((fields[0] ?? '').replaceAll('\0', '').trim())) continue;
      rows++;
      applicants.push(fields.slice(APPLICANT_FIRST, RECEIVED).join('|'));
      devices.push(fields.slice(DEVICE_FIRST).join('|'));
      const decisionText = (fields[DECISION_DATE] ?? '').replaceAll('\0', '');
      const decided = parseFdaDate(decisionText);
      const received = parseFdaDate((fields[RECEIVED] ?? '').replaceAll('\0', ''));
      if (decisionText.trim() !== '' && (decided === null || decided < earliest)) {
        glitchDates.push(decisionText);
        continue;
      }
      if (decided !== null && decided > lastDay) lastDay = decided;
      if (received !== null && received >= earliest && received < firstDay) firstDay = received;
      if (decided !== null && received !== null) {
        const days = decided - received;
        if (days >= 1 && days <= MAX_REVIEW_DAYS) reviewDays.push(days);
      }
    }
  }
  if (rows === 0) throw new Error('Expected the pmn files to hold at least one K-number row');
  if (reviewDays.length === 0) throw new Error('Expected at least one real row with both a received and a decision date');
  return {
    header: first.header,
    applicants,
    devices,
    reviewDays: Int32Array.from(reviewDays),
    glitchDates,
    glitchRate: glitchDates.length / rows,
    firstDay,
    lastDay,
  };
}
