import { toClearanceRecord, type ClearanceFields, type ClearanceRecord } from '../../src/contract/index.ts';

/**
 * The one record factory of the tests: every source field empty unless given, and the derived members (id, title,
 * evidenceStatus, source) made by the contract's own `toClearanceRecord`, so a test states only what it is about.
 */
export function fieldsOf(given: Partial<ClearanceFields> = {}): ClearanceFields {
  return {
    deviceName: '',
    applicant: null,
    productCode: null,
    decisionDate: null,
    decisionDescription: null,
    receivedDate: null,
    advisoryCommittee: null,
    classificationCommittee: null,
    statementOrSummary: null,
    submissionType: null,
    thirdParty: null,
    expeditedReview: null,
    countryCode: null,
    contact: null,
    street1: null,
    street2: null,
    city: null,
    state: null,
    zipCode: null,
    postalCode: null,
    decisionCode: null,
    ...given,
  };
}

export function makeRecord(kNumber: string, given: Partial<ClearanceFields> = {}): ClearanceRecord {
  return toClearanceRecord(kNumber, fieldsOf(given));
}
