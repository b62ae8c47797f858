import { describe, expect, it } from 'vitest';
import { deviceIdOf, findNumbers } from '../../build/predicates/numbers.ts';
import { plainText } from '../../build/predicates/text.ts';

const ids = (text: string) => findNumbers(plainText(text)).map((h) => h.id);

// Each line is a phrase from a 510(k) summary as OCR left it, and the numbers FDA wrote.
const CASES: [string, string[]][] = [
  ['HemosIL D-Dimer K972696', ['K972696']],
  ['production procedures have been made for the Clin Chem Cal (K05 1452).', ['K051452']],
  ['510(k) Number: K 05 063 2', ['K050632']],
  ['510(k) Number (f known): K 0 63263', ['K063263']],
  ['BD ProbeTec Q* Chlamydia trachomatis Amplified DNA Assay (KO91724)and BD ProbeTec', ['K091724']],
  ['a K98307 1 predicate', ['K983071']],
  ['510k #K042138 Clever Chek TD-3213, 510k# K042795 One Touch Ultra', ['K042138', 'K042795']],
  ['Predicate: K- 983071 and k O51202', ['K983071', 'K051202']],
  ['Alere Technologies ASAfinion HbA1c, Afinion AS100 AnalyzerK151809(Predicate Device)', ['K151809']],
  ['Control-IQ technology (DEN190034)', ['DEN190034']],
  ['the BRAHMS MOSES study (DEN 150009).', ['DEN150009']],
  ['approved under PMA P010012/S004', ['P010012']],
  // Not numbers: an allergen code, a regulation, a table of figures, a word ending in "den", a seventh digit.
  ['CLA Allergen-Specific IgE Assay - Latex Allergen K82 (K030590)', ['K030590']],
  ['Regulation No.: 864.7320 Product Code: DAP', []],
  ['LDL Serum pool 2 80 154.0 4.4 2.9 6.0 3.9 2.1 1.4 7.8 5.0', []],
  ['Golden 123456 and Camden 654321', []],
  ['K1234567 is a lot number', []],
  ['<td>510k # K042138</td><td>510k # K042795 and 002134</td>', ['K042138', 'K042795']],
];

describe('findNumbers', () => {
  it.each(CASES)('%s', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });
});

describe('deviceIdOf', () => {
  it('reads a device number from a file name and refuses other names', () => {
    expect(deviceIdOf('k050278.pdf')).toBe('K050278');
    expect(deviceIdOf('DEN150058.txt')).toBe('DEN150058');
    expect(deviceIdOf('K050278.md')).toBe('K050278');
    expect(deviceIdOf('K05027.md')).toBeNull();
    expect(deviceIdOf('notes.txt')).toBeNull();
  });
});
