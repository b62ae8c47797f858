/**
 * The ids lo..hi-1 in order, empty when hi <= lo. A plain loop: Uint32Array.from with a mapping function is many times
 * slower.
 */
export function idRange(lo: number, hi: number): Uint32Array {
  const out = new Uint32Array(Math.max(0, hi - lo));
  for (let i = 0; i < out.length; i++) out[i] = lo + i;
  return out;
}
