import { rm } from 'node:fs/promises';
import { BuildReport, LAYOUT, Manifest, MetaFile, SNAPSHOT_SCHEMA_VERSION, TopProductCodesFile, snapshotIdOf, type Download, type ProductCodeEntry } from '../../src/contract/index.ts';
import { writeDownloads } from '../downloads/downloads.ts';
import { writeChangeLog } from '../changes/changes.ts';
import { carryHistory, historySummary, writeHistory } from '../history/history.ts';
import { DEFAULT_HISTORY_DAYS } from '../../src/contract/history.ts';
import { writePagefindIndex } from '../index/pagefind.ts';
import { writeSearchIndex } from '../index/search.ts';
import { countByProductCode, decisionDateRange, metaData, productCodeEntries, sourceNotes, topProductCodes } from '../merge/assemble.ts';
import { ingest } from '../merge/ingest.ts';
import { createReporter, silentReporter, type Reporter } from '../progress/reporter.ts';
import { makeStagingDir, publishSnapshot, snapshotDirName } from '../publish/publish.ts';
import { readLookups } from '../sources/lookups.ts';
import { writeStaticFeeds } from '../feeds/static.ts';
import { readSources } from '../sources/read.ts';
import { recordShards, writeProductCodeShards, writeRecordShards } from '../write/shards.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { SnapshotWriter } from '../write/writer.ts';
import { findEdgeFolders, readEdgeFolder } from '../lineage/read.ts';
import { writeLineage } from '../lineage/write.ts';
import { mergeEdges } from '../lineage/merge.ts';

export type BuildOptions = {
  /** Source files, folders or zips, in precedence order (a later one overrides an earlier one). */
  sources: readonly string[];
  /** Where the snapshot is published: a symbolic link to the build's directory. */
  out: string;
  /** Seconds since the epoch to record as the generation time; defaults to SOURCE_DATE_EPOCH, then now. */
  sourceDateEpoch?: number;
  /** When the sources were last fetched and verified from their origin; null for local files. */
  lastSuccessfulSyncAt?: string | null;
  /**
   * Folders of edge inputs (build/lineage/read.ts), read besides those found in `sources`: every folder at or below
   * each holding a predicates.csv and a source.json.
   */
  edges?: readonly string[];
  /** Sentences added to meta.sourceNotes (for example what the bundled files cover). */
  notes?: readonly string[];
  /** A reporter, true for the default one on stderr, false or absent for none. */
  progress?: boolean | Reporter;
  /** Files written at once. */
  concurrency?: number;
  /** The most a zip entry the build reads may inflate to (default: sources/read.ts DEFAULT_MAX_ENTRY_BYTES). */
  maxEntryBytes?: number;
  /** Days of change history kept (change sets older than this are dropped); DEFAULT_HISTORY_DAYS when absent. */
  historyDays?: number;
  /**
   * Also write a Pagefind index (`pagefind/`) for pages that search with Pagefind. Off by default: the page searches
   * the chunked index (`search/chunks.json`) at every size, and Pagefind adds about one file per 25 clearances.
   */
  pagefind?: boolean;
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

export type BuildResult = {
  dir: string;
  manifest: Manifest;
  report: BuildReport;
  stats: BuildStats;
  /** The history carried forward: change sets kept, and what of the previous history did not verify and was dropped. */
  history: { sets: number; completeSince: string; dropped: string[] };
};

function generationTime(epoch: number | undefined): string {
  const fromEnv = process.env.SOURCE_DATE_EPOCH;
  const seconds = epoch ?? (fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : undefined);
  if (seconds !== undefined && !Number.isFinite(seconds)) throw new Error(`SOURCE_DATE_EPOCH must be a number of seconds, got "${fromEnv}"`);
  return new Date(seconds !== undefined ? seconds * 1000 : Date.now()).toISOString();
}

/** What the first stages make of the sources: every record and classification, and the build report. */
type Merged = Awaited<ReturnType<typeof readAndMerge>>;

/** Stage 1 and 2: read every source, normalize its rows and merge them by K number. */
async function readAndMerge(sources: readonly string[], reporter: Reporter, maxEntryBytes?: number) {
  reporter.stage('read sources');
  const { inputs, sourceRevision, inputBytes } = await readSources(sources, { maxEntryBytes });
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
  return { records, classifications, report, sourceRevision };
}

/** The answers besides the records: product codes, top product codes, meta and the build report. */
async function writeAnswers(merged: Merged, notes: readonly string[], downloads: readonly Download[], writer: SnapshotWriter): Promise<ProductCodeEntry[]> {
  const { records, classifications, report } = merged;
  const counts = countByProductCode(records);
  const entries = productCodeEntries(classifications, counts);
  writeProductCodeShards(entries, writer);
  writer.writeJson(LAYOUT.topProductCodes, TopProductCodesFile, { codes: topProductCodes(counts) });
  writer.writeJson(LAYOUT.meta, MetaFile, metaData(records.length, sourceNotes(records, entries, report, notes), downloads));
  writer.writeJson(LAYOUT.report, BuildReport, report);
  await writer.flush();
  return entries;
}

/** The manifest of what `writer` wrote: every file with its sha256, the counts, and the content id. */
function manifestOf(merged: Merged, entries: readonly ProductCodeEntry[], writer: SnapshotWriter, generatedAt: string, lastSuccessfulSyncAt: string | null): Manifest {
  const { records, classifications, report, sourceRevision } = merged;
  const files = writer.files();
  const { min, max } = decisionDateRange(records);
  return {
    schemaVersion: SNAPSHOT_SCHEMA_VERSION,
    snapshotId: snapshotIdOf(files, sha256Hex),
    sourceRevision,
    generatedAt,
    lastSuccessfulSyncAt,
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
      bytes: files.reduce((sum, f) => sum + f.bytes, 0),
    },
    sources: report.sources,
    files,
  };
}

/** The peak resident memory of this process, sampled every 200 ms and at each stage's end. */
function peakMemory(): { sample(): void; stop(): number } {
  let peak = process.memoryUsage.rss();
  const sample = () => {
    peak = Math.max(peak, process.memoryUsage.rss());
  };
  const timer = setInterval(sample, 200);
  return {
    sample,
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/**
 * read sources → normalize → merge → write shards → change log → bulk downloads → answers → index → publish, one
 * stage each. The
 * snapshot is written into a staging directory and switched in with one atomic rename; on any failure the staging
 * directory is removed and the published snapshot is left as it was.
 */
export async function runBuild(options: BuildOptions): Promise<BuildResult> {
  const started = Date.now();
  const memory = peakMemory();
  const reporter = options.progress === true ? createReporter() : options.progress || silentReporter;
  const generatedAt = generationTime(options.sourceDateEpoch);
  let staging: string | null = null;
  let writing: SnapshotWriter | null = null;
  try {
    const merged = await readAndMerge(options.sources, reporter, options.maxEntryBytes);
    const { records, report } = merged;
    memory.sample();

    staging = await makeStagingDir(options.out);
    const writer = new SnapshotWriter(staging, options.concurrency ?? 16);
    writing = writer;

    const shards = recordShards(records);
    reporter.stage('write record shards', shards.length);
    await writeRecordShards(shards, records.length, writer, (written) => reporter.update(written));
    reporter.end(`${shards.length} shards`);

    reporter.stage('change log');
    const changes = await writeChangeLog({ out: options.out, records, writer });
    reporter.end(`${changes.log.counts.added} added, ${changes.log.counts.removed} removed, ${changes.log.counts.changed} changed`);

    reporter.stage('history');
    const historyDays = options.historyDays ?? DEFAULT_HISTORY_DAYS;
    if (!Number.isInteger(historyDays) || historyDays < 1) throw new Error(`historyDays must be a whole number of days from 1 up, got ${historyDays}`);
    const history = await carryHistory({ previous: changes.previous, comparison: changes.comparison, records, generatedAt, keepDays: historyDays });
    writeHistory(history, writer);
    reporter.end(`${history.sets.length} change sets${history.index.dropped.length ? `; dropped: ${history.index.dropped.join('; ')}` : ''}`);

    reporter.stage('lineage');
    const edgeFolders: string[] = [];
    for (const root of [...options.sources, ...(options.edges ?? [])]) edgeFolders.push(...(await findEdgeFolders(root)));
    const edgeInputs = await Promise.all(edgeFolders.map(readEdgeFolder));
    // One merge for the lineage files and the search index's predicates, so both hold the same edges.
    const edges = mergeEdges(edgeInputs);
    const lineage = await writeLineage(edgeInputs, records, writer, edges);
    await writer.flush();
    reporter.end(`${lineage.edges.toLocaleString('en-US')} edges from ${lineage.sources.map((s) => s.source).join(', ') || 'no source'}`);

    reporter.stage('bulk downloads');
    const downloads = await writeDownloads(records, writer);
    reporter.end(downloads.map((d) => `${d.format} ${(d.bytes / 1e6).toFixed(1)} MB`).join(', '));
    memory.sample();

    reporter.stage('write answers');
    const entries = await writeAnswers(merged, [...(options.notes ?? []), historySummary(history), changes.summary], downloads, writer);
    reporter.end(`${entries.length} product codes`);

    const deviceTypes = new Map(entries.map((e) => [e.productCode, e.deviceType]));
    reporter.stage('static feeds');
    const panelCodes = new Map([...(await readLookups()).committees].map(([code, name]) => [name, code]));
    const feeds = writeStaticFeeds({ records, history, deviceTypes, panelCodes, generatedAt }, writer);
    reporter.end(`${feeds.files} feeds`);

    reporter.stage('search index');
    await writeSearchIndex(records, deviceTypes, writer, new Map(entries.map((e) => [e.productCode, e.deviceClass])), edges);
    await writer.flush();
    reporter.end();
    memory.sample();

    if (options.pagefind) {
      reporter.stage('Pagefind index');
      await writePagefindIndex(records, deviceTypes, writer);
      await writer.flush();
      reporter.end();
      memory.sample();
    }

    reporter.stage('manifest and publish');
    const manifest = manifestOf(merged, entries, writer, generatedAt, options.lastSuccessfulSyncAt ?? null);
    // The manifest is written last: a snapshot without one is never published.
    writer.writeJson(LAYOUT.manifest, Manifest, manifest);
    await writer.flush();
    const dir = await publishSnapshot(staging, options.out, snapshotDirName(manifest));
    staging = null;
    reporter.end(`${manifest.counts.files} files, ${(manifest.counts.bytes / 1e6).toFixed(1)} MB`);
    memory.sample();
    return {
      dir,
      manifest,
      report,
      history: { sets: history.sets.length, completeSince: history.index.completeSince, dropped: history.index.dropped },
      stats: {
        seconds: (Date.now() - started) / 1000,
        records: records.length,
        files: manifest.counts.files,
        bytes: manifest.counts.bytes,
        skippedRows: report.skipped.length,
        skippedByReason: report.skippedByReason,
        peakRssBytes: memory.stop(),
      },
    };
  } finally {
    memory.stop();
    if (staging) {
      await writing?.settle();
      await rm(staging, { recursive: true, force: true }).catch(() => {});
    }
  }
}
