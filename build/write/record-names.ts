import { RECORD_NAMES } from '../../src/contract/record-names.ts';

/**
 * Builds the record names files (src/contract/record-names.ts): the index of every K number up to the last record's,
 * and each distinct device name once. A name of 255 bytes or more, or one that would take names.bin past its 16 MiB,
 * is left to its record (the index says so).
 */
export class RecordNamesBuilder {
  private readonly entries = new Map<number, string>();

  add(kNumber: string, deviceName: string): void {
    if (!/^K\d{6}$/.test(kNumber)) throw new Error(`the record names files hold K numbers, not ${JSON.stringify(kNumber)}`);
    this.entries.set(Number(kNumber.slice(1)), deviceName);
  }

  /** The index and the names; none for a snapshot without records. */
  files(): { path: string; bytes: Buffer }[] {
    if (!this.entries.size) return [];
    const numbers = [...this.entries.keys()].sort((a, b) => a - b);
    const index = Buffer.alloc(((numbers.at(-1) as number) + 1) * RECORD_NAMES.entryBytes);
    const at = new Map<string, number>();
    const names: Buffer[] = [];
    let size = 0;
    for (const n of numbers) {
      const name = this.entries.get(n) as string;
      let from = at.get(name);
      const bytes = Buffer.from(name, 'utf8');
      if (from === undefined && bytes.length < RECORD_NAMES.notHere && size + bytes.length <= RECORD_NAMES.namesBytes) {
        from = size;
        at.set(name, from);
        names.push(bytes);
        size += bytes.length;
      }
      const value = from === undefined ? RECORD_NAMES.notHere * 2 ** 24 : bytes.length * 2 ** 24 + from;
      index.writeUInt32LE(value, n * RECORD_NAMES.entryBytes);
    }
    return [
      { path: RECORD_NAMES.index, bytes: index },
      { path: RECORD_NAMES.names, bytes: Buffer.concat(names) },
    ];
  }
}
