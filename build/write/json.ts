/** One serialization for every JSON file of the snapshot: compact, members in insertion order, newline at the end. */
export function jsonBytes(value: unknown): Buffer {
  return Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
}
