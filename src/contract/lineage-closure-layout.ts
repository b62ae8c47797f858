/**
 * Where a device's entry lies in a lineage closure file, from the file's first bytes alone: a u32 count of devices,
 * their numbers' last three digits as sorted u16s (padded to 4 bytes), then each entry's end as a u32 past `base`.
 * Shared by the decoder (src/contract/lineage.ts) and the static page, which reads the tables first and then only
 * the start's entry; this module imports nothing, so the page's small rules bundle carries it.
 */

/** The device count and where the entries begin; `bytes` must hold at least the count's 4 bytes. */
export function closureLayout(bytes: Uint8Array): { count: number; base: number } {
  const count = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  return { count, base: 4 + 2 * count + (count % 2) * 2 + 4 * count };
}

/**
 * The entry of the device whose number ends `low`, as offsets past `base`, or null when the file has none; `bytes`
 * must hold the tables (`closureLayout(bytes).base` bytes).
 */
export function closureEntrySpan(bytes: Uint8Array, count: number, low: number): { from: number; to: number } | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const endsAt = 4 + 2 * count + (count % 2) * 2;
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (view.getUint16(4 + 2 * mid, true) < low) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= count || view.getUint16(4 + 2 * lo, true) !== low) return null;
  return { from: lo === 0 ? 0 : view.getUint32(endsAt + 4 * (lo - 1), true), to: view.getUint32(endsAt + 4 * lo, true) };
}
