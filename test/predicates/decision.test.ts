import { describe, expect, it } from 'vitest';
import { decisionPredicates } from '../../build/predicates/decision.ts';

/**
 * FDA's decision summaries (passages of real ones, as OCR'd): the field "Predicate 510(k) Number(s)" in the layouts
 * FDA's template has had, and the numbers around it that are not its value (the device's own, the comparison table's).
 */
const CASES: { device: string; text: string; predicates: string[] | null }[] = [
  {
    device: 'K153137',
    text: 'J. Substantial Equivalence Information: 1. Predicate device name(s): Asserachrom HPIA Test kit from Diagnostica Stago 2. Predicate 510(k) number(s): K003767 3. Comparison with predicate: 4 Similarities Item Device Predicate Trade Names HemosIL HIT-Ab(PF4-H) HemosIL HIT-Ab(PF4-H) Controls (K153137) Asserachrom HPIA Test Kit (kit includes two control levels) (K003767)',
    predicates: ['K003767'],
  },
  {
    device: 'K210811',
    text: '# V Substantial Equivalence Information:\n\nA Predicate Device Name(s):\n\nPhilips IntelliSite Pathology Solution (PIPS) Aperio AT2 DX System\n\nB Predicate 510(k) Number(s):\n\nDEN160056   \nK190332\n\n# C Comparison with Predicate(s):\n\n<table><tr><td colspan="1" rowspan="1">Device &amp;PredicateDevice(s):</td><td colspan="1" rowspan="1">K210811</td><td colspan="1" rowspan="1">DEN160056</td><td colspan="1" rowspan="1">K190332</td></tr></table>',
    predicates: ['DEN160056', 'K190332'],
  },
  {
    device: 'K243922',
    text: '# V Substantial Equivalence Information:\n\nA Predicate Device Name(s): Revogene   \nB Predicate 510(k) Number(s): K222779\n\nC Comparison with Predicate(s):\n\n<table><tr><td colspan="1" rowspan="1">Device &amp; PredicateDevice(s):</td><td colspan="1" rowspan="1">Candidate device: K243922</td><td colspan="1" rowspan="1">Predicate: K222779</td></tr></table>',
    predicates: ['K222779'],
  },
  {
    device: 'K241234',
    text: 'A Predicate Device Name(s): Aperio GT450X; NanoZoomer S360MD Slide scanner system   \nB Predicate 510(k) Number(s): K232202; K213883   \nC Comparison with Predicate(s):   \n1. FDA Guidance “Technical Performance Assessment of Digital Pathology Whole Slide Imaging Devices". April 20, 2016.',
    predicates: ['K232202', 'K213883'],
  },
  {
    device: 'K193054',
    text: 'V. Substantial Equivalence Information:\n\nA. Predicate Device Name(s): Aperio AT2 DX System B. Predicate 510(k) Number(s): K190332 C. Comparison with Predicate(s):\n\n<table><tr><td colspan="1" rowspan="1">Device &amp; PredicateDevice(s):</td><td colspan="1" rowspan="1">K193054</td><td colspan="1" rowspan="1">K190332</td></tr></table>',
    predicates: ['K190332'],
  },
  {
    device: 'K234070',
    text: 'A Predicate Device Name(s): Dexcom G7 Continuous Glucose Monitoring (CGM) System\n\n# B Predicate 510(k) Number(s):\n\n# K231081\n\nC Comparison with Predicate(s):\n\n<table><tr><td colspan="1" rowspan="1">Device &amp; PredicateDevice(s):</td><td colspan="1" rowspan="1">K234070</td><td colspan="1" rowspan="1">K231081</td></tr></table>',
    predicates: ['K231081'],
  },
  {
    device: 'K050278',
    text: '510(k) Summary\n\nPredicate Device:\n\nHemosIL D-Dimer K972696\n\nDevice Indications for Use/Description:',
    predicates: null,
  },
];

describe('decisionPredicates: the field of FDA’s decision summary', () => {
  it.each(CASES)('$device', ({ device, text, predicates }) => {
    expect(decisionPredicates(text, device)).toEqual(predicates);
  });

});
