import { describe, expect, it } from 'vitest';
import { applicantKey, foldText, kNumberRange, queryWords, tokenize } from '../../src/search/tokenize.ts';

describe('tokenize', () => {
  it.each([
    ['Cardiac Pacemaker', ['cardiac', 'pacemaker']],
    ['PACEMAKER', ['pacemaker']],
    ['pAcEmAkEr', ['pacemaker']],
    ['Café Crème', ['cafe', 'creme']],
    ['CAFÉ', ['cafe']],
    ['Ångström naïve façade', ['angstrom', 'naive', 'facade']],
    ['Cafe\u0301', ['cafe']], // already decomposed: e + combining acute
    ['İstanbul', ['istanbul']],
    ['Größe', ['große']], // ß has no decomposition; it stays a letter
    ['ﬁlter', ['filter']], // compatibility ligature
    ['H₂O 10²', ['h2o', '102']], // sub- and superscript digits
    ['Ｘ－ＲＡＹ', ['x', 'ray']], // full-width forms
    ['X-Ray System', ['x', 'ray', 'system']],
    ['Catheter, Intravascular (Diagnostic)', ['catheter', 'intravascular', 'diagnostic']],
    ["Smith & Nephew's/Kit", ['smith', 'nephew', 's', 'kit']],
    ['Stent™ System®', ['stent', 'system']], // symbols split words, not glued as "tm"
    ['3M Co.', ['3m', 'co']],
    ['K123456', ['k123456']],
    ['k123456', ['k123456']],
    ['K 123456', ['k', '123456']],
    ['(K123456)', ['k123456']],
    ['K123456/K654321', ['k123456', 'k654321']],
    ['DTB', ['dtb']],
    ['  ', []],
    ['', []],
    ['---', []],
    ['a\tb\nc', ['a', 'b', 'c']],
    ['电极 导管', ['电极', '导管']],
  ])('%j → %j', (text, words) => {
    expect(tokenize(text)).toEqual(words);
  });

  it('folds the same whether a word is spelled with or without accents', () => {
    expect(foldText('Éclair')).toBe(foldText('eclair'));
    expect(tokenize('RÖNTGEN')).toEqual(tokenize('rontgen'));
  });
});

describe('queryWords', () => {
  it.each([
    ['', []],
    ['   ', []],
    ['pump', ['pump']],
    ['Pump pump PUMP', ['pump']],
    ['infusion pump, infusion', ['infusion', 'pump']],
    ['x-ray', ['x', 'ray']],
  ])('%j → %j', (query, words) => {
    expect(queryWords(query)).toEqual(words);
  });
});

describe('applicantKey', () => {
  it.each([
    ['Medtronic, Inc.', 'medtronic, inc.'],
    ['  MEDTRONIC,   INC.  ', 'medtronic, inc.'],
    ['Medtronic,\tInc.', 'medtronic, inc.'],
    ['Société Générale', 'société générale'], // accents are significant for the filter
  ])('%j → %j', (applicant, key) => {
    expect(applicantKey(applicant)).toBe(key);
  });
});

describe('kNumberRange', () => {
  it.each([
    ['k', { from: 0, to: 999_999, whole: false }],
    ['k1', { from: 100_000, to: 199_999, whole: false }],
    ['k12345', { from: 123_450, to: 123_459, whole: false }],
    ['k123456', { from: 123_456, to: 123_456, whole: true }],
    ['k000123', { from: 123, to: 123, whole: true }],
    ['k0', { from: 0, to: 99_999, whole: false }],
  ])('%j → %j', (word, range) => {
    expect(kNumberRange(word)).toEqual(range);
  });

  it.each(['k1234567', 'kit', 'k12a', '123456', 'kk1'])('%j is not a K number prefix', (word) => {
    expect(kNumberRange(word)).toBeNull();
  });
});
