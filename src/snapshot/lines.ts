/**
 * A shard written one entry per line (build/write/json.ts: `[`, entries each followed by `,` but the last, `]`),
 * indexed by where each entry's JSON starts and ends, so that entries are cut out of the bytes without parsing them.
 */
export type ShardLines = { bytes: Uint8Array; starts: Uint32Array; ends: Uint32Array };

const NEWLINE = 0x0a;
const COMMA = 0x2c;
const QUOTE = 0x22;
const COLON = 0x3a;

export function indexLines(bytes: Uint8Array): ShardLines {
  const starts: number[] = [];
  const ends: number[] = [];
  // Line 0 is "[", the last is "]": the entries are the lines between.
  let at = bytes.indexOf(NEWLINE) + 1;
  while (at > 0 && at < bytes.length) {
    const next = bytes.indexOf(NEWLINE, at);
    if (next < 0) break;
    const end = bytes[next - 1] === COMMA ? next - 1 : next;
    if (bytes[at] !== 0x5d /* ] */) {
      starts.push(at);
      ends.push(end);
    }
    at = next + 1;
  }
  return { bytes, starts: Uint32Array.from(starts), ends: Uint32Array.from(ends) };
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
