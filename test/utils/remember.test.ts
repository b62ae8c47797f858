import { describe, expect, it } from 'vitest';
import { rememberFirst, rememberRecent } from '../../src/utils/remember.ts';

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

describe('rememberRecent', () => {
  it('computes a string once while it is recent, again once two generations passed it, and takes primed answers', () => {
    const asked: string[] = [];
    const length = rememberRecent(2, (text) => {
      asked.push(text);
      return text === 'none' ? null : text.length;
    });
    expect([length('a'), length('none'), length('a'), length('none')]).toEqual([1, null, 1, null]);
    expect(asked).toEqual(['a', 'none']);
    // A full generation made 'a' and 'none' the old one: still remembered after a new string.
    length('bb');
    expect(length('a')).toBe(1);
    expect(asked).toEqual(['a', 'none', 'bb']);
    // 'none' was not asked again while two more generations filled: it is computed again.
    for (const t of ['ccc', 'd']) length(t);
    expect(length('none')).toBeNull();
    expect(asked.filter((t) => t === 'none')).toHaveLength(2);
    length.prime('primed', 42);
    expect(length('primed')).toBe(42);
    expect(asked).not.toContain('primed');
  });

  it('holds at most twice its limit', () => {
    let computed = 0;
    const id = rememberRecent(100, (text) => (computed++, text));
    for (let i = 0; i < 1000; i++) id(String(i));
    computed = 0;
    for (let i = 999; i >= 0; i--) id(String(i));
    // Only the most recent 100 to 200 were kept.
    expect(computed).toBeGreaterThanOrEqual(800);
    expect(computed).toBeLessThanOrEqual(900);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => rememberRecent(0, (t) => t)).toThrow(/limit/);
  });
});
