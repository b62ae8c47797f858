import type { ClearanceRecord } from '../contract/index.ts';
import { CSV_COLUMNS, csvCell, csvRowOf } from './csv-format.ts';

/**
 * CSV rows of the export, written straight from each record's JSON bytes (docs/search.md, "Export"): the record is
 * scanned once for where each member's value is, and values are copied as bytes. Only a string with escapes in it
 * is decoded (as JSON) and written as text; a record this scanner does not expect is parsed whole. Same output as
 * `csvCell` over the parsed record (tested).
 */

export { CSV_COLUMNS, CSV_HEAD, csvCell, csvRowOf } from './csv-format.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const KEYS = CSV_COLUMNS.map((c) => encoder.encode(c));
const SOURCE = encoder.encode('source');
const URL_COLUMN = CSV_COLUMNS.indexOf('sourceUrl');

const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;

/** A growing output buffer. */
export class ByteSink {
  bytes: Uint8Array;
  at = 0;
  constructor(size: number) {
    this.bytes = new Uint8Array(Math.max(64, size));
  }
  room(n: number): void {
    if (this.at + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(2 * this.bytes.length, this.at + n));
    grown.set(this.bytes.subarray(0, this.at));
    this.bytes = grown;
  }
  text(s: string): void {
    this.room(3 * s.length);
    this.at += encoder.encodeInto(s, this.bytes.subarray(this.at)).written;
  }
  take(): Uint8Array {
    return this.bytes.subarray(0, this.at);
  }
}

// Where each column's value is in the record being scanned: kind 0 none/null, 1 as it is (number, boolean),
// 2 a string without escapes (the bytes between its quotes), 4 the same with a comma in it (to be quoted), 3 a string
// with escapes (its bytes with the quotes).
const starts = new Int32Array(CSV_COLUMNS.length);
const ends = new Int32Array(CSV_COLUMNS.length);
const kinds = new Uint8Array(CSV_COLUMNS.length);
/** The column the member at each position matched last time: records share their members' order. */
const hints = new Int16Array(64).fill(-1);

function keyIs(json: Uint8Array, from: number, to: number, key: Uint8Array): boolean {
  if (to - from !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (json[from + i] !== key[i]) return false;
  return true;
}

function columnOf(json: Uint8Array, from: number, to: number, position: number): number {
  const hint = position < hints.length ? hints[position]! : -1;
  if (hint >= 0 && keyIs(json, from, to, KEYS[hint]!)) return hint;
  for (let c = 0; c < KEYS.length; c++) {
    if (c !== URL_COLUMN && keyIs(json, from, to, KEYS[c]!)) {
      if (position < hints.length) hints[position] = c;
      return c;
    }
  }
  return -1;
}

/**
 * Scans the members of the object starting at `json[i]` (`{`), recording the columns' values; inside `source` only
 * `sourceUrl` counts. Returns the position after the closing `}`, or -1 for anything unexpected.
 */
function scanObject(json: Uint8Array, i: number, end: number, nested: boolean): number {
  if (json[i] !== 0x7b) return -1;
  i++;
  let position = 0;
  if (json[i] === 0x7d) return i + 1;
  for (;;) {
    if (json[i] !== QUOTE) return -1;
    const ks = i + 1;
    let ke = ks;
    while (ke < end && json[ke] !== QUOTE) ke++;
    if (ke >= end || json[ke + 1] !== 0x3a) return -1;
    i = ke + 2;
    const column = nested ? (keyIs(json, ks, ke, KEYS[URL_COLUMN]!) ? URL_COLUMN : -1) : columnOf(json, ks, ke, position);
    const c = json[i];
    if (c === QUOTE) {
      const s = i + 1;
      let j = s;
      let escaped = false;
      let comma = false;
      for (let b = json[j]; j < end && b !== QUOTE; b = json[j]) {
        if (b === BACKSLASH) {
          escaped = true;
          j += 2;
        } else {
          if (b === COMMA) comma = true;
          j++;
        }
      }
      if (j >= end) return -1;
      if (column >= 0) {
        kinds[column] = escaped ? 3 : comma ? 4 : 2;
        starts[column] = escaped ? s - 1 : s;
        ends[column] = escaped ? j + 1 : j;
      }
      i = j + 1;
    } else if (c === 0x7b) {
      if (nested || !keyIs(json, ks, ke, SOURCE)) return -1;
      i = scanObject(json, i, end, true);
      if (i < 0) return -1;
    } else if (c === 0x6e) {
      if (column >= 0) kinds[column] = 0;
      i += 4;
    } else if (c === 0x5b || c === undefined) {
      return -1;
    } else {
      let j = i;
      while (j < end && json[j] !== COMMA && json[j] !== 0x7d) j++;
      if (column >= 0) {
        kinds[column] = 1;
        starts[column] = i;
        ends[column] = j;
      }
      i = j;
    }
    position++;
    if (json[i] === COMMA) i++;
    else if (json[i] === 0x7d) return i + 1;
    else return -1;
  }
}

/** Appends the CSV row of the record whose JSON is json[from..to) to `out`. */
export function writeCsvRow(json: Uint8Array, from: number, to: number, out: ByteSink): void {
  kinds.fill(0);
  if (scanObject(json, from, to, false) !== to) {
    out.text(csvRowOf(JSON.parse(decoder.decode(json.subarray(from, to))) as ClearanceRecord));
    return;
  }
  out.room(to - from + 4 * CSV_COLUMNS.length + 2);
  let bytes = out.bytes;
  let at = out.at;
  for (let c = 0; c < CSV_COLUMNS.length; c++) {
    if (c > 0) bytes[at++] = COMMA;
    const kind = kinds[c]!;
    if (kind === 0) continue;
    const s = starts[c]!;
    const e = ends[c]!;
    if (kind === 3) {
      // Escapes (quotes, line breaks, \u…): decoded, then written as text.
      out.at = at;
      out.text(csvCell(JSON.parse(decoder.decode(json.subarray(s, e))) as string));
      out.room(to - from + 4 * CSV_COLUMNS.length + 2);
      bytes = out.bytes;
      at = out.at;
      continue;
    }
    // Without escapes the string has no quote, tab or line break: only a comma needs quotes, and only = + - @ and an
    // apostrophe at the start get an apostrophe before them (csvCell's rule).
    const comma = kind === 4;
    if (comma) bytes[at++] = QUOTE;
    if (kind !== 1) {
      const first = json[s];
      if (first === 0x3d || first === 0x2b || first === 0x2d || first === 0x40 || first === 0x27) bytes[at++] = 0x27;
    }
    // Most values are a few dozen bytes: copied by hand, without a view made for each.
    if (e - s > 64) {
      bytes.set(json.subarray(s, e), at);
      at += e - s;
    } else {
      for (let k = s; k < e; k++) bytes[at++] = json[k]!;
    }
    if (comma) bytes[at++] = QUOTE;
  }
  bytes[at++] = 0x0d;
  bytes[at++] = 0x0a;
  out.at = at;
}
