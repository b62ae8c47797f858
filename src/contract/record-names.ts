/**
 * The record names files: each K-numbered record's device name apart from its record, so that a page listing devices
 * that lie in many record shards (a lineage view: 50 devices in up to 50 shards) names them with two small reads of
 * byte ranges instead of reading every shard whole.
 *
 * - `records/names/index.bin`: for each number from K000000 up to the last record's, a u32 (little-endian): the
 *   name's length in its top 8 bits (0: no record, or a record without a name; 255: a name not in these files, which
 *   only its record gives), and where it starts in `names.bin` in the low 24.
 * - `records/names/names.bin`: the distinct names, UTF-8, each once (many devices share a name), at most 16 MiB.
 *
 * Shared by the build (build/write/record-names.ts) and the static page; this module imports nothing, so the page's
 * small rules bundle carries it.
 */
export const RECORD_NAMES = {
  index: 'records/names/index.bin',
  names: 'records/names/names.bin',
  entryBytes: 4,
  namesBytes: 1 << 24,
  notHere: 255,
} as const;

/** Where the index entry of number `n` (a K number's digits) lies in the index file. */
export const recordNameEntry = (n: number): { from: number; length: number } => ({ from: n * RECORD_NAMES.entryBytes, length: RECORD_NAMES.entryBytes });

/**
 * The name's bytes in names.bin from its index entry (the 4 bytes at `recordNameEntry(n)`): `{ from, length }`
 * (length 0: no record, or no name), or null for a name that is not in these files.
 */
export function recordNameSpan(entry: Uint8Array): { from: number; length: number } | null {
  const value = new DataView(entry.buffer, entry.byteOffset, entry.byteLength).getUint32(0, true);
  const length = value >>> 24;
  return length === RECORD_NAMES.notHere ? null : { from: value & 0xffffff, length };
}
