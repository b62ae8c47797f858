import { z } from 'zod';
import { reviewDaysOf } from './review-days.ts';

export const COLLECTION = 'device-510k';

/** ISO 8601 calendar date, YYYY-MM-DD. */
export const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

export const SourceRef = z.strictObject({
  schemaVersion: z.literal(1),
  sourceId: z.string(),
  collection: z.string(),
  recordId: z.string(),
  textOrigin: z.literal('metadata'),
  sourceUrl: z.string().nullable(),
});
export type SourceRef = z.infer<typeof SourceRef>;

/** One 510(k) clearance, members in the contract's order (docs/contract.md section 4). */
export const ClearanceRecord = z.strictObject({
  id: z.string().regex(/^K\d{6}$/),
  kNumber: z.string().regex(/^K\d{6}$/),
  title: z.string(),
  deviceName: z.string(),
  applicant: z.string().nullable(),
  productCode: z.string().nullable(),
  decisionDate: IsoDate.nullable(),
  decisionDescription: z.string().nullable(),
  receivedDate: IsoDate.nullable(),
  advisoryCommittee: z.string().nullable(),
  classificationCommittee: z.string().nullable(),
  statementOrSummary: z.string().nullable(),
  submissionType: z.string().nullable(),
  thirdParty: z.boolean().nullable(),
  expeditedReview: z.boolean().nullable(),
  countryCode: z.string().nullable(),
  evidenceStatus: z.literal('available'),
  source: SourceRef,
  // Members after `source` extend the contract's record (docs/contract.md, "Record members beyond the spec").
  contact: z.string().nullable(),
  street1: z.string().nullable(),
  street2: z.string().nullable(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  zipCode: z.string().nullable(),
  postalCode: z.string().nullable(),
  decisionCode: z.string().nullable(),
  /** decisionDate minus receivedDate in days; null when either is missing. */
  reviewDays: z.int().nullable(),
});
export type ClearanceRecord = z.infer<typeof ClearanceRecord>;

/** The members of a record that come from the sources; the rest are derived from these. */
export const CLEARANCE_FIELDS = [
  'deviceName',
  'applicant',
  'productCode',
  'decisionDate',
  'decisionDescription',
  'receivedDate',
  'advisoryCommittee',
  'classificationCommittee',
  'statementOrSummary',
  'submissionType',
  'thirdParty',
  'expeditedReview',
  'countryCode',
  'contact',
  'street1',
  'street2',
  'city',
  'state',
  'zipCode',
  'postalCode',
  'decisionCode',
] as const;
export type ClearanceField = (typeof CLEARANCE_FIELDS)[number];

/** What one source row says about a clearance, before merging. */
export type ClearanceFields = { [F in ClearanceField]: ClearanceRecord[F] };

export function sourceRefFor(kNumber: string): SourceRef {
  return {
    schemaVersion: 1,
    sourceId: `v1:${encodeURIComponent(COLLECTION)}:${kNumber}`,
    collection: COLLECTION,
    recordId: kNumber,
    textOrigin: 'metadata',
    sourceUrl: `https://www.accessdata.fda.gov/scripts/cdrh/cfdocs/cfpmn/pmn.cfm?ID=${kNumber}`,
  };
}

/** Builds the full record, members in contract order, from its K number and merged fields. */
export function toClearanceRecord(kNumber: string, f: ClearanceFields): ClearanceRecord {
  return {
    id: kNumber,
    kNumber,
    title: f.deviceName,
    deviceName: f.deviceName,
    applicant: f.applicant,
    productCode: f.productCode,
    decisionDate: f.decisionDate,
    decisionDescription: f.decisionDescription,
    receivedDate: f.receivedDate,
    advisoryCommittee: f.advisoryCommittee,
    classificationCommittee: f.classificationCommittee,
    statementOrSummary: f.statementOrSummary,
    submissionType: f.submissionType,
    thirdParty: f.thirdParty,
    expeditedReview: f.expeditedReview,
    countryCode: f.countryCode,
    evidenceStatus: 'available',
    source: sourceRefFor(kNumber),
    contact: f.contact,
    street1: f.street1,
    street2: f.street2,
    city: f.city,
    state: f.state,
    zipCode: f.zipCode,
    postalCode: f.postalCode,
    decisionCode: f.decisionCode,
    reviewDays: reviewDaysOf(f.receivedDate, f.decisionDate),
  };
}

export { reviewDaysOf } from './review-days.ts';
