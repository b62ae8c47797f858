/**
 * `compute`, remembered for the first `limit` distinct strings it is asked about: for a pure function of a string
 * that is asked about the same few again and again (a log line's method and path, a client's header lines). Strings
 * past the first `limit` are computed each time, so a stream of new ones costs no memory.
 */
export function rememberFirst<T extends NonNullable<unknown> | null>(limit: number, compute: (text: string) => T): (text: string) => T {
  const kept = new Map<string, T>();
  return (text) => {
    const known = kept.get(text);
    if (known !== undefined) return known;
    const value = compute(text);
    if (kept.size < limit) kept.set(text, value);
    return value;
  };
}

/**
 * `compute`, remembered for the strings asked about most recently: between `limit` and twice `limit` of them. Two
 * generations of a Map: answers go into the young one, and when it holds `limit` it becomes the old one, the old one
 * dropped whole; an answer found in the old one moves to the young. O(1) a call with no order kept per entry, for a
 * pure function of a string asked about again while it is recent (a catalog cursor issued, then sent back).
 */
export function rememberRecent<T extends NonNullable<unknown> | null>(limit: number, compute: (text: string) => T): Remembered<T> {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`Expected \`limit\` to be an integer from 1 and up, got ${limit}`);
  let young = new Map<string, T>();
  let old = new Map<string, T>();
  const keep = (text: string, value: T) => {
    young.set(text, value);
    if (young.size >= limit) {
      old = young;
      young = new Map();
    }
  };
  const remembered = (text: string): T => {
    const known = young.get(text);
    if (known !== undefined) return known;
    const aged = old.get(text);
    const value = aged !== undefined ? aged : compute(text);
    keep(text, value);
    return value;
  };
  remembered.prime = (text: string, value: T) => {
    if (!young.has(text)) keep(text, value);
  };
  return remembered;
}

/** A remembered function, and `prime` to hand it an answer known otherwise (the value `compute` would give). */
export type Remembered<T> = ((text: string) => T) & { prime: (text: string, value: T) => void };
