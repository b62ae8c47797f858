import type { SearchIndex } from './model.ts';
import { pageOf } from './rank.ts';

import type { SORTS } from '../contract/operations.ts';
import { partitionPoint } from '../utils/bisect.ts';

/** The orders a search can ask for (docs/search.md, "Sorts"). `relevance` is the default and today's order. */
export type Sort = (typeof SORTS)[number];

/**
 * Positions [offset, offset + limit) of the matches in the sort's order. `docs` ascend by id, which is the tie order
 * of every sort but kNumber:asc (decision date descending, null last, then K number descending); `scores` are the
 * relevance points, null without query words. Small integer keys go through `pageOf`'s buckets, so no sort of every
 * match happens for a page.
 */
export function orderPage(index: SearchIndex, docs: Uint32Array, scores: Uint32Array | null, sort: Sort, offset: number, limit: number): Uint32Array {
  if (offset >= docs.length || limit <= 0) return new Uint32Array(0);
  switch (sort) {
    case 'relevance':
      return pageOf(docs, scores, offset, limit);
    case 'decisionDate:desc':
      return pageOf(docs, null, offset, limit);
    case 'decisionDate:asc': {
      // Dated documents reversed, then the undated ones reversed (K number ascending among them).
      const decided = index.docDecided;
      const z = partitionPoint(0, docs.length, (i) => decided[docs[i]!]! !== 0);
      const size = Math.min(limit, docs.length - offset);
      const out = new Uint32Array(size);
      for (let i = 0; i < size; i++) {
        const p = offset + i;
        out[i] = p < z ? docs[z - 1 - p]! : docs[docs.length - 1 - (p - z)]!;
      }
      return out;
    }
    case 'receivedDate:desc':
      return pageOf(docs, keyColumn(docs, (d) => index.docReceived[d]!), offset, limit);
    case 'reviewDays:desc': {
      const { docDecided, docReceived } = index;
      let least = Infinity;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (docDecided[d] !== 0 && docReceived[d] !== 0) least = Math.min(least, docDecided[d]! - docReceived[d]!);
      }
      // Keys from 1 up, 0 for no review time (last).
      return pageOf(docs, keyColumn(docs, (d) => (docDecided[d] !== 0 && docReceived[d] !== 0 ? docDecided[d]! - docReceived[d]! - least + 1 : 0)), offset, limit);
    }
    case 'kNumber:asc':
      return byKNumber(index, docs, offset, limit);
  }
}

function keyColumn(docs: Uint32Array, key: (d: number) => number): Uint32Array {
  const out = new Uint32Array(docs.length);
  for (let i = 0; i < docs.length; i++) out[i] = key(docs[i]!);
  return out;
}

function byKNumber(index: SearchIndex, docs: Uint32Array, offset: number, limit: number): Uint32Array {
  const size = Math.min(limit, docs.length - offset);
  const out = new Uint32Array(size);
  if (docs.length * 16 < index.docCount) {
    const k = index.docKNumber;
    const sorted = Array.from(docs).sort((a, b) => k[a]! - k[b]!);
    for (let i = 0; i < size; i++) out[i] = sorted[offset + i]!;
    return out;
  }
  const member = new Uint8Array(index.docCount);
  for (let i = 0; i < docs.length; i++) member[docs[i]!] = 1;
  let seen = 0;
  let at = 0;
  for (let i = 0; i < index.byKNumber.length && at < size; i++) {
    const d = index.byKNumber[i]!;
    if (!member[d]) continue;
    if (seen++ >= offset) out[at++] = d;
  }
  return out;
}

/**
 * A document's place in a sort as a tuple of numbers, compared element by element: ascending tuples are the answer
 * order. It holds only what the record itself says (and its relevance points, which depend only on the record and
 * the query), so an export cursor made of it keeps its meaning on a rebuilt snapshot.
 */
export function sortKey(index: SearchIndex, d: number, sort: Sort, score: number): number[] {
  const NULL_LAST = 1e9;
  const decided = index.docDecided[d]!;
  const k = index.docKNumber[d]!;
  const base = [decided === 0 ? NULL_LAST : -decided, -k];
  switch (sort) {
    case 'relevance':
      return [-score, ...base];
    case 'decisionDate:desc':
      return base;
    case 'decisionDate:asc':
      return [decided === 0 ? NULL_LAST : decided, k];
    case 'receivedDate:desc': {
      const r = index.docReceived[d]!;
      return [r === 0 ? NULL_LAST : -r, ...base];
    }
    case 'reviewDays:desc': {
      const r = index.docReceived[d]!;
      return [r === 0 || decided === 0 ? NULL_LAST : -(decided - r), ...base];
    }
    case 'kNumber:asc':
      return [k];
  }
}

export function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length;
}
