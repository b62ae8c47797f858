import type { Classification } from '../../src/contract/index.ts';
import { committeeName, type Lookups } from './lookups.ts';
import { flag, productCodeOf, trimmed, upper } from './text.ts';

export type ClassificationOutcome = { kind: 'classification'; value: Classification } | { kind: 'skip'; reason: string };

/** One row of FDA's foiclass.txt, by column name (docs/contract.md section 5). */
export function fromFoiclassRow(row: Readonly<Record<string, string>>, lookups: Lookups): ClassificationOutcome {
  const code = productCodeOf(row.PRODUCTCODE);
  if (code.value === null) return { kind: 'skip', reason: code.issue ?? 'no product code' };
  return {
    kind: 'classification',
    value: {
      productCode: code.value,
      deviceType: trimmed(row.DEVICENAME),
      deviceClass: trimmed(row.DEVICECLASS),
      regulationNumber: trimmed(row.REGULATIONNUMBER),
      medicalSpecialty: committeeName(lookups, upper(row.MEDICALSPECIALTY)),
      reviewPanel: committeeName(lookups, upper(row.REVIEW_PANEL)),
      definition: trimmed(row.DEFINITION),
      submissionType: named(SUBMISSION_TYPES, row.SUBMISSION_TYPE_ID),
      unclassifiedReason: named(UNCLASSIFIED_REASONS, row.UNCLASSIFIED_REASON),
      gmpExempt: flag(row.GMPEXEMPTFLAG),
      thirdPartyEligible: flag(row.THIRDPARTYFLAG),
      thirdPartyReviewCode: trimmed(row.REVIEWCODE),
      implant: flag(row.IMPLANT_FLAG),
      lifeSustaining: flag(row.LIFE_SUSTAIN_SUPPORT_FLAG),
      summaryMalfunctionReporting: trimmed(row.SUMMARYMALFUNCTIONREPORTING),
      physicalState: trimmed(row.PHYSICALSTATE),
      technicalMethod: trimmed(row.TECHNICALMETHOD),
      targetArea: trimmed(row.TARGETAREA),
    },
  };
}

/**
 * SUBMISSION_TYPE_ID and UNCLASSIFIED_REASON, named as FDA's openFDA field reference for device classification
 * documents them. The file also carries codes that reference leaves out (submission types 6, 7, 8; unclassified
 * reasons 9, 11): those are kept as written rather than guessed at.
 */
export const SUBMISSION_TYPES: ReadonlyMap<string, string> = new Map([
  ['1', '510(k)'],
  ['2', 'PMA'],
  ['3', 'Contact ODE'],
  ['4', '510(k) Exempt'],
]);
export const UNCLASSIFIED_REASONS: ReadonlyMap<string, string> = new Map([
  ['1', 'Pre-Amendment'],
  ['2', 'IDE'],
  ['3', 'For Export Only'],
  ['4', 'Unknown'],
  ['5', 'Guidance Under Development'],
  ['6', 'Enforcement Discretion'],
  ['7', 'Not FDA Regulated'],
]);

function named(names: ReadonlyMap<string, string>, value: string | undefined): string | null {
  const code = trimmed(value);
  return code === null ? null : (names.get(code) ?? code);
}
