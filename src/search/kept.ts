/**
 * What the engine keeps beyond the request that made it, made from an array or an index (rows by value, a sort order,
 * a table of days, arrays lent from one search to the next), told to whoever counts that array's or that index's
 * memory. The chunked index bounds what it holds by bytes (chunk-cache.ts): a value kept with an array or an index it
 * hands out lives as long as they do and counts against that bound. Over a whole index no one counts: nothing is told.
 */
const counters = new WeakMap<object, (bytes: number) => void>();

/** Has the bytes kept from now on for `key` (an array, an index) told to `counter`. */
export function countKept(key: object, counter: (bytes: number) => void): void {
  counters.set(key, counter);
}

/** Tells the counter of `key`, if any, of `bytes` newly kept for it (less than 0: let go of); returns `value`. */
export function kept<T>(key: object, value: T, bytes: number): T {
  counters.get(key)?.(bytes);
  return value;
}
