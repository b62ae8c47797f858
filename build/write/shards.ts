import {
  LAYOUT,
  ProductCodeShard,
  RecordShard,
  ShardIndex,
  productCodeShardId,
  productCodeShardPath,
  recordShardId,
  recordShardPath,
  type ClearanceRecord,
  type ProductCodeEntry,
} from '../../src/contract/index.ts';
import { RecordNamesBuilder } from './record-names.ts';
import { RecordTableBuilder } from './record-table.ts';
import type { SnapshotWriter } from './writer.ts';

/** Shard ids cut from a sorted list of keys, each with its items in order. */
export function shardsOf<T>(items: readonly T[], keyOf: (item: T) => string, shardOf: (key: string) => string): { id: string; items: T[] }[] {
  const shards: { id: string; items: T[] }[] = [];
  for (const item of items) {
    const id = shardOf(keyOf(item));
    const last = shards[shards.length - 1];
    if (last && last.id === id) last.items.push(item);
    else shards.push({ id, items: [item] });
  }
  return shards;
}

export function shardIndex<T>(
  shards: { id: string; items: T[] }[],
  keyOf: (item: T) => string,
  pathOf: (id: string) => string,
  total: number,
): ShardIndex {
  return {
    total,
    shards: shards.map((s) => ({
      id: s.id,
      path: pathOf(s.id),
      count: s.items.length,
      first: keyOf(s.items[0] as T),
      last: keyOf(s.items[s.items.length - 1] as T),
    })),
  };
}

/**
 * The record shards (one record per line), the record table that locates each record's line, the record names files
 * (src/contract/record-names.ts) and the shard index.
 * `progress` is told every 256 shards, when the queued buffers are flushed to bound their memory.
 */
export function recordShards(records: readonly ClearanceRecord[]): { id: string; items: ClearanceRecord[] }[] {
  return shardsOf(records, (r) => r.kNumber, recordShardId);
}

export async function writeRecordShards(
  shards: readonly { id: string; items: ClearanceRecord[] }[],
  records: number,
  writer: SnapshotWriter,
  progress: (written: number) => void,
): Promise<void> {
  const table = new RecordTableBuilder(records);
  const names = new RecordNamesBuilder();
  let written = 0;
  for (const shard of shards) {
    const { bytes, spans } = writer.writeJsonLines(recordShardPath(shard.id), RecordShard, shard.items);
    table.addShard(shard.items.map((r) => r.kNumber), bytes, spans);
    for (const r of shard.items) names.add(r.kNumber, r.deviceName);
    if (++written % 256 === 0) {
      await writer.flush();
      progress(written);
    }
  }
  for (const part of table.parts()) writer.writeBytes(part.path, part.bytes);
  for (const file of names.files()) writer.writeBytes(file.path, file.bytes);
  writer.writeJson(LAYOUT.recordIndex, ShardIndex, shardIndex([...shards], (r: ClearanceRecord) => r.kNumber, recordShardPath, records));
  await writer.flush();
}

/** The product-code shards (one entry per line) and their index. */
export function writeProductCodeShards(entries: readonly ProductCodeEntry[], writer: SnapshotWriter): void {
  const shards = shardsOf(entries, (e) => e.productCode, productCodeShardId);
  for (const shard of shards) writer.writeJsonLines(productCodeShardPath(shard.id), ProductCodeShard, shard.items);
  writer.writeJson(LAYOUT.productCodeIndex, ShardIndex, shardIndex(shards, (e: ProductCodeEntry) => e.productCode, productCodeShardPath, entries.length));
}
