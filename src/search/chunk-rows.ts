import type { SearchSectionName } from '../contract/search-index.ts';
import type { Rows } from './csr.ts';
import { SectionNotLoaded } from './model.ts';

/* Small helpers of the chunked index (src/search/chunked.ts and the files it reads). */

/** A file of the chunked index that is not what its directory says, or not a bundle. */
export class ChunkFormatError extends Error {
  override name = 'ChunkFormatError';
}

/** The rows at positions `at`, in that order. */
export function pickRows(rows: Rows, at: Uint32Array): Rows {
  const offsets = new Uint32Array(at.length + 1);
  for (let i = 0; i < at.length; i++) offsets[i + 1] = offsets[i]! + rows.offsets[at[i]! + 1]! - rows.offsets[at[i]!]!;
  const values = new Uint32Array(offsets[at.length]!);
  for (let i = 0; i < at.length; i++) values.set(rows.values.subarray(rows.offsets[at[i]!]!, rows.offsets[at[i]! + 1]!), offsets[i]!);
  return { offsets, values };
}

export function concat(pieces: readonly Uint32Array[], total: number): Uint32Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint32Array(total);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A list whose length is known and whose entries are not loaded: reading one throws, so nothing reads it unawares. */
export function lengthOnly(length: number, section: SearchSectionName): string[] {
  return new Proxy([] as string[], {
    get(target, key, receiver) {
      if (key === 'length') return length;
      if (typeof key === 'string' && /^\d+$/.test(key)) throw new SectionNotLoaded(section);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}

