import { DOWNLOAD_MEDIA_TYPES, LAYOUT, type ClearanceRecord, type Download } from '../../src/contract/index.ts';
import type { SnapshotWriter } from '../write/writer.ts';
import { writeParquet } from './parquet.ts';
import { writeSqlite } from './sqlite.ts';

/**
 * The bulk downloads (docs/data.md): the whole table of clearances as Parquet and as SQLite, from the same records in
 * the same order (K number ascending), written into the snapshot and listed in its manifest like its other files.
 * Returns them as meta lists them.
 */
export async function writeDownloads(records: readonly ClearanceRecord[], writer: SnapshotWriter): Promise<Download[]> {
  const parquet = LAYOUT.downloadsParquet;
  writeParquet(records, await writer.pathFor(parquet));
  const sqlite = LAYOUT.downloadsSqlite;
  await writeSqlite(records, await writer.pathFor(sqlite));
  const entries = [
    { format: 'parquet', mediaType: DOWNLOAD_MEDIA_TYPES.parquet, entry: await writer.adoptFile(parquet) },
    { format: 'sqlite', mediaType: DOWNLOAD_MEDIA_TYPES.sqlite, entry: await writer.adoptFile(sqlite) },
  ] as const;
  return entries.map(({ format, mediaType, entry }) => ({ format, path: entry.path, mediaType, bytes: entry.bytes, sha256: entry.sha256 }));
}
