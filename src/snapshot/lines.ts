import { partitionPoint } from '../utils/bisect.ts';

/**
 * A shard written one entry per line (build/write/json.ts: `[`, entries each followed by `,` but the last, `]`),
 * indexed by where each entry's JSON starts and ends, so that entries are cut out of the bytes without parsing them.
 */
export type ShardLines = { bytes: Uint8Array; starts: Uint32Array; ends: Uint32Array };

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const QUOTE = 0x22;
const COLON = 0x3a;

export function indexLines(bytes: Uint8Array, expected = 0): ShardLines {
  // Filled in place when the shard index says how many entries there are (it always does on the request path);
  // grown by doubling otherwise. Pushing onto arrays and copying them out cost more than finding the newlines.
  let starts = new Uint32Array(Math.max(expected, 16));
  let ends = new Uint32Array(starts.length);
  let n = 0;
  // Line 0 is "[", the last is "]": the entries are the lines between.
  let at = bytes.indexOf(NEWLINE) + 1;
  while (at > 0 && at < bytes.length) {
    const next = bytes.indexOf(NEWLINE, at);
    if (next < 0) break;
    if (bytes[at] !== 0x5d /* ] */) {
      if (n === starts.length) {
        const grownStarts = new Uint32Array(2 * n);
        grownStarts.set(starts);
        starts = grownStarts;
        const grownEnds = new Uint32Array(2 * n);
        grownEnds.set(ends);
        ends = grownEnds;
      }
      starts[n] = at;
      ends[n] = bytes[next - 1] === COMMA ? next - 1 : next;
      n++;
    }
    at = next + 1;
  }
  return { bytes, starts: n === starts.length ? starts : starts.slice(0, n), ends: n === ends.length ? ends : ends.slice(0, n) };
}

/**
 * The value of an entry's first member, which is its key (`{"id":"K123456",…` or `{"productCode":"ABC",…`). Keys are
 * plain ASCII without escapes, so the value runs to the next quote.
 */
export function lineKey(lines: ShardLines, i: number): string {
  const { bytes } = lines;
  let at = (lines.starts[i] as number) + 2; // past `{"`
  while (!(bytes[at] === QUOTE && bytes[at + 1] === COLON)) at++;
  at += 3; // past `":"`
  let end = at;
  while (bytes[end] !== QUOTE) end++;
  let key = '';
  for (let j = at; j < end; j++) key += String.fromCharCode(bytes[j] as number);
  return key;
}

/** The line of a sorted shard whose key is `key`, or -1. */
export function findLine(lines: ShardLines, key: string): number {
  const lo = partitionPoint(0, lines.starts.length, (i) => lineKey(lines, i) < key);
  return lo < lines.starts.length && lineKey(lines, lo) === key ? lo : -1;
}
