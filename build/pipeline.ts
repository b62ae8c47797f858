import { rm } from 'node:fs/promises';
import {
  BuildReport,
  LAYOUT,
  Manifest,
  MetaFile,
  ProductCodeShard,
  RecordShard,
  SNAPSHOT_SCHEMA_VERSION,
  ShardIndex,
  TopProductCodesFile,
  productCodeShardId,
  productCodeShardPath,
  recordShardId,
  recordShardPath,
  snapshotIdOf,
  type ClearanceRecord,
  type ProductCodeEntry,
} from '../src/contract/index.ts';
import { writeChangeLog } from './changes/changes.ts';
import { writePagefindIndex } from './index/pagefind.ts';
import { writeSearchIndex } from './index/search.ts';
import { countByProductCode, decisionDateRange, metaData, productCodeEntries, sourceNotes, topProductCodes } from './merge/assemble.ts';
import { ingest } from './merge/ingest.ts';
import { createReporter, silentReporter, type Reporter } from './progress/reporter.ts';
import { makeStagingDir, publishSnapshot, snapshotDirName } from './publish/publish.ts';
import { readLookups } from './sources/lookups.ts';
import { readSources } from './sources/read.ts';
import { RecordTableBuilder } from './write/record-table.ts';
import { sha256Hex } from '../src/snapshot/files.ts';
import { SnapshotWriter } from './write/writer.ts';

export type BuildOptions = {
  /** Source files, folders or zips, in precedence order (a later one overrides an earlier one). */
  sources: readonly string[];
  /** Where the snapshot is published: a symbolic link to the build's directory. */
  out: string;
  /** Seconds since the epoch to record as the generation time; defaults to SOURCE_DATE_EPOCH, then now. */
  sourceDateEpoch?: number;
  /** When the sources were last fetched and verified from their origin; null for local files. */
  lastSuccessfulSyncAt?: string | null;
  /** Sentences added to meta.sourceNotes (for example what the bundled files cover). */
  notes?: readonly string[];
  /** A reporter, true for the default one on stderr, false or absent for none. */
  progress?: boolean | Reporter;
  /** Files written at once. */
  concurrency?: number;
};

export type BuildStats = {
  seconds: number;
  records: number;
  files: number;
  bytes: number;
  skippedRows: number;
  skippedByReason: Record<string, number>;
  peakRssBytes: number;
};

export type BuildResult = { dir: string; manifest: Manifest; report: BuildReport; stats: BuildStats };

/** Shard ids cut from a sorted list of keys, each with its items in order. */
function shardsOf<T>(items: readonly T[], keyOf: (item: T) => string, shardOf: (key: string) => string): { id: string; items: T[] }[] {
  const shards: { id: string; items: T[] }[] = [];
  for (const item of items) {
    const id = shardOf(keyOf(item));
    const last = shards[shards.length - 1];
    if (last && last.id === id) last.items.push(item);
    else shards.push({ id, items: [item] });
  }
  return shards;
}

function generationTime(epoch: number | undefined): string {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  const seconds = epoch ?? (fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : undefined);
  if (seconds !== undefined && !Number.isFinite(seconds)) throw new Error(`SOURCE_DATE_EPOCH must be a number of seconds, got "${fromEnv}"`);
  return new Date(seconds !== undefined ? seconds * 1000 : Date.now()).toISOString();
}

/**
 * read sources → normalize → merge → write shards → index → publish. The snapshot is written into a staging
 * directory and switched in with one atomic rename; on any failure the staging directory is removed and the
 * published snapshot is left as it was.
 */
export async function runBuild(options: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  let peakRss = process.memoryUsage.rss();
  const sampleRss = () => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  };
  const rssTimer = setInterval(sampleRss, 200);
  const reporter = options.progress === true ? createReporter() : options.progress || silentReporter;
  const generatedAt = generationTime(options.sourceDateEpoch);
  let staging: string | null = null;
  try {
    reporter.stage('read sources');
    const { inputs, sourceRevision, inputBytes } = await readSources(options.sources);
    const lookups = await readLookups();
    reporter.end(`${inputs.length} files, ${(inputBytes / 1e6).toFixed(1)} MB`);

    reporter.stage('normalize and merge');
    let rowsSoFar = 0;
    const ingested = ingest(inputs, lookups, (e) => {
      if (e.done) rowsSoFar += e.rows;
      reporter.update(rowsSoFar + (e.done ? 0 : e.rows), e.file);
    });
    const { records, classifications } = ingested;
    const report: BuildReport = { sourceRevision, ...ingested.report };
    reporter.end(`${records.length.toLocaleString('en-US')} records, ${report.skipped.length} rows skipped, ${report.merged.length} merged`);
    sampleRss();

    staging = await makeStagingDir(options.out);
    const writer = new SnapshotWriter(staging, options.concurrency ?? 16);

    const recordShards = shardsOf(records, (r) => r.kNumber, recordShardId);
    reporter.stage('write record shards', recordShards.length);
    let written = 0;
    const table = new RecordTableBuilder(records.length);
    for (const shard of recordShards) {
      const { bytes, spans } = writer.writeJsonLines(recordShardPath(shard.id), RecordShard, shard.items);
      table.addShard(shard.items.map((r) => r.kNumber), bytes, spans);
      if (++written % 256 === 0) {
        await writer.flush(); // bounds the memory held by queued buffers
        reporter.update(written);
      }
    }
    for (const part of table.parts()) writer.writeBytes(part.path, part.bytes);
    writer.writeJson(LAYOUT.recordIndex, ShardIndex, shardIndex(recordShards, (r: ClearanceRecord) => r.kNumber, recordShardPath, records.length));
    await writer.flush();
    reporter.end(`${recordShards.length} shards`);

    reporter.stage('change log');
    const changes = await writeChangeLog({ out: options.out, records, writer });
    reporter.end(`${changes.log.counts.added} added, ${changes.log.counts.removed} removed, ${changes.log.counts.changed} changed`);

    reporter.stage('write answers');
    const counts = countByProductCode(records);
    const entries = productCodeEntries(classifications, counts);
    const codeShards = shardsOf(entries, (e) => e.productCode, productCodeShardId);
    for (const shard of codeShards) writer.writeJsonLines(productCodeShardPath(shard.id), ProductCodeShard, shard.items);
    writer.writeJson(LAYOUT.productCodeIndex, ShardIndex, shardIndex(codeShards, (e: ProductCodeEntry) => e.productCode, productCodeShardPath, entries.length));
    writer.writeJson(LAYOUT.topProductCodes, TopProductCodesFile, { codes: topProductCodes(counts) });
    writer.writeJson(LAYOUT.meta, MetaFile, metaData(records.length, sourceNotes(records, entries, report, [...(options.notes ?? []), changes.summary])));
    writer.writeJson(LAYOUT.report, BuildReport, report);
    await writer.flush();
    reporter.end(`${entries.length} product codes`);

    const deviceTypes = new Map(entries.map((e) => [e.productCode, e.deviceType]));
    reporter.stage('search index');
    await writeSearchIndex(records, deviceTypes, writer, new Map(entries.map((e) => [e.productCode, e.deviceClass])));
    await writer.flush();
    reporter.end();
    sampleRss();

    reporter.stage('browser index');
    await writePagefindIndex(records, deviceTypes, writer);
    await writer.flush();
    reporter.end();
    sampleRss();

    reporter.stage('manifest and publish');
    const files = writer.files();
    const bytes = files.reduce((sum, f) => sum + f.bytes, 0);
    const snapshotId = snapshotIdOf(files, sha256Hex);
    const { min, max } = decisionDateRange(records);
    const manifest: Manifest = {
      schemaVersion: SNAPSHOT_SCHEMA_VERSION,
      snapshotId,
      sourceRevision,
      generatedAt,
      lastSuccessfulSyncAt: options.lastSuccessfulSyncAt ?? null,
      decisionDateMin: min,
      decisionDateMax: max,
      counts: {
        records: records.length,
        productCodes: entries.length,
        classifiedProductCodes: classifications.length,
        sourceRows: report.sources.reduce((s, x) => s + x.rows, 0),
        mergedRows: report.merged.length,
        skippedRows: report.skipped.length,
        fieldIssues: report.fieldIssues.length,
        files: files.length + 1,
        bytes,
      },
      sources: report.sources,
      files,
    };
    // The manifest is written last: a snapshot without one is never published.
    writer.writeJson(LAYOUT.manifest, Manifest, manifest);
    await writer.flush();
    const dir = await publishSnapshot(staging, options.out, snapshotDirName({ generatedAt, snapshotId }));
    staging = null;
    reporter.end(`${files.length + 1} files, ${(bytes / 1e6).toFixed(1)} MB`);
    sampleRss();
    return {
      dir,
      manifest,
      report,
      stats: {
        seconds: (Date.now() - started) / 1000,
        records: records.length,
        files: files.length + 1,
        bytes,
        skippedRows: report.skipped.length,
        skippedByReason: report.skippedByReason,
        peakRssBytes: peakRss,
      },
    };
  } finally {
    clearInterval(rssTimer);
    if (staging) await rm(staging, { recursive: true, force: true }).catch(() => {});
  }
}

function shardIndex<T>(
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
