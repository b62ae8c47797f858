import { FACET_VALUES_MAX, type OperationName } from '../contract/index.ts';
import { checkFacetValuesMax } from '../api/facet-values-max.ts';
import { OPERATION_REGISTRY, type Operation, type OperationRegistry } from '../operations/index.ts';
import {
  DEFAULT_FRESHNESS_MAX_AGE_HOURS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  DEFAULT_PIPELINE_DEPTH,
  DEFAULT_OPEN_FILES,
  DEFAULT_PIPELINE_MAX_WAITING,
  DEFAULT_PIPELINE_BUFFER_BYTES,
  DEFAULT_POLL_MS,
  DEFAULT_SYNC_POLL_MS,
  DEFAULT_TURN_BUDGET_MS,
  DEFAULT_PUBLIC_DIR,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_EXPORT_CONCURRENCY,
  defaultSyncStatePath,
  type ServerConfig,
} from './config.ts';
import { checkBudget, DEFAULT_BUDGET_BYTES } from '../api/mcp/budget.ts';
import { DEFAULT_ANSWER_CACHE_BYTES } from '../utils/answer-cache.ts';
import { DEFAULT_EXPORT_TABLE_BYTES } from '../operations/export-tables.ts';
import type { ExportFlow } from './export-stream.ts';
import { jsonLogger, type Logger } from './log.ts';
import { MEMORY_MAX_BYTES } from './static.ts';

export type AppOptions = ServerConfig & {
  logger?: Logger;
  /** Handlers that replace the built-in ones, by operation name (to wire an operation in, or a failing one in tests). */
  operations?: Partial<OperationRegistry>;
  /** The clock, for tests of freshness. */
  now?: () => Date;
  /** Snapshot files up to this size are sent from the verified byte cache; larger ones are streamed (default 1 MiB). */
  fileMemoryMaxBytes?: number;
  /** For tests and measurements: each export's flow as it starts (what it holds), and the records of a batch. */
  exportHooks?: { onFlow?: (flow: ExportFlow) => void; batchSize?: number };
};

/** Every option with its default filled in, resolved once when the app is made. */
export type ResolvedOptions = {
  snapshotPath: string;
  syncStatePath: string | null;
  publicDir: string | null;
  /** True when the caller named no public folder (its absence is then worth only an info line). */
  publicDirDefaulted: boolean;
  maxAgeHours: number;
  cursorSecret: string | undefined;
  cacheBytes: number | undefined;
  answerCacheBytes: number;
  mcpBudgetBytes: number;
  facetValuesMax: number;
  openFiles: number;
  pipelineDepth: number;
  pipelineMaxWaiting: number;
  pipelineBufferBytes: number;
  turnBudgetMs: number;
  pollMs: number;
  syncPollMs: number;
  watch: boolean;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  operationTimeoutMs: number;
  fileMemoryMaxBytes: number;
  fastLane: boolean;
  exportConcurrency: number;
  exportTableBytes: number;
  exportHooks: { onFlow?: (flow: ExportFlow) => void; batchSize?: number };
  logger: Logger;
  now: () => Date;
  operations: Record<OperationName, Operation>;
};

/** Checks the options and fills in the defaults; a wrong option fails here, at start-up, with its name. */
export function resolveAppOptions(options: AppOptions): ResolvedOptions {
  if (typeof options.snapshotPath !== 'string' || options.snapshotPath === '') {
    throw new Error('Expected `snapshotPath` to be the path of the snapshot link or directory');
  }
  const maxAgeHours = options.freshnessMaxAgeHours ?? DEFAULT_FRESHNESS_MAX_AGE_HOURS;
  if (!(maxAgeHours > 0)) throw new Error(`Expected \`freshnessMaxAgeHours\` to be a number above 0, got ${maxAgeHours}`);
  const fileMemoryMaxBytes = options.fileMemoryMaxBytes ?? MEMORY_MAX_BYTES;
  if (!(fileMemoryMaxBytes >= 0)) throw new Error(`Expected \`fileMemoryMaxBytes\` to be a number from 0 and up, got ${fileMemoryMaxBytes}`);
  const operations: Record<OperationName, Operation> = { ...OPERATION_REGISTRY };
  for (const [name, op] of Object.entries(options.operations ?? {}) as [OperationName, Operation | undefined][]) {
    if (op) operations[name] = op;
  }
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const exportConcurrency = options.exportConcurrency ?? DEFAULT_EXPORT_CONCURRENCY;
  if (!Number.isInteger(exportConcurrency) || exportConcurrency < 1) {
    throw new Error(`Expected \`exportConcurrency\` to be a whole number from 1 and up, got ${exportConcurrency}`);
  }
  const exportTableBytes = options.exportTableBytes ?? DEFAULT_EXPORT_TABLE_BYTES;
  if (!Number.isInteger(exportTableBytes) || exportTableBytes < 1) {
    throw new Error(`Expected \`exportTableBytes\` to be a whole number of bytes from 1 and up, got ${exportTableBytes}`);
  }
  return {
    snapshotPath: options.snapshotPath,
    syncStatePath: options.syncStatePath === undefined ? defaultSyncStatePath(options.snapshotPath) : options.syncStatePath,
    publicDir: options.publicDir === undefined ? DEFAULT_PUBLIC_DIR : options.publicDir,
    publicDirDefaulted: options.publicDir === undefined,
    maxAgeHours,
    cursorSecret: options.cursorSecret,
    cacheBytes: options.cacheBytes,
    answerCacheBytes: options.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES,
    mcpBudgetBytes: checkBudget(options.mcpBudgetBytes ?? DEFAULT_BUDGET_BYTES, 'mcpBudgetBytes'),
    facetValuesMax: checkFacetValuesMax(options.facetValuesMax ?? FACET_VALUES_MAX, 'facetValuesMax'),
    openFiles: options.openFiles ?? DEFAULT_OPEN_FILES,
    pipelineDepth: options.pipelineDepth ?? DEFAULT_PIPELINE_DEPTH,
    pipelineMaxWaiting: options.pipelineMaxWaiting ?? DEFAULT_PIPELINE_MAX_WAITING,
    pipelineBufferBytes: options.pipelineBufferBytes ?? DEFAULT_PIPELINE_BUFFER_BYTES,
    turnBudgetMs: options.turnBudgetMs ?? DEFAULT_TURN_BUDGET_MS,
    pollMs: options.pollMs ?? DEFAULT_POLL_MS,
    syncPollMs: options.syncPollMs ?? DEFAULT_SYNC_POLL_MS,
    watch: options.watch ?? true,
    headersTimeoutMs,
    requestTimeoutMs: Math.max(options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, headersTimeoutMs),
    operationTimeoutMs: options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS,
    fileMemoryMaxBytes,
    fastLane: options.fastLane ?? true,
    exportConcurrency,
    exportTableBytes,
    exportHooks: options.exportHooks ?? {},
    logger: options.logger ?? jsonLogger(),
    now: options.now ?? (() => new Date()),
    operations,
  };
}
