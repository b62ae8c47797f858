import { kept } from './kept.ts';

/**
 * Compressed rows: the lists of row r are `values[offsets[r] .. offsets[r + 1]]`. One flat typed array per relation
 * instead of an array per row keeps a million-row relation to two allocations.
 */
export type Rows = { offsets: Uint32Array; values: Uint32Array };

/** From "row → columns" to "column → rows"; rows come out ascending within each column. */
export function invertRows(rowOffsets: Uint32Array, rowValues: Uint32Array | Uint16Array, columnCount: number): Rows {
  const offsets = new Uint32Array(columnCount + 1);
  for (let i = 0; i < rowValues.length; i++) offsets[rowValues[i]! + 1]!++;
  for (let c = 0; c < columnCount; c++) offsets[c + 1]! += offsets[c]!;
  const values = new Uint32Array(rowValues.length);
  const fill = offsets.slice(0, columnCount);
  const rows = rowOffsets.length - 1;
  for (let r = 0; r < rows; r++) {
    for (let i = rowOffsets[r]!, end = rowOffsets[r + 1]!; i < end; i++) values[fill[rowValues[i]!]!++] = r;
  }
  return { offsets, values };
}

/** Rows grouped by a column's value (`none` marks rows without one); rows come out ascending within each group. */
export function groupByColumn(column: Uint32Array | Uint16Array, groupCount: number, none: number): Rows {
  const offsets = new Uint32Array(groupCount + 1);
  for (let r = 0; r < column.length; r++) {
    const g = column[r]!;
    if (g !== none) offsets[g + 1]!++;
  }
  for (let g = 0; g < groupCount; g++) offsets[g + 1]! += offsets[g]!;
  const values = new Uint32Array(offsets[groupCount]!);
  const fill = offsets.slice(0, groupCount);
  for (let r = 0; r < column.length; r++) {
    const g = column[r]!;
    if (g !== none) values[fill[g]!++] = r;
  }
  return { offsets, values };
}

const byValue = new WeakMap<Uint8Array | Uint16Array, Rows>();

/** The rows of each value of a u8 or u16 column (every value it can hold, ascending within a value), made once per column. */
export function rowsByValue(col: Uint8Array | Uint16Array): Rows {
  let rows = byValue.get(col);
  if (!rows) {
    const size = col instanceof Uint8Array ? 0x100 : 0x10000;
    const offsets = new Uint32Array(size + 1);
    for (let d = 0; d < col.length; d++) offsets[col[d]! + 1]!++;
    for (let v = 0; v < size; v++) offsets[v + 1]! += offsets[v]!;
    const values = new Uint32Array(col.length);
    const fill = offsets.slice(0, size);
    for (let d = 0; d < col.length; d++) values[fill[col[d]!]!++] = d;
    rows = { offsets, values };
    byValue.set(col, kept(col, rows, offsets.byteLength + rows.values.byteLength));
  }
  return rows;
}
