import { isoOfDay } from '../contract/search-index.ts';
import { runSteps, type Steps } from './slices.ts';
import { kept } from './kept.ts';

/**
 * A day column's days (`docDecided`, `docReceived`), made once per column and shared by every surface that counts by
 * day (search's day facets, openFDA's `count=decision_date`): the distinct days in time order as the record writes them
 * (`iso`, "YYYY-MM-DD"), each document's rank among them (`docDay`), and the count of every document's day (`all`).
 * A count over a set of documents is then one pass over its members into a typed array indexed by rank: ranks ascend
 * in time, so "in time order" is "rank ascending", with no date formatting per request. A document without a date has
 * the array's largest value, at or past `iso.length`, which a count skips. Ranks take two bytes each while the days
 * are fewer than 65,535 (about 179 years of days), else four.
 */
export type DayTable = { iso: readonly string[]; docDay: Uint16Array | Uint32Array; all: Uint32Array };

const tables = new WeakMap<Uint32Array, DayTable>();

export function dayTableOf(col: Uint32Array): DayTable {
  return runSteps(dayTableSteps(col, Infinity));
}

/**
 * `dayTableOf` with a yield point every `sliceDocs` documents of each of its passes (slices.ts): made on the first
 * request that counts by day after a snapshot switch, some tens of milliseconds at a million records.
 */
export function* dayTableSteps(col: Uint32Array, sliceDocs: number): Steps<DayTable> {
  const made = tables.get(col);
  if (made) return made;
  let min = Infinity;
  let max = -Infinity;
  for (let d = 0; d < col.length; d++) {
    if (d > 0 && d % sliceDocs === 0) yield;
    const v = col[d]!;
    if (v === 0) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const span = max >= min ? max - min + 1 : 0;
  // Day numbers run over at most the years 1900..9999 (src/contract/search-index.ts): a span of a few million.
  const rank = new Int32Array(span).fill(-1);
  for (let d = 0; d < col.length; d++) {
    if (d > 0 && d % sliceDocs === 0) yield;
    if (col[d] !== 0) rank[col[d]! - min] = 0;
  }
  const iso: string[] = [];
  for (let i = 0; i < span; i++) {
    if (rank[i] === -1) continue;
    rank[i] = iso.length;
    iso.push(isoOfDay(i + min));
  }
  yield;
  const docDay = iso.length < 0xffff ? new Uint16Array(col.length) : new Uint32Array(col.length);
  const none = docDay instanceof Uint16Array ? 0xffff : 0xffffffff;
  const all = new Uint32Array(iso.length);
  for (let d = 0; d < col.length; d++) {
    if (d > 0 && d % sliceDocs === 0) yield;
    const r = col[d] === 0 ? none : rank[col[d]! - min]!;
    docDay[d] = r;
    if (r !== none) all[r]!++;
  }
  // Another request may have made it meanwhile, between two yields: the first one made is the one kept.
  const table = tables.get(col) ?? kept(col, { iso, docDay, all }, docDay.byteLength + all.byteLength + iso.length * 40);
  tables.set(col, table);
  return table;
}
