import type { ClearanceFields } from '../../src/contract/index.ts';
import { repairC1 } from './cp1252.ts';
import { committeeName, decisionName, type Lookups } from './lookups.ts';
import { collapsed, flag, kNumberOf, openFdaDate, productCodeOf, trimmed, upper, usDate } from './text.ts';

export type FieldIssue = { field: string; reason: string };

export type RowOutcome =
  | { kind: 'record'; kNumber: string; fields: ClearanceFields; issues: FieldIssue[] }
  | { kind: 'skip'; kNumber: string | null; reason: string };

type Raw = {
  kNumber: string | undefined;
  deviceName: string | undefined;
  applicant: string | undefined;
  productCode: string | undefined;
  decisionDate: { value: string | null; issue: string | null };
  receivedDate: { value: string | null; issue: string | null };
  decisionDescription: string | null;
  advisoryCommittee: string | undefined;
  classificationCommittee: string | null;
  statementOrSummary: string | undefined;
  submissionType: string | undefined;
  thirdParty: string | undefined;
  expeditedReview: string | undefined;
  countryCode: string | undefined;
  contact: string | undefined;
  street1: string | undefined;
  street2: string | undefined;
  city: string | undefined;
  state: string | undefined;
  zipCode: string | undefined;
  postalCode: string | undefined;
  decisionCode: string | undefined;
};

function toOutcome(raw: Raw, lookups: Lookups): RowOutcome {
  const k = kNumberOf(raw.kNumber);
  if ('skip' in k) return { kind: 'skip', kNumber: trimmed(raw.kNumber), reason: k.skip };
  const issues: FieldIssue[] = [];
  if (raw.decisionDate.issue) issues.push({ field: 'decisionDate', reason: raw.decisionDate.issue });
  if (raw.receivedDate.issue) issues.push({ field: 'receivedDate', reason: raw.receivedDate.issue });
  const code = productCodeOf(raw.productCode);
  if (code.issue) issues.push({ field: 'productCode', reason: code.issue });
  return {
    kind: 'record',
    kNumber: k.kNumber,
    issues,
    fields: {
      deviceName: collapsed(raw.deviceName) ?? '',
      applicant: collapsed(raw.applicant),
      productCode: code.value,
      decisionDate: raw.decisionDate.value,
      decisionDescription: raw.decisionDescription,
      receivedDate: raw.receivedDate.value,
      advisoryCommittee: committeeName(lookups, upper(raw.advisoryCommittee)),
      classificationCommittee: raw.classificationCommittee,
      statementOrSummary: trimmed(raw.statementOrSummary),
      submissionType: trimmed(raw.submissionType),
      thirdParty: flag(raw.thirdParty),
      expeditedReview: flag(raw.expeditedReview),
      countryCode: upper(raw.countryCode),
      contact: collapsed(raw.contact),
      street1: collapsed(raw.street1),
      street2: collapsed(raw.street2),
      city: collapsed(raw.city),
      state: upper(raw.state),
      zipCode: trimmed(raw.zipCode),
      postalCode: trimmed(raw.postalCode),
      decisionCode: upper(raw.decisionCode),
    },
  };
}

/** One row of FDA's pipe-delimited pmn file, by column name. */
export function fromPmnRow(row: Readonly<Record<string, string>>, lookups: Lookups): RowOutcome {
  return toOutcome(
    {
      kNumber: row.KNUMBER,
      deviceName: row.DEVICENAME,
      applicant: row.APPLICANT,
      productCode: row.PRODUCTCODE,
      decisionDate: usDate(row.DECISIONDATE),
      receivedDate: usDate(row.DATERECEIVED),
      decisionDescription: decisionName(lookups, upper(row.DECISION)),
      advisoryCommittee: row.REVIEWADVISECOMM,
      classificationCommittee: committeeName(lookups, upper(row.CLASSADVISECOMM)),
      statementOrSummary: row.STATEORSUMM,
      submissionType: row.TYPE,
      thirdParty: row.THIRDPARTY,
      expeditedReview: row.EXPEDITEDREVIEW,
      countryCode: row.COUNTRY_CODE,
      contact: row.CONTACT,
      street1: row.STREET1,
      street2: row.STREET2,
      city: row.CITY,
      state: row.STATE,
      zipCode: row.ZIP,
      postalCode: row.POSTAL_CODE,
      decisionCode: row.DECISION,
    },
    lookups,
  );
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? repairC1(v) : typeof v === 'number' ? String(v) : undefined);

/** One element of `results` in openFDA's device-510k download. */
export function fromOpenFdaResult(result: Readonly<Record<string, unknown>>, lookups: Lookups): RowOutcome {
  const description = collapsed(str(result.decision_description));
  const committeeCode = upper(str(result.advisory_committee));
  return toOutcome(
    {
      kNumber: str(result.k_number),
      deviceName: str(result.device_name),
      applicant: str(result.applicant),
      productCode: str(result.product_code),
      decisionDate: openFdaDate(str(result.decision_date)),
      receivedDate: openFdaDate(str(result.date_received)),
      decisionDescription: description ?? decisionName(lookups, upper(str(result.decision_code))),
      advisoryCommittee: str(result.review_advisory_committee),
      classificationCommittee:
        committeeCode !== null ? committeeName(lookups, committeeCode) : collapsed(str(result.advisory_committee_description)),
      statementOrSummary: str(result.statement_or_summary),
      submissionType: str(result.clearance_type),
      thirdParty: str(result.third_party_flag),
      expeditedReview: str(result.expedited_review_flag),
      countryCode: str(result.country_code),
      contact: str(result.contact),
      street1: str(result.address_1),
      street2: str(result.address_2),
      city: str(result.city),
      state: str(result.state),
      zipCode: str(result.zip_code),
      postalCode: str(result.postal_code),
      decisionCode: str(result.decision_code),
    },
    lookups,
  );
}
