/** One serialization for every JSON file of the snapshot: compact, members in insertion order, newline at the end. */
export function jsonBytes(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
}

/** Where one entry's JSON sits in a file written by `jsonLinesBytes`: [offset, offset + length). */
export type LineSpan = { offset: number; length: number };

/**
 * A JSON array with one entry per line (`[`, then each entry followed by `,` but the last, then `]`): still the JSON
 * that static clients parse, and a reader can cut one entry, or a run of them, out of the bytes by its line without
 * parsing the rest. JSON.stringify never writes a raw newline inside a value, so every newline is a separator.
 */
export function jsonLinesBytes(items: readonly unknown[]): { bytes: Buffer; spans: LineSpan[] } {
  const lines = items.map((item) => JSON.stringify(item));
  const spans: LineSpan[] = [];
  let offset = 2; // "[\n"
  for (const line of lines) {
    const length = Buffer.byteLength(line, 'utf8');
    spans.push({ offset, length });
    offset += length + 2; // ",\n" (or "\n]" after the last)
  }
  const body = lines.length === 0 ? '[\n]\n' : `[\n${lines.join(',\n')}\n]\n`;
  return { bytes: Buffer.from(body, 'utf8'), spans };
}
