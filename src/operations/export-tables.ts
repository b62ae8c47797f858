import type { HeldTable, Snapshot } from '../snapshot/index.ts';
import { LruCache } from '../utils/lru.ts';

/**
 * 32 MiB: the whole record table of a 1,000,000-record snapshot (28 bytes a record, about 27 MiB in 11 parts), so at
 * that size every export reads each part once while it stays in use, whatever the number of exports.
 */
export const DEFAULT_EXPORT_TABLE_BYTES = 32 * 1024 * 1024;

/** What an entry weighs beyond its bytes: the key, the map's slot, the typed array's header. */
const ENTRY_OVERHEAD = 64;

/**
 * The record table's parts that exports read, one cache for every export of a process, bounded in bytes. An export
 * reads a few records from each of thousands of shards, and looks up each of them in the record table: reading a
 * part once per export rather than a shard's entries once per batch is what makes an export fast, and keeping one
 * copy per export is what made forty exports cost a gigabyte. Parts are keyed by snapshot id (a content hash), so
 * exports of a snapshot and of the next one each find their own; the least recently used part goes first, and an
 * export that needs it again reads and checks it again.
 */
export class ExportTables {
  private readonly parts: LruCache<string, Uint8Array>;

  constructor(capacityBytes: number = DEFAULT_EXPORT_TABLE_BYTES) {
    if (!Number.isInteger(capacityBytes) || capacityBytes < 1) {
      throw new Error(`Expected \`exportTableBytes\` to be a whole number of bytes from 1 and up, got ${capacityBytes}`);
    }
    this.parts = new LruCache(capacityBytes, (part) => part.byteLength + ENTRY_OVERHEAD);
  }

  /** The parts of one snapshot, as the snapshot's record reads take them (`Snapshot.eachRecordUncached`). */
  of(snapshot: Snapshot): HeldTable {
    const id = snapshot.id;
    return {
      get: (part) => this.parts.get(`${id}/${part}`),
      set: (part, table) => this.parts.set(`${id}/${part}`, table),
    };
  }

  /** Bytes held now, overhead included (for tests and measurements); never above `capacity`. */
  get bytes(): number {
    return this.parts.weight;
  }

  get capacity(): number {
    return this.parts.capacity;
  }

  /** Parts held now. */
  get size(): number {
    return this.parts.size;
  }
}

let shared: ExportTables | null = null;

/** The process's cache, for callers that give none (tools, tests of the operation): made on first use. */
export function defaultExportTables(): ExportTables {
  shared ??= new ExportTables();
  return shared;
}
