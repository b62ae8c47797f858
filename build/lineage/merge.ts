import { CODE_BITS, MAX_ORIGINS, lineageCode, type LineageOrigin } from '../../src/contract/index.ts';
import type { EdgeInput } from './read.ts';

/** Edges as one sorted list of keys: `(from * 2^21 + to) * 2^11 + origin`, below 2^53, so a Float64Array sorts them. */
export type EdgeKeys = Float64Array;

export type MergedEdges = {
  origins: LineageOrigin[];
  /** By device, then predicate, then origin; each triple once. */
  forward: EdgeKeys;
  /** The same edges by predicate, then device, then origin. */
  reverse: EdgeKeys;
  /** Every device with an edge either way, ascending by code. */
  devices: Uint32Array;
  /** Per input, in the order given: edges kept, named edges superseded, rows given twice. */
  perInput: { edges: number; superseded: number; repeated: number }[];
};

const TO = 2 ** CODE_BITS;
const ORIGIN = 2 ** (32 - CODE_BITS);
export const keyOf = (from: number, to: number, origin: number): number => (from * TO + to) * ORIGIN + origin;
export const keyFrom = (key: number): number => Math.floor(key / (TO * ORIGIN));
export const keyTo = (key: number): number => Math.floor(key / ORIGIN) % TO;
export const keyOrigin = (key: number): number => key % ORIGIN;

/**
 * The edges of every input, one list. The rule between sources: for a device whose text a `predicate` source's report
 * marks `read`, that text is the authority, so the `named` edges other sources give for it are left out (and counted);
 * for any other device every source's edges are kept. Origins are ordered predicate sources first, then by source id,
 * so that where two sources give the same edge, the walk names the stronger one.
 */
export function mergeEdges(inputs: readonly EdgeInput[]): MergedEdges {
  const seen = new Set<string>();
  for (const input of inputs) {
    if (seen.has(input.source)) throw new Error(`${input.folder}: source "${input.source}" is given by two edge folders`);
    seen.add(input.source);
  }
  if (inputs.length > MAX_ORIGINS) throw new Error(`at most ${MAX_ORIGINS} edge sources, got ${inputs.length}`);
  const order = [...inputs].sort((a, b) => (a.kind === b.kind ? (a.source < b.source ? -1 : 1) : a.kind === 'predicate' ? -1 : 1));
  const origins = order.map((i) => ({ source: i.source, kind: i.kind }));
  const read = new Set<string>();
  for (const input of inputs) if (input.kind === 'predicate' && input.read) for (const d of input.read) read.add(d);

  const total = inputs.reduce((s, i) => s + i.edges.length, 0);
  const forward = new Float64Array(total);
  const perInput = inputs.map(() => ({ edges: 0, superseded: 0, repeated: 0 }));
  let n = 0;
  inputs.forEach((input, i) => {
    const origin = order.indexOf(input);
    const stats = perInput[i] as (typeof perInput)[number];
    const start = n;
    for (const edge of input.edges) {
      if (input.kind === 'named' && read.has(edge.device)) stats.superseded++;
      else forward[n++] = keyOf(lineageCode(edge.device), lineageCode(edge.predicate), origin);
    }
    // Repeats within one input are counted against it; the same edge from two inputs is two origins, both kept.
    const mine = forward.subarray(start, n).sort();
    let kept = mine.length > 0 ? 1 : 0;
    for (let j = 1; j < mine.length; j++) if (mine[j] !== mine[j - 1]) mine[kept++] = mine[j] as number;
    stats.repeated = mine.length - kept;
    stats.edges = kept;
    n = start + kept;
  });
  const keys = forward.subarray(0, n).sort();
  const reverse = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const k = keys[j] as number;
    reverse[j] = keyOf(keyTo(k), keyFrom(k), keyOrigin(k));
  }
  reverse.sort();
  const all = new Uint32Array(2 * n);
  for (let j = 0; j < n; j++) {
    all[2 * j] = keyFrom(keys[j] as number);
    all[2 * j + 1] = keyTo(keys[j] as number);
  }
  all.sort();
  let d = 0;
  for (let j = 0; j < all.length; j++) if (j === 0 || all[j] !== all[j - 1]) all[d++] = all[j] as number;
  return { origins, forward: keys, reverse, devices: all.slice(0, d), perInput };
}

/** Distinct device → device pairs (edges differing only in origin count once). */
export function distinctPairs(keys: EdgeKeys): number {
  let pairs = 0;
  for (let j = 0; j < keys.length; j++) if (j === 0 || Math.floor((keys[j] as number) / ORIGIN) !== Math.floor((keys[j - 1] as number) / ORIGIN)) pairs++;
  return pairs;
}
