import { describe, expect, it } from 'vitest';
import { collapsed, flag, kNumberOf, openFdaDate, productCodeOf, usDate } from '../../build/normalize/text.ts';
import { decisionName, committeeName, type Lookups } from '../../build/normalize/lookups.ts';
import { fromOpenFdaResult } from '../../build/normalize/clearance.ts';
import { decodeJsonText, openFdaResults } from '../../build/sources/parse.ts';

describe('dates', () => {
  it.each([
    ['07/26/1976', '1976-07-26', null],
    ['2/9/2001', '2001-02-09', null],
    ['02/29/2000', '2000-02-29', null],
    ['02/29/1900', null, 'impossible date "02/29/1900"'],
    ['02/29/2023', null, 'impossible date "02/29/2023"'],
    ['13/01/1990', null, 'impossible date "13/01/1990"'],
    ['08/04/0020', null, 'date before 1900 "08/04/0020"'],
    ['1990-01-01', null, 'impossible date "1990-01-01"'],
    ['', null, null],
    ['  ', null, null],
  ])('usDate(%j) is %j', (raw, value, issue) => {
    expect(usDate(raw)).toEqual({ value, issue });
  });

  it.each([
    ['2015-10-15', '2015-10-15', null],
    ['20151015', '2015-10-15', null],
    ['2015-02-30', null, 'impossible date "2015-02-30"'],
    ['1899-12-31', null, 'date before 1900 "1899-12-31"'],
    ['10/15/2015', null, 'impossible date "10/15/2015"'],
    [undefined, null, null],
  ])('openFdaDate(%j) is %j', (raw, value, issue) => {
    expect(openFdaDate(raw)).toEqual({ value, issue });
  });
});

describe('K numbers', () => {
  it.each([
    ['K760001', { kNumber: 'K760001' }],
    [' k123456 ', { kNumber: 'K123456' }],
    ['DEN250034', { skip: 'not a 510(k): De Novo number' }],
    ['P123456', { skip: 'not a 510(k): PMA number' }],
    ['K12345', { skip: 'malformed K number' }],
    ['', { skip: 'no K number' }],
  ])('%j', (raw, expected) => {
    expect(kNumberOf(raw)).toEqual(expected);
  });
});

describe('text and flags', () => {
  it.each([
    ['  Asawari  Hare ', 'Asawari Hare'],
    ['a\t\tb', 'a b'],
    ['   ', null],
    [undefined, null],
  ])('collapsed(%j) is %j', (raw, expected) => expect(collapsed(raw)).toBe(expected));

  it.each([
    ['Y', true],
    ['n', false],
    ['', null],
    ['X', null],
  ])('flag(%j) is %j', (raw, expected) => expect(flag(raw)).toBe(expected));

  it.each([
    ['dtb', { value: 'DTB', issue: null }],
    ['', { value: null, issue: null }],
    ['AB1', { value: null, issue: 'malformed product code "AB1"' }],
  ])('productCodeOf(%j)', (raw, expected) => expect(productCodeOf(raw)).toEqual(expected));
});

describe('openFDA text', () => {
  it('reads C1 controls, raw or escaped, as the Windows-1252 characters they stand for', () => {
    const json = Buffer.from('{"results":[{"k_number":"K150001","device_name":"GI Genius\\u0099 \u0099 \u0093Q\u0094 ®"}]}', 'utf8');
    const [result] = openFdaResults(decodeJsonText(json)) as Record<string, unknown>[];
    const outcome = fromOpenFdaResult(result as Record<string, unknown>, { decisions: new Map(), committees: new Map() });
    expect(outcome.kind === 'record' && outcome.fields.deviceName).toBe('GI Genius™ ™ “Q” ®');
  });
});

describe('lookups', () => {
  const lookups: Lookups = {
    decisions: new Map([
      ['SESE', 'Substantially Equivalent'],
      ['SE', 'Substantially Equivalent'],
      ['SP', 'Substantially Equivalent - PostMarket Surveillance Required'],
    ]),
    committees: new Map([['CV', 'Cardiovascular']]),
  };
  it.each([
    ['SESE', 'Substantially Equivalent'],
    ['SE', 'Substantially Equivalent'],
    ['SESP', 'Substantially Equivalent - PostMarket Surveillance Required'],
    ['ZZZZ', 'ZZZZ'],
    [null, null],
  ])('decision %j is %j', (code, name) => expect(decisionName(lookups, code)).toBe(name));
  it.each([
    ['CV', 'Cardiovascular'],
    ['QQ', 'QQ'],
    [null, null],
  ])('committee %j is %j', (code, name) => expect(committeeName(lookups, code)).toBe(name));
});
