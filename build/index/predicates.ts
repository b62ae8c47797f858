import { EDGE_KIND_BITS } from '../../src/contract/search-index.ts';
import { lineageCode, type LineageOrigin } from '../../src/contract/lineage.ts';
import type { SearchIndexData } from '../../src/search/codec.ts';
import { keyFrom, keyOrigin, keyTo, type EdgeKeys } from '../lineage/merge.ts';

/** The merged edges the lineage files are written from (build/lineage/merge.ts): forward keys and their origins. */
export type SearchEdges = { forward: EdgeKeys; origins: readonly LineageOrigin[] };

/** The index's predicate sections, as its stored arrays name them. */
export type PredicateSections = Pick<SearchIndexData, PredicateSectionName>;
type PredicateSectionName = 'predCodes' | 'predDocOffsets' | 'predDocs' | 'predDocKinds' | 'docPredOffsets' | 'docPreds' | 'docPredKinds' | 'docEdgeKinds';

/**
 * The search index's predicate sections (src/contract/search-index.ts) from the merged edges: only edges whose
 * device is a document count (a device the snapshot has no record of is in no search's answer). `docKNumber` holds
 * each document's six K number digits. Pure and deterministic.
 */
export function predicateSections(docKNumber: Uint32Array, edges: SearchEdges | null): PredicateSections {
  const n = docKNumber.length;
  const docOf = new Map<number, number>();
  for (let d = 0; d < n; d++) docOf.set(lineageCode(`K${String(docKNumber[d]).padStart(6, '0')}`), d);
  const kindBit = (edges?.origins ?? []).map((o) => EDGE_KIND_BITS[o.kind]);

  // Keys run by device, then predicate, then origin: one (document, predicate) pair per run, its origins' kinds OR-ed.
  const pairDoc: number[] = [];
  const pairCode: number[] = [];
  const pairKinds: number[] = [];
  const keys = edges?.forward ?? new Float64Array(0);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const doc = docOf.get(keyFrom(key));
    if (doc === undefined) continue;
    const to = keyTo(key);
    const last = pairDoc.length - 1;
    if (last >= 0 && pairDoc[last] === doc && pairCode[last] === to) pairKinds[last]! |= kindBit[keyOrigin(key)]!;
    else {
      pairDoc.push(doc);
      pairCode.push(to);
      pairKinds.push(kindBit[keyOrigin(key)]!);
    }
  }
  const predCodes = Uint32Array.from(new Set(pairCode)).sort();
  const predId = new Map<number, number>();
  for (const [i, c] of predCodes.entries()) predId.set(c, i);

  const m = pairDoc.length;
  const docPredOffsets = new Uint32Array(n + 1);
  const predDocOffsets = new Uint32Array(predCodes.length + 1);
  const docEdgeKinds = new Uint8Array(n);
  for (let j = 0; j < m; j++) {
    docPredOffsets[pairDoc[j]! + 1]!++;
    predDocOffsets[predId.get(pairCode[j]!)! + 1]!++;
    docEdgeKinds[pairDoc[j]!]! |= pairKinds[j]!;
  }
  for (let d = 0; d < n; d++) docPredOffsets[d + 1]! += docPredOffsets[d]!;
  for (let p = 0; p < predCodes.length; p++) predDocOffsets[p + 1]! += predDocOffsets[p]!;

  // Pairs come by device code, each device's predicates ascending: each document's row fills in ascending order.
  const docPreds = new Uint32Array(m);
  const docPredKinds = new Uint8Array(m);
  const fill = docPredOffsets.slice(0, n);
  for (let j = 0; j < m; j++) {
    const at = fill[pairDoc[j]!]!++;
    docPreds[at] = predId.get(pairCode[j]!)!;
    docPredKinds[at] = pairKinds[j]!;
  }
  // The other way round, by document id, so that each predicate's documents ascend.
  const predDocs = new Uint32Array(m);
  const predDocKinds = new Uint8Array(m);
  const next = predDocOffsets.slice(0, predCodes.length);
  for (let d = 0; d < n; d++) {
    for (let i = docPredOffsets[d]!; i < docPredOffsets[d + 1]!; i++) {
      const at = next[docPreds[i]!]!++;
      predDocs[at] = d;
      predDocKinds[at] = docPredKinds[i]!;
    }
  }
  return { predCodes, predDocOffsets, predDocs, predDocKinds, docPredOffsets, docPreds, docPredKinds, docEdgeKinds };
}
