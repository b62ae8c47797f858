import { describe, expect, it } from 'vitest';
import type { ClearanceFields } from '../../src/contract/index.ts';
import { ClearanceMerger, mergeFields } from '../../build/merge/merge.ts';
import { fieldsOf } from '../helpers/records.ts';

const empty: ClearanceFields = fieldsOf();

describe('mergeFields', () => {
  it('a later value overrides, an empty one never does', () => {
    const a = { ...empty, deviceName: 'OLD NAME', applicant: 'Acme', productCode: 'DTB', thirdParty: true };
    const b = { ...empty, deviceName: '', applicant: 'Acme Inc.', decisionDate: '1990-01-02', thirdParty: false };
    expect(mergeFields(a, b)).toEqual({
      ...empty,
      deviceName: 'OLD NAME',
      applicant: 'Acme Inc.',
      productCode: 'DTB',
      decisionDate: '1990-01-02',
      thirdParty: false,
    });
  });
  it('false is a value, not an empty one', () => {
    expect(mergeFields({ ...empty, expeditedReview: true }, { ...empty, expeditedReview: false }).expeditedReview).toBe(false);
  });
});

describe('ClearanceMerger', () => {
  it('starts a record at the first row, merges later rows and sorts by K number', () => {
    const m = new ClearanceMerger();
    const at = (line: number) => ({ file: 'f', line, entry: null });
    expect(m.add('K900002', { ...empty, deviceName: 'B' }, at(2))).toBeNull();
    expect(m.add('K100001', { ...empty, deviceName: 'A' }, at(3))).toBeNull();
    expect(m.add('K900002', { ...empty, applicant: 'X' }, at(4))).toEqual(at(2));
    expect(m.sorted()).toEqual([
      ['K100001', { ...empty, deviceName: 'A' }],
      ['K900002', { ...empty, deviceName: 'B', applicant: 'X' }],
    ]);
  });
});
