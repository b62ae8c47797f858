import { describe, expect, it } from 'vitest';
import { rememberFirst } from '../../src/utils/remember.ts';

describe('rememberFirst', () => {
  it('computes a string once while it is among the first kept, and each time past them, null answers included', () => {
    const asked: string[] = [];
    const length = rememberFirst(2, (text) => {
      asked.push(text);
      return text === 'none' ? null : text.length;
    });
    expect([length('none'), length('abc'), length('none'), length('abc'), length('later'), length('later')]).toEqual([null, 3, null, 3, 5, 5]);
    expect(asked).toEqual(['none', 'abc', 'later', 'later']);
  });
});
