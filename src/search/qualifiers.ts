/**
 * The query language's qualifiers (grammar.ts reads them), apart from the grammar so that the static page can take
 * the table itself (bundled for it by build/page/bundle.ts) without the grammar's imports.
 */

/** The qualifiers, each with the forms its value accepts (for `meta` and for error messages). */
export const QUALIFIERS = {
  applicant: 'a company name or the start of its words, legal suffixes ignored (applicant:bard), or "exact name" in quotes',
  device: 'words of the device name or their starts (device:catheter), or "a phrase" in quotes',
  code: 'a product code, three letters (code:DQY)',
  panel: 'the review advisory committee, by name or the start of it (panel:cardiovascular)',
  class: 'the device class of the product code: 1, 2, 3 (or I, II, III), U, N or F',
  decision: 'the decision code (decision:SESE) or the start of its name (decision:"substantially equivalent")',
  type: 'the submission type or the start of it: traditional, special, abbreviated, …',
  thirdparty: 'yes or no',
  expedited: 'yes or no',
  summary: 'yes (a 510(k) summary is on file) or no (a statement)',
  country: "the applicant's country, two letters (country:DE)",
  state: "the applicant's state or province code, two letters (state:MN)",
  decided: 'a decision date or range: 2024, 2024-03, 2024-03-31, 2024-01-01..2024-03-31, >=2023-06, <2020, 2019..',
  received: 'a receipt date or range, in the same forms as decided',
  reviewdays: 'days from receipt to decision: 90, >180, <=30, 90..180',
  predicate: 'a K or De Novo number the clearance names as a predicate (predicate:K123456), by an edge of any kind unless kind: narrows it',
  kind: 'the kind of edge: predicate (its own 510(k) summary says so) or named (the number appears in its documents); narrows predicate: and the predicate facet, and alone finds the clearances with such an edge',
} as const;
export type QualifierName = keyof typeof QUALIFIERS;
export const QUALIFIER_NAMES = Object.keys(QUALIFIERS) as QualifierName[];
