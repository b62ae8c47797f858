import type { ProductCodeEntry } from '../contract/classification.ts';
import type { ClearanceRecord } from '../contract/record.ts';
import { committeeCode, submissionTypeId, unclassifiedReasonId } from './committees.ts';

/**
 * The one mapping from this service's records to openFDA's: members in openFDA's order, its names and value formats
 * (dates YYYY-MM-DD, flags Y/N, an empty string where FDA's file is empty, committees as their two-letter codes), and
 * the `openfda` block from the product code's classification. /device/510k.json sends records only through this
 * function, from the same record bytes /v1/query's detail sends.
 */
export type OpenFda510k = Record<string, string | Record<string, string | string[]>>;

const text = (v: string | null): string => v ?? '';
const flag = (v: boolean | null): string => (v === null ? '' : v ? 'Y' : 'N');

/**
 * The `openfda` block of a 510(k): the classification of its product code, or nothing when the classification file
 * does not list the code. As openFDA writes it, every member is present for a listed code: an empty regulation
 * number is "", and a code without a medical specialty is "Unknown".
 */
export function openfdaBlock(entry: ProductCodeEntry | undefined): Record<string, string> {
  if (!entry || (entry.deviceType === null && entry.deviceClass === null && entry.regulationNumber === null)) return {};
  return {
    device_name: text(entry.deviceType),
    medical_specialty_description: entry.medicalSpecialty ?? 'Unknown',
    regulation_number: text(entry.regulationNumber),
    device_class: text(entry.deviceClass),
  };
}

export function toOpenFda510k(r: ClearanceRecord, entry: ProductCodeEntry | undefined): OpenFda510k {
  return {
    third_party_flag: flag(r.thirdParty),
    city: text(r.city),
    advisory_committee_description: text(r.classificationCommittee),
    address_1: text(r.street1),
    address_2: text(r.street2),
    statement_or_summary: text(r.statementOrSummary),
    product_code: text(r.productCode),
    openfda: openfdaBlock(entry),
    zip_code: text(r.zipCode),
    applicant: text(r.applicant),
    decision_date: text(r.decisionDate),
    decision_code: text(r.decisionCode),
    country_code: text(r.countryCode),
    device_name: r.deviceName,
    advisory_committee: text(committeeCode(r.classificationCommittee)),
    contact: text(r.contact),
    expedited_review_flag: flag(r.expeditedReview),
    k_number: r.kNumber,
    state: text(r.state),
    date_received: text(r.receivedDate),
    review_advisory_committee: text(committeeCode(r.advisoryCommittee)),
    postal_code: text(r.postalCode),
    decision_description: text(r.decisionDescription),
    clearance_type: text(r.submissionType),
  };
}

/** A product code's classification in openFDA's /device/classification.json shape; `kNumbers` are its 510(k)s. */
export function toOpenFdaClassification(e: ProductCodeEntry, kNumbers: readonly string[]): OpenFda510k {
  return {
    definition: text(e.definition),
    device_class: text(e.deviceClass),
    device_name: text(e.deviceType),
    gmp_exempt_flag: flag(e.gmpExempt),
    implant_flag: flag(e.implant),
    life_sustain_support_flag: flag(e.lifeSustaining),
    medical_specialty: text(committeeCode(e.medicalSpecialty)),
    medical_specialty_description: text(e.medicalSpecialty),
    openfda: kNumbers.length > 0 ? { k_number: [...kNumbers] } : {},
    physical_state: text(e.physicalState),
    product_code: e.productCode,
    regulation_number: text(e.regulationNumber),
    review_code: text(e.thirdPartyReviewCode),
    review_panel: text(committeeCode(e.reviewPanel)),
    submission_type_id: text(submissionTypeId(e.submissionType)),
    summary_malfunction_reporting: text(e.summaryMalfunctionReporting),
    target_area: text(e.targetArea),
    technical_method: text(e.technicalMethod),
    third_party_flag: flag(e.thirdPartyEligible),
    unclassified_reason: text(unclassifiedReasonId(e.unclassifiedReason)),
  };
}
