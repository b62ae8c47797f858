import type { ClearanceRecord } from '../../src/contract/index.ts';

/**
 * The columns of the bulk downloads: one per member of the clearance record, named as the member, in the record's
 * order, each with one type for every row.
 *
 * - `text`: UTF-8 text; `date`: a calendar day (Parquet DATE; ISO `YYYY-MM-DD` text in SQLite); `flag`: a boolean
 *   (Parquet BOOLEAN; 0 or 1 in SQLite, which has no boolean type); `int`: a whole number (INT32); `source`: the
 *   record's `source` object (a Parquet struct of its members; its JSON text in SQLite).
 * - `required`: never null in any record (the contract's schema says so); the rest may be null.
 */
export type ColumnKind = 'text' | 'date' | 'flag' | 'int' | 'source';
export type Column = { name: keyof ClearanceRecord; kind: ColumnKind; required: boolean };

/** Kinds by member; `satisfies` makes the compiler refuse a member left out or one the record does not have. */
const KINDS = {
  id: ['text', true],
  kNumber: ['text', true],
  title: ['text', true],
  deviceName: ['text', true],
  applicant: ['text', false],
  productCode: ['text', false],
  decisionDate: ['date', false],
  decisionDescription: ['text', false],
  receivedDate: ['date', false],
  advisoryCommittee: ['text', false],
  classificationCommittee: ['text', false],
  statementOrSummary: ['text', false],
  submissionType: ['text', false],
  thirdParty: ['flag', false],
  expeditedReview: ['flag', false],
  countryCode: ['text', false],
  evidenceStatus: ['text', true],
  source: ['source', true],
  contact: ['text', false],
  street1: ['text', false],
  street2: ['text', false],
  city: ['text', false],
  state: ['text', false],
  zipCode: ['text', false],
  postalCode: ['text', false],
  decisionCode: ['text', false],
  reviewDays: ['int', false],
} as const satisfies { [K in keyof ClearanceRecord]: readonly [ColumnKind, boolean] };

export const COLUMNS: readonly Column[] = Object.entries(KINDS).map(([name, [kind, required]]) => ({
  name: name as keyof ClearanceRecord,
  kind,
  required,
}));

/** The members of `source`, in the record's order, with the Parquet type of each (`sourceUrl` may be null). */
export const SOURCE_MEMBERS = [
  { name: 'schemaVersion', kind: 'int', required: true },
  { name: 'sourceId', kind: 'text', required: true },
  { name: 'collection', kind: 'text', required: true },
  { name: 'recordId', kind: 'text', required: true },
  { name: 'textOrigin', kind: 'text', required: true },
  { name: 'sourceUrl', kind: 'text', required: false },
] as const satisfies readonly { name: keyof ClearanceRecord['source']; kind: 'int' | 'text'; required: boolean }[];

const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of an ISO calendar date (Parquet's DATE). */
export function epochDay(iso: string): number {
  return Date.parse(`${iso}T00:00:00Z`) / DAY_MS;
}
