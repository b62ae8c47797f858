import { AnswerCache } from '../utils/answer-cache.ts';
import { DEFAULT_EXPORT_TABLE_BYTES, ExportTables } from '../operations/export-tables.ts';
import { DEFAULT_FRESHNESS_MAX_AGE_HOURS, DEFAULT_OPERATION_TIMEOUT_MS } from '../api/defaults.ts';
import { checkFacetValuesMax } from '../api/facet-values-max.ts';
import { FACET_VALUES_MAX } from '../contract/operations.ts';
import { operationDeadline } from '../api/deadline.ts';
import type { QueryDeps } from '../api/query-answer.ts';
import { SourceStateJson, sourceStateOf } from '../api/source-state.ts';
import { BUILT_IN_CURSOR_SECRET, CursorCodec } from '../operations/cursor.ts';
import { OPERATION_REGISTRY } from '../operations/registry.ts';
import type { SnapshotStorage } from '../snapshot/index.ts';
import { ChunkCache } from '../operations/search.ts';
import { ManifestWatch } from './source.ts';
import { AssetsStorage, R2Storage, type AssetsBinding, type R2BucketBinding } from './storage.ts';
import { checkBudget, DEFAULT_BUDGET_BYTES } from '../api/mcp/budget.ts';

/** The Worker's bindings and variables, read once per isolate and configuration. */
export type Env = {
  /** Workers static assets: the page, and the snapshot under SNAPSHOT_PREFIX unless SNAPSHOT_BUCKET is bound. */
  ASSETS?: AssetsBinding;
  /** An R2 bucket holding the snapshot under SNAPSHOT_PREFIX; read instead of the assets when bound. */
  SNAPSHOT_BUCKET?: R2BucketBinding;
  /** Where the snapshot's files are (`manifest.json` and the rest), default `snapshot/`. */
  SNAPSHOT_PREFIX?: string;
  /** Seconds a manifest read is trusted before it is read again, default 60. */
  MANIFEST_CHECK_SECONDS?: string;
  /** Signs catalog cursors; give every instance (Node or Worker) the same one so cursors go from one to another. */
  CURSOR_SECRET?: string;
  FRESHNESS_MAX_AGE_HOURS?: string;
  /** Bytes of verified shards and records kept per isolate, default 8 MiB (an isolate has 128 MB in all). */
  SHARD_CACHE_BYTES?: string;
  /** Bytes of the record table kept per isolate, default 8 MiB (all of it up to about 300,000 records). */
  RECORD_TABLE_CACHE_BYTES?: string;
  /**
   * Bytes of the isolate's memory, default 96 MiB: its own heap (ISOLATE_HEAP_BYTES), then what it keeps between
   * requests: the chunked search index's files, and the record and answer caches counted with them. A search reads
   * only its own files and holds them until it is answered; after each request the files least recently used by a
   * search go until all fits (up to ISOLATE_HEAP_BYTES keeps no search file).
   */
  SEARCH_CACHE_BYTES?: string;
  /** `chunks` (the default): searches read the chunked index; `whole`: the whole index by sections, read ahead. */
  SEARCH_INDEX?: string;
  /** Bytes of search answers kept per isolate, default 4 MiB (0 keeps none). */
  ANSWER_CACHE_BYTES?: string;
  /**
   * Bytes of the record table's parts that exports read, kept per isolate between exports, default 32 MiB (the whole
   * table of 1,000,000 records, about 27 MiB); counted in SEARCH_CACHE_BYTES like the other caches.
   */
  EXPORT_TABLE_CACHE_BYTES?: string;
  OPERATION_TIMEOUT_MS?: string;
  /** Bytes each of an MCP tool result's JSON and text stays within, default 16 KiB (at least 4 KiB). */
  MCP_BUDGET_BYTES?: string;
  /** The values one search facet may list, default and most 50,000; a facet that would list more is refused. */
  FACET_VALUES_MAX?: string;
};

const DEFAULT_MANIFEST_CHECK_SECONDS = 60;
const DEFAULT_WORKER_CACHE_BYTES = 8 * 1024 * 1024;
const DEFAULT_WORKER_TABLE_CACHE_BYTES = 8 * 1024 * 1024;
const DEFAULT_WORKER_ANSWER_CACHE_BYTES = 4 * 1024 * 1024;
/**
 * What an isolate holds whatever its caches hold, counted first in SEARCH_CACHE_BYTES: V8's heap of code, the manifest
 * (2.5 MiB at 1,000,000 records), the chunk directory and the engine's own objects, about 14 MiB at 1,000,000 records
 * after a varied search load. SEARCH_CACHE_BYTES bounds the isolate, not its caches alone: they get what is left.
 */
export const ISOLATE_HEAP_BYTES = 16 * 1024 * 1024;
/**
 * An isolate's 128 MB: its own heap (ISOLATE_HEAP_BYTES) and what requests leave behind, all within
 * SEARCH_CACHE_BYTES: the record caches, the answers and the chunked index's files (a search over every document's
 * columns holds its files until it is answered). What is left for the caches holds what a varied search load reads at
 * 1,000,000 records (the whole code, applicant, year and K number columns with their lookups, and the words' chunks,
 * about 60 MiB) beside the record and answer caches (about 14 MiB of their bounds): below that, files are read again
 * and again. The rest of the 128 MB is for what a request holds while it runs and for garbage not yet collected.
 */
export const DEFAULT_WORKER_SEARCH_CACHE_BYTES = 96 * 1024 * 1024;

export type Service = {
  watch: ManifestWatch;
  deps: QueryDeps;
  /** The isolate's cache of the chunked index's files, whose budget counts the record and answer caches too. */
  searchCache: ChunkCache;
  /** Brings what the isolate keeps back under its budget (after each request: a detail grows the record caches). */
  settle: () => void;
};

const numberVar = (env: Env, name: keyof Env, fallback: number): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`Expected \`${name}\` to be a number from 0 and up, got "${String(raw)}"`);
  return n;
};

function searchIndexVar(env: Env): 'chunks' | 'whole' {
  const raw = env.SEARCH_INDEX || 'chunks';
  if (raw !== 'chunks' && raw !== 'whole') throw new Error(`Expected \`SEARCH_INDEX\` to be "chunks" or "whole", got "${raw}"`);
  return raw;
}

export const log = (level: 'info' | 'error', message: string, fields: Record<string, unknown> = {}) =>
  console[level === 'error' ? 'error' : 'log'](JSON.stringify({ level, message, ...fields }));

function storageOf(env: Env): SnapshotStorage {
  const prefix = env.SNAPSHOT_PREFIX ?? 'snapshot/';
  if (env.SNAPSHOT_BUCKET) return new R2Storage(env.SNAPSHOT_BUCKET, prefix);
  if (env.ASSETS) return new AssetsStorage(env.ASSETS, prefix);
  throw new Error('Bind SNAPSHOT_BUCKET (an R2 bucket) or ASSETS (static assets) to the Worker: it has no snapshot to read');
}

/** The owner of the isolate's own heap in the search cache's count. */
const ISOLATE_HEAP = {};

/** An isolate's cache of the chunked index's files under `budget`, its own heap (ISOLATE_HEAP_BYTES) counted first. */
export function isolateSearchCache(budget: number): ChunkCache {
  const cache = new ChunkCache(budget);
  cache.countAlso(ISOLATE_HEAP, () => ISOLATE_HEAP_BYTES);
  return cache;
}

export function createService(env: Env): Service {
  const maxAgeHours = numberVar(env, 'FRESHNESS_MAX_AGE_HOURS', DEFAULT_FRESHNESS_MAX_AGE_HOURS);
  const operationTimeoutMs = numberVar(env, 'OPERATION_TIMEOUT_MS', DEFAULT_OPERATION_TIMEOUT_MS);
  const searchCache = isolateSearchCache(numberVar(env, 'SEARCH_CACHE_BYTES', DEFAULT_WORKER_SEARCH_CACHE_BYTES));
  const answerCache = new AnswerCache(Math.floor(numberVar(env, 'ANSWER_CACHE_BYTES', DEFAULT_WORKER_ANSWER_CACHE_BYTES)));
  const exportTableBytes = Math.floor(numberVar(env, 'EXPORT_TABLE_CACHE_BYTES', DEFAULT_EXPORT_TABLE_BYTES));
  // As on Node: an export reads the table's parts through this cache, so it keeps at least a byte.
  if (exportTableBytes < 1) throw new Error(`Expected \`EXPORT_TABLE_CACHE_BYTES\` to be a number of bytes above 0, got "${String(env.EXPORT_TABLE_CACHE_BYTES)}"`);
  const exportTables = new ExportTables(exportTableBytes);
  const watch = new ManifestWatch(storageOf(env), {
    checkEveryMs: numberVar(env, 'MANIFEST_CHECK_SECONDS', DEFAULT_MANIFEST_CHECK_SECONDS) * 1000,
    cacheBytes: numberVar(env, 'SHARD_CACHE_BYTES', DEFAULT_WORKER_CACHE_BYTES),
    tableCacheBytes: numberVar(env, 'RECORD_TABLE_CACHE_BYTES', DEFAULT_WORKER_TABLE_CACHE_BYTES),
    searchCache,
    searchWhole: searchIndexVar(env) === 'whole',
    onCorrupt: (r) => log('error', 'snapshot file does not match its sha256; it is not served', { ...r }),
    onRefuse: (reason) => log('error', 'snapshot refused; the current one keeps serving', { reason }),
    onSwitch: (next, previous) =>
      log('info', 'snapshot loaded', { snapshotId: next.id, records: next.manifest.counts.records, previousSnapshotId: previous?.id ?? null }),
  });
  const stateJson = new SourceStateJson();
  // A Worker has no sync state file: freshness comes from the manifest, as on a mirror.
  const deps: QueryDeps = {
    operations: OPERATION_REGISTRY,
    cursors: new CursorCodec(env.CURSOR_SECRET || BUILT_IN_CURSOR_SECRET),
    now: () => new Date(),
    sourceState: (snapshot, now, warnings) => sourceStateOf({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    sourceStateJson: (snapshot, now, warnings) => stateJson.json({ manifest: snapshot?.manifest ?? null, sync: null, now, maxAgeHours, warnings }),
    deadline: operationDeadline(operationTimeoutMs, false),
    answerCache,
    mcpBudgetBytes: checkBudget(numberVar(env, 'MCP_BUDGET_BYTES', DEFAULT_BUDGET_BYTES), 'MCP_BUDGET_BYTES'),
    facetValuesMax: checkFacetValuesMax(numberVar(env, 'FACET_VALUES_MAX', FACET_VALUES_MAX), 'FACET_VALUES_MAX'),
    exportTables,
  };
  // One budget for what the isolate keeps: beside its own heap, the record caches, read buffers and answers of the
  // snapshot serving, and the record table's parts exports keep, count against the search cache's, and its files make
  // room for them (each keeps its own bound too).
  searchCache.countAlso(watch, () => {
    const snapshot = watch.serving;
    return exportTables.bytes + (snapshot ? snapshot.keptBytes + answerCache.weightFor(snapshot) : 0);
  });
  return { watch, deps, searchCache, settle: () => searchCache.trim() };
}

