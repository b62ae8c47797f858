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
