/**
 * openFDA's two-letter advisory-committee codes and their names (data/fda/lookups/advisory-committees.csv, which the
 * build reads to name them; test/openfda/record.test.ts checks that the two lists agree). Records and
 * classifications hold the names; openFDA's `advisory_committee`, `review_advisory_committee`, `medical_specialty`
 * and `review_panel` are the codes.
 */
export const COMMITTEES: ReadonlyArray<readonly [code: string, name: string]> = [
  ['AN', 'Anesthesiology'],
  ['CV', 'Cardiovascular'],
  ['CH', 'Clinical Chemistry'],
  ['DE', 'Dental'],
  ['EN', 'Ear, Nose, Throat'],
  ['GU', 'Gastroenterology, Urology'],
  ['HO', 'General Hospital'],
  ['HE', 'Hematology'],
  ['IM', 'Immunology'],
  ['MG', 'Medical Genetics'],
  ['MI', 'Microbiology'],
  ['NE', 'Neurology'],
  ['OB', 'Obstetrics/Gynecology'],
  ['OP', 'Ophthalmic'],
  ['OR', 'Orthopedic'],
  ['PA', 'Pathology'],
  ['PM', 'Physical Medicine'],
  ['RA', 'Radiology'],
  ['SU', 'General, Plastic Surgery'],
  ['TX', 'Clinical Toxicology'],
];

const CODE_OF = new Map(COMMITTEES.map(([code, name]) => [name, code]));

/**
 * The code of a committee name. The build keeps a code the table does not name as written, so a two-letter value is
 * returned as it is; any other value is a description without a code (openFDA's "Unknown" for an empty code), whose
 * code is empty.
 */
export function committeeCode(name: string | null): string | null {
  if (name === null) return null;
  return CODE_OF.get(name) ?? (/^[A-Z]{2}$/.test(name) ? name : null);
}

/** foiclass.txt's SUBMISSION_TYPE_ID, named by the build (build/normalize/classification.ts); openFDA gives the id. */
const SUBMISSION_TYPE_IDS = new Map([
  ['510(k)', '1'],
  ['PMA', '2'],
  ['Contact ODE', '3'],
  ['510(k) Exempt', '4'],
]);
const UNCLASSIFIED_REASON_IDS = new Map([
  ['Pre-Amendment', '1'],
  ['IDE', '2'],
  ['For Export Only', '3'],
  ['Unknown', '4'],
  ['Guidance Under Development', '5'],
  ['Enforcement Discretion', '6'],
  ['Not FDA Regulated', '7'],
]);

export const submissionTypeId = (name: string | null): string | null => (name === null ? null : (SUBMISSION_TYPE_IDS.get(name) ?? name));
export const unclassifiedReasonId = (name: string | null): string | null => (name === null ? null : (UNCLASSIFIED_REASON_IDS.get(name) ?? name));
