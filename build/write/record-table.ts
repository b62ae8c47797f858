import { createHash } from 'node:crypto';
import { RECORD_TABLE, recordTablePartPath } from '../../src/contract/index.ts';
import type { LineSpan } from './json.ts';

/**
 * Builds the record table (src/contract/snapshot.ts, RECORD_TABLE): one entry per record, in shard order, with the
 * record's K number digits, its line's offset and length in the shard, and the head of the line's sha256. A server
 * reads a record's bytes from that range and checks them against the digest, without reading the rest of the shard.
 */
export class RecordTableBuilder {
  private readonly table: Buffer;
  private readonly shardEnds: number[] = [];
  private entries = 0;

  constructor(records: number) {
    this.table = Buffer.alloc(records * RECORD_TABLE.entryBytes);
  }

  /** Adds one shard's records, in the shard's order: their K numbers, the shard's bytes and each record's line. */
  addShard(kNumbers: readonly string[], bytes: Uint8Array, spans: readonly LineSpan[]): void {
    kNumbers.forEach((k, i) => {
      const span = spans[i] as LineSpan;
      const at = this.entries++ * RECORD_TABLE.entryBytes;
      this.table.writeUInt32LE(Number(k.slice(1)), at);
      this.table.writeUInt32LE(span.offset, at + 4);
      this.table.writeUInt32LE(span.length, at + 8);
      createHash('sha256')
        .update(bytes.subarray(span.offset, span.offset + span.length))
        .digest()
        .copy(this.table, at + 12, 0, RECORD_TABLE.digestBytes);
    });
    this.shardEnds.push(this.entries);
  }

  /** The table's files: one part per `shardsPerPart` shards. */
  parts(): { path: string; bytes: Buffer }[] {
    if (this.entries * RECORD_TABLE.entryBytes !== this.table.length) {
      throw new Error(`the record table holds ${this.entries} entries of ${this.table.length / RECORD_TABLE.entryBytes} records`);
    }
    const out: { path: string; bytes: Buffer }[] = [];
    for (let first = 0, part = 0; first < this.shardEnds.length; first += RECORD_TABLE.shardsPerPart, part++) {
      const start = first === 0 ? 0 : (this.shardEnds[first - 1] as number);
      const end = this.shardEnds[Math.min(first + RECORD_TABLE.shardsPerPart, this.shardEnds.length) - 1] as number;
      out.push({ path: recordTablePartPath(part), bytes: this.table.subarray(start * RECORD_TABLE.entryBytes, end * RECORD_TABLE.entryBytes) });
    }
    return out;
  }
}
