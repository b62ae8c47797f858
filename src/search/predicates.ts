import { ANY_EDGE_KIND } from '../contract/search-index.ts';
import { lineageCode } from '../contract/lineage.ts';
import { partitionPoint, lowerBound } from '../utils/bisect.ts';
import { spend } from './budget.ts';
import type { Condition } from './conditions.ts';
import type { ListOrRange } from './docset.ts';
import type { SearchIndex } from './model.ts';
import { slicesOf, type Steps } from './slices.ts';

/*
 * Predicates in search (docs/search.md): `predicate:K123456` passes the clearances that name the device by an edge of
 * the query's kinds, and the `predicate` facet counts, for each device, the matches that name it. Both read the
 * predicate sections of the index (src/contract/search-index.ts), built from the same edges as the lineage files.
 */

/** The device's index in `predCodes`, or -1 when no document names it. */
export function findPredicate(index: SearchIndex, number: string): number {
  const code = lineageCode(number);
  const codes = index.predCodes;
  const i = partitionPoint(0, codes.length, (j) => codes[j]! < code);
  return codes[i] === code ? i : -1;
}

/** The documents that name the device by an edge of one of `kinds` (EDGE_KIND_BITS OR-ed), ascending. */
export function predicateDocs(index: SearchIndex, number: string, kinds: number): Uint32Array {
  const p = findPredicate(index, number);
  if (p < 0) return new Uint32Array(0);
  const from = index.predDocOffsets[p]!;
  const to = index.predDocOffsets[p + 1]!;
  if (kinds === ANY_EDGE_KIND) return index.predDocs.slice(from, to);
  const out = new Uint32Array(to - from);
  let n = 0;
  for (let i = from; i < to; i++) if ((index.predDocKinds[i]! & kinds) !== 0) out[n++] = index.predDocs[i]!;
  return out.slice(0, n);
}

/** `predicate:`: its documents are listed exactly (candidates that need no test); one is tested by a binary search. */
export function predicateCondition(index: SearchIndex, number: string, kinds: number): Condition {
  const docs = predicateDocs(index, number, kinds);
  return {
    cost: docs.length,
    exact: true,
    list: () => docs.slice(),
    points: (d) => {
      spend(1);
      const i = lowerBound(docs, d);
      return docs[i] === d ? 0 : -1;
    },
  };
}

/**
 * How many matches name each device (by an edge of one of `kinds`), indexed as `predCodes`: a match counts once
 * under each device it names. A yield point after every `sliceDocs` matches.
 */
export function* countPredicatesSteps(index: SearchIndex, docs: ListOrRange, kinds: number, sliceDocs: number): Steps<Uint32Array> {
  const counts = new Uint32Array(index.predCodes.length);
  const offsets = index.docPredOffsets;
  const preds = index.docPreds;
  const predKinds = index.docPredKinds;
  for (const slice of slicesOf(docs, sliceDocs)) {
    if (slice instanceof Uint32Array) {
      for (let i = 0; i < slice.length; i++) {
        const d = slice[i]!;
        for (let j = offsets[d]!, end = offsets[d + 1]!; j < end; j++) if ((predKinds[j]! & kinds) !== 0) counts[preds[j]!]!++;
      }
    } else {
      for (let d = slice.lo; d < slice.hi; d++) {
        for (let j = offsets[d]!, end = offsets[d + 1]!; j < end; j++) if ((predKinds[j]! & kinds) !== 0) counts[preds[j]!]!++;
      }
    }
    yield;
  }
  return counts;
}
