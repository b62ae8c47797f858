import { describe, expect, it } from 'vitest';
import { extractPredicates } from '../../build/predicates/extract.ts';
import { findNumbers } from '../../build/predicates/numbers.ts';
import { plainText } from '../../build/predicates/text.ts';

/**
 * Passages of real 510(k) summaries (OCR errors kept, names of the devices they are from), the predicates FDA's
 * decision summary states for them, and the rule each holds. A passage may stand for its whole summary only where the
 * rule needs no more of it.
 */
type Case = { rule: string; device: string; text: string; predicates: string[] };

const FILLER =
  'The device is an in vitro diagnostic test. It is intended for use by trained laboratory staff. Results are read after ten minutes. '.repeat(4);

const CASES: Case[] = [
  {
    rule: 'a heading names the predicate and the number stands on the next line',
    device: 'K050278',
    text: '# Regulatory Information:\n\nRegulation No.: 864.7320\nProduct Code: DAP\n\n# Predicate Device:\n\nHemosIL D-Dimer K972696\n\n# Device Indications for Use/Description:\n\nHemosIL D-Dimer is an automated latex enhanced immunoassay.',
    predicates: ['K972696'],
  },
  {
    rule: 'a sentence "is equivalent to" for each part of a kit: every part has its predicate',
    device: 'K060585',
    text: 'Elecsys ACTH Immunoassay, Elecsys ACTH CalSet, Elecsys ACTH CalCheck, Elecsys PreciControl ACTH\n\n(1) Elecsys ACTH Immunoassay is equivalent to the Immulite ACTH assay (K960066). Both products are intended for use in the quantitative determination of ACTH.\n\n(3) Elecsys ACTH CalCheck is equivalent to the Elecsys Prolactin II CalCheck (K053059).\n\n(4) Elecsys PreciControl ACTH is equivalent to the Elecsys PreciControl Troponin T (K031990).',
    predicates: ['K960066', 'K053059', 'K031990'],
  },
  {
    rule: 'several predicates in one list after "claimed against", with OCR spacing',
    device: 'K052108',
    text: 'Substantial Equivalency is claimed against the following device: Blood Pressure Monitor, Model SE-311, manufactured by Sein Electronics Co., Ltd. 510k #K042138 Clever Chek TD-3213, 510k# K042795 One Touch Ultra Blood Glucose monitoring system, 510k #K002134',
    predicates: ['K042138', 'K042795', 'K002134'],
  },
  {
    rule: 'the device’s own number on FDA’s letter and form is never its predicate, even OCR-damaged',
    device: 'K063623',
    text: 'Predicate Device: VITEK 2 Gram Positive Susceptibility Card (K050116).\n\nRe: k063623 Trade/Device Name: VITEK 2 Gram Positive Oxacillin\n\n# Indications for Use\n\n510(k) Number (f known): K 0 63263\n\nDevice Name: ViTEK® 2 Gram Positive',
    predicates: ['K050116'],
  },
  {
    rule: 'parts cleared for use with other assays are no predicates ("for use with", "(Ref: …)")',
    device: 'K162673',
    text: 'The Aptima HSV 1 & 2 assay is substantially equivalent to the ELVIS HSV ID and D3 Typing Test System (K032218).\n\n' + FILLER + '\n\nThe Panther system was previously FDA cleared for use with other Class II Aptima Assays (Ref: K122062 and K111409).\n\n• Aptima Multitest Swab Specimen Collection Kit (Ref: K032554)',
    predicates: ['K032218'],
  },
  {
    rule: 'a number a later passage calls a predicate is the predicate’s history, not another predicate',
    device: 'K182552',
    text: 'Predicate Device: StatStrip Glucose Hospital Meter System (K181043).\n\n' + FILLER + '\n\nThe StatStrip Xpress Glucose Hospital Meter System was recently cleared under K150461 by demonstrating substantial equivalence to the predicate StatStrip Glucose Hospital Meter System (K070960, K152461).',
    predicates: ['K181043'],
  },
  {
    rule: 'a run of a device’s clearances names the predicate by its first number',
    device: 'K093758',
    text: 'Predicate Device\n\nBiosite, Inc. Triage® B-Type Natriuretic Peptide (BNP) Test (K080269, K052789, K051787, K033383, K032235, K030286, K021317, K010266, and K003475).\n\nDevice Description',
    predicates: ['K080269'],
  },
  {
    rule: 'ancillary collection kits listed under a predicate heading are accessories',
    device: 'K121710',
    text: 'Predicate Devices - Assay:\n\nGEN-PROBE® APTIMA® Combo 2 Assay [510(k) #K043224]\n\n' + FILLER + '\n\nPredicate Devices - Ancillary Specimen Collection Kits:\n\nGEN-PROBE® APTIMA® Unisex Swab Specimen Collection Kit [510(k) #K043244]',
    predicates: ['K043224'],
  },
  {
    rule: 'a predicate named after its number in a comparison table, glued by OCR',
    device: 'K192987',
    text: 'Device Subject Device  Alere Technologies ASAfinion HbA1c, Afinion AS100 AnalyzerK151809(Predicate Device)',
    predicates: ['K151809'],
  },
  {
    rule: 'a comparison table’s header names the predicate columns (no markup, as in a PDF)',
    device: 'K103209',
    text: 'Feature Verigene RV+Subject Device Verigene RVNAT SPPredicate 1 Prodesse ProFAST+Predicate 2\n510(k)# K103209 K092566 K101855\nRegulation 866.3980 866.3980 866.3332',
    predicates: ['K092566', 'K101855'],
  },
  {
    rule: 'a De Novo predicate under its heading; a later mention of the same number adds nothing',
    device: 'K200467',
    text: 'Interoperable automated glycemic controller per 21 CFR 862.1356\n\n# Product Codes\n\n# Predicate Device\n\nControl-IQ technology (DEN190034)\n\n' + FILLER + '\n\nEvaluation of the Special Controls for this device (DEN190034) show continued assurance of the safety and effectiveness of the device.',
    predicates: ['DEN190034'],
  },
  {
    rule: 'the earlier clearance of a part ("were cleared under") is no predicate; the stated one is',
    device: 'K140373',
    text: 'The ABL90 FLEX PLUS is substantially equivalent to the ABL90 FLEX (K121000).\n\n' + FILLER + '\n\nAqueous ISE standards Low and High were cleared under K053165. The LHH calibration scheme was cleared with the analyzer.',
    predicates: ['K121000'],
  },
  {
    rule: 'a reference device is no predicate',
    device: 'K091234',
    text: 'The method comparison study was performed against the reference device Sysmex CA-1500 (K011234) on citrated plasma.\n\nThe device is substantially equivalent to the predicate device Roche CoaguChek XS System (K052768).',
    predicates: ['K052768'],
  },
  {
    rule: 'a modified device’s predicate is its own previous version, named in the predicate section',
    device: 'K093460',
    text: 'Predicate device\n\nThe CoaguChek XS Pro System is substantially equivalent to other products in commercial distribution intended for similar use. Most notably, the CoaguChek XS Pro System is a modification of the previously cleared CoaguChek XS Plus System (K071041).\n\nDevice Description',
    predicates: ['K071041'],
  },
  {
    rule: 'one predicate device named, two devices listed: the first is the predicate',
    device: 'K091168',
    text: '3. Predicate Device:\n\nGlucoPackTM Blood Glucose Monitoring System(HealthPia America Corp.)\nK052469\nGlucoLabTM Blood Glucose Monitoring System(Infopia co., Ltd.)\nK051285\n\n4. Description:\n\nThe GlucophoneTM Meter device combined with Cell Phone',
    predicates: ['K052469'],
  },
  {
    rule: 'a statement that speaks of several predicate devices keeps them all',
    device: 'K062285',
    text: 'The assay is substantially equivalent to the Dade Behring Syva EMIT II Plus Benzodiazepine Assay (K993985) and BIO-RAD Liquichek Urine Toxicology Controls (K022707) (predicate devices) which were cleared by the FDA for in vitro diagnostic use.',
    predicates: ['K993985', 'K022707'],
  },
  {
    rule: 'two bare numbers after "Predicate Device:" are both predicates',
    device: 'K173212',
    text: 'Classification: Class II\nProduct Code: KHE\n\nPredicate Device: K070660 and K021423\n\nDevice Description: This device is a Driven Flow chromatographic immunoassay',
    predicates: ['K070660', 'K021423'],
  },
  {
    rule: '"the predicate device … is X for use on Y (K…)": a part named after the verb belongs to the predicate’s name',
    device: 'K132638',
    text:
      '5.6 Predicate Device\n\nThe predicate device used to demonstrate substantial equivalence to the Dimension@ Creatinine (CRE2) Flex $\\textcircled{8}$ reagent cartridge is the Creatinine Method for Use on the Dimension® Clinical Chemistry System (CREA) previously cleared under k925668.\n\n5.7 Device Description / Test Principle\n\nThe CRE2 method uses a modified kinetic Jaffe technique.\n\n' +
      FILLER +
      '\n\nCalibration Chem 1 Calibrator (K860021) 3 levels (n=3) Same (K860021)',
    predicates: ['K925668'],
  },
  {
    rule: 'a predicate section laid out as fields: field lines that look like headings do not end it',
    device: 'K241037',
    text: '510(k) Summary – K240137\n\nThe information provided in this 510(k) summary are in accordance with 21 CFR 807.92\n\nProduct Codes: Device Class: Classification Panel:\n\nPredicate Device\n\nDevice Trade Name:\nCommon Name:\n510(k)\nRegulations: ABL90 FLEX\nBlood Gas Analyzer\nK092686\n\nDevice Description',
    predicates: ['K092686'],
  },
  {
    rule: 'a "510(k) number" field in a predicate section is the predicate’s number, not the device’s own',
    device: 'K173505',
    text: 'Regulation Number 21 CFR §862.1345\n\nDevice Class 2\n\n3. Predicate Device Information\n\nProprietary Name FORA GD43 Blood Glucose Monitoring System\n\nRegulation Description Glucose test system\n\nManufacturer TaiDoc Technology Corporation\n\n510(k) number K143467\n\n4. Intended Use:\n\nThe FORA GTel Blood Glucose Monitoring System consists of the FORA GTel Blood Glucose Test Strip.\n\n510(k) Number (if known) K173505',
    predicates: ['K143467'],
  },
  {
    rule: 'in a comparison of both devices, the candidate’s column holds its own earlier number: only the predicate’s counts',
    device: 'K201217',
    text: '2. Device information\n\nProprietary name: HemoCue® Hb 301 System\nCommon name: Hemoglobin analyzing system\n510(k) number: K061047\nProduct code: GKR\n\n5. Substantial Equivalence\n\nCandidate device Predicate device\n\nProprietary name: HemoCue® Hb 301 System HemoCue® Hb 801 System\n\nCommon name: Hemoglobin analyzing system Hemoglobin analyzing system\n\n510(k) number K061047 K181751\n\nProduct code GKR GKR',
    predicates: ['K181751'],
  },
  {
    rule: 'with no statement at all, the one number a summary names besides its own',
    device: 'K050283',
    text: '510(k) Summary\n\nThe new reagent is identical in formulation to the currently marketed reagent, K941837, except for the packaging.',
    predicates: ['K941837'],
  },
  {
    rule: 'no predicate when the only numbers are the device’s own and a PMA in a table of figures',
    device: 'K161691',
    text: 'Re: K161691 Trade/Device Name: LDL Cholesterol\n\nLDL Serum pool 2 80 154.0 4.4 2.9 6.0 3.9\n\nControls by Bio-Rad P001380 were used.',
    predicates: [],
  },
];

describe('extractPredicates: the rules, case by case', () => {
  it.each(CASES)('$rule ($device)', ({ device, text, predicates }) => {
    const got = extractPredicates(text, device);
    expect(got.predicates.map((p) => p.id).sort()).toEqual([...predicates].sort());
    for (const p of got.predicates) expect(p.reason).not.toBe('');
    if (predicates.length === 0) expect(got.none).toMatch(/\S/);
  });

  it('the cases tell the rules from taking every number: that baseline fails most of them', () => {
    const everyNumber = (c: Case) => [...new Set(findNumbers(plainText(c.text)).map((h) => h.id))].filter((id) => id !== c.device).sort();
    const failing = CASES.filter((c) => JSON.stringify(everyNumber(c)) !== JSON.stringify([...c.predicates].sort()));
    expect(failing.length).toBeGreaterThanOrEqual(8);
  });

  it('reads the same with and without table markup', () => {
    const html =
      '<table><tr><td>Predicate Device</td><td>Subject (modified) Device</td></tr><tr><td>Triage TOX Drug Screen Controls (K050037)</td><td>Triage TOX Drug Screen Controls (proposed)</td></tr></table>';
    const bare = 'Predicate Device Subject (modified) Device\nTriage TOX Drug Screen Controls (K050037) Triage TOX Drug Screen Controls (proposed)';
    expect(extractPredicates(html, 'K060788').predicates.map((p) => p.id)).toEqual(['K050037']);
    expect(extractPredicates(bare, 'K060788').predicates.map((p) => p.id)).toEqual(['K050037']);
  });

  it('says why nothing was found', () => {
    expect(extractPredicates('No numbers here at all.', 'K000001').none).toMatch(/names no K, DEN or P number/);
    expect(extractPredicates('Re: K000001\nThe analyzer (K111111) and its calibrator (K222222) were used with it.', 'K000001').none).toMatch(/2 numbers/);
  });
});
