import type { Socket } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_FRESHNESS_MAX_AGE_HOURS, DEFAULT_OPERATION_TIMEOUT_MS } from '../api/defaults.ts';
import { FACET_VALUES_MAX } from '../contract/operations.ts';
import { syncDirName } from '../contract/sync.ts';

/** Everything the server can be told, read once: from createApp's options, or from the environment by `configFromEnv`. */
export type ServerConfig = {
  /** The `snapshot` link the build publishes (or a plain snapshot directory). */
  snapshotPath: string;
  /** The nightly sync's state file; null to ignore sync state. Default: `.sync/state.json` beside a link named `snapshot`, `.sync-NAME/state.json` beside a link named NAME. */
  syncStatePath?: string | null;
  /** The browser page's folder; null for none. Default: the repository's `public/`. */
  publicDir?: string | null;
  /** `freshness` turns `stale` when the last successful sync is older than this. Default 48. */
  freshnessMaxAgeHours?: number;
  /** Key for the catalog cursors' MAC. Default: a fixed key built into the source (see cursor.ts). */
  cursorSecret?: string;
  /** Bytes of verified shards and records kept in memory per snapshot (default 48 MiB). */
  cacheBytes?: number;
  /** Bytes of search answers kept per snapshot (default 16 MiB; 0 keeps none). */
  answerCacheBytes?: number;
  /** Bytes each of an MCP tool result's JSON and text stays within (default 16 KiB, at least 4 KiB). */
  mcpBudgetBytes?: number;
  /** Descriptors of the serving snapshot's files kept open between reads (default 16,384; 0 keeps none). */
  openFiles?: number;
  /** Requests of one connection answered at once; later pipelined ones wait unread until one is sent. Default 4. */
  pipelineDepth?: number;
  /** Pipelined requests of one connection that may wait for their turn; one more closes the connection. Default 32. */
  pipelineMaxWaiting?: number;
  /**
   * Bytes a connection's pipelined requests may hold on the fast lane until they are answered; past it the
   * connection is not read until answers are made. Also the bytes of its answers not yet taken by the kernel past
   * which its next answers wait to be made. Default 128 KiB; at least a whole request (80 KiB).
   */
  pipelineBufferBytes?: number;
  /** Whether POST /v1/query is answered on the fast lane (fast-lane.ts) before Node's HTTP layer. Default true. */
  fastLane?: boolean;
  /** Milliseconds of operations run per turn of the event loop before it goes back to the network. Default 2. */
  turnBudgetMs?: number;
  /** How often the snapshot link is re-read, in milliseconds (0: only on file-system events and reload()). */
  pollMs?: number;
  /** How often the sync state file is re-read, in milliseconds. */
  syncPollMs?: number;
  /** React to file-system events on the link's folder. */
  watch?: boolean;
  /** A client must send its request headers within this time, or gets a 408 (slow-client protection). Default 10 s. */
  headersTimeoutMs?: number;
  /** A client must send its whole request within this time, or gets a 408. Default 30 s. */
  requestTimeoutMs?: number;
  /** An operation still running after this long answers 500 `internal_error` (a bug: none should take so long). Default 30 s. */
  operationTimeoutMs?: number;
  /** Exports (GET /v1/export) streamed at once by this process; one more answers 503 `overloaded`. Default 4. */
  exportConcurrency?: number;
  /** Bytes of the record table kept for exports, one cache for all of them (default 32 MiB). */
  exportTableBytes?: number;
  /** The values one search facet may list; a facet that would list more is refused (default and most: 50,000). */
  facetValuesMax?: number;
};

export type ListenConfig = { port: number; host: string };

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DEFAULT_PUBLIC_DIR = join(REPO_ROOT, 'public');
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_PIPELINE_DEPTH = 4;
/** How long a keep-alive connection may sit idle between requests (Node's default). */
export const KEEP_ALIVE_MS = 5000;
/**
 * How often a busy connection is checked for progress: every third of the request timeout, so that one on which no
 * byte moved over two checks in a row (between two and three thirds of the limit) is closed within the limit.
 */
export const stallCheckMs = (requestTimeoutMs: number): number => Math.max(1, Math.ceil(requestTimeoutMs / 3));

/**
 * One such check of a busy connection: closes it when no byte moved either way since the check before (`last`, the
 * figure that check returned, or -1 for none), and returns the bytes moved so far for the next check.
 */
export function checkStall(socket: Socket, last: number): number {
  const moved = socket.bytesRead + socket.bytesWritten;
  if (moved === last) socket.destroy();
  return moved;
}
export const DEFAULT_PIPELINE_MAX_WAITING = 32;
/** Two of the largest request bodies: room for a client that pipelines a few, little for one that floods. */
export const DEFAULT_PIPELINE_BUFFER_BYTES = 128 * 1024;
/**
 * Exports at once: each holds a batch of records and its chunk (a few MiB) and keeps a thread-pool thread busy while
 * it compresses; four keep a 1,000,000-record server's memory well under 400 MiB and leave the loop to other answers.
 */
export const DEFAULT_EXPORT_CONCURRENCY = 4;
/**
 * Descriptors kept open: every shard of a snapshot of 1,000,000 records (about 10,000 record shards) and then some, as
 * nginx's open_file_cache would keep them. Fewer are kept when the process runs out (NodeStorage halves its bound).
 */
export const DEFAULT_OPEN_FILES = 16_384;
export const DEFAULT_TURN_BUDGET_MS = 2;
export { DEFAULT_FRESHNESS_MAX_AGE_HOURS, DEFAULT_OPERATION_TIMEOUT_MS };
export const DEFAULT_POLL_MS = 1000;
export const DEFAULT_SYNC_POLL_MS = 5000;
/** `npm start`'s snapshot link, relative to where it runs; a missing one is built there on the first start. */
export const DEFAULT_SNAPSHOT_PATH = 'snapshot';

/** The sync's state beside the snapshot link, in the folder the sync gives that link (see syncDirName). */
export function defaultSyncStatePath(snapshotPath: string): string {
  const link = resolve(snapshotPath);
  return join(dirname(link), syncDirName(basename(link)), 'state.json');
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, integer = false, zeroAllowed = false): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed) || (integer && !Number.isInteger(value))) {
    throw new Error(`Expected \`${name}\` to be a ${integer ? 'whole' : ''} number ${zeroAllowed ? 'from 0 and up' : 'above 0'}, got "${raw}"`);
  }
  return value;
}

const UNITS: Record<string, number> = { '': 1, k: 1024, kib: 1024, m: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gib: 1024 ** 3 };

/** A size in bytes: a whole number, optionally followed by K, KiB, M, MiB, G or GiB (powers of 1024). */
function byteSize(env: NodeJS.ProcessEnv, name: string, zeroAllowed = false): number {
  const raw = env[name] ?? '';
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(raw);
  const unit = match ? UNITS[(match[2] ?? '').toLowerCase()] : undefined;
  if (!match || unit === undefined || (Number(match[1]) <= 0 && !zeroAllowed)) {
    const least = zeroAllowed ? 'from 0 and up' : 'above 0';
    throw new Error(`Expected \`${name}\` to be a size in bytes ${least} (for example 50000000 or 48MiB), got "${raw}"`);
  }
  return Number(match[1]) * unit;
}

/** An on/off switch: 1, true, on or yes; 0, false, off or no; unset keeps the default. */
function onOff(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = (env[name] ?? '').trim().toLowerCase();
  if (raw === '') return fallback;
  if (['1', 'true', 'on', 'yes'].includes(raw)) return true;
  if (['0', 'false', 'off', 'no'].includes(raw)) return false;
  throw new Error(`Expected \`${name}\` to be on or off (1, true, on, yes; 0, false, off, no), got "${env[name]}"`);
}

/**
 * The server's environment variables: PORT (8080), HOST (127.0.0.1), SNAPSHOT_PATH (./snapshot), SYNC_STATE_PATH
 * (.sync/state.json beside the snapshot link), PUBLIC_DIR (the repository's public/), FRESHNESS_MAX_AGE_HOURS (48),
 * CURSOR_SECRET (built-in key), SHARD_CACHE_BYTES (48MiB), ANSWER_CACHE_BYTES (16MiB), OPEN_FILES (16384), HEADERS_TIMEOUT_MS (10000),
 * REQUEST_TIMEOUT_MS (30000), FAST_LANE (on), EXPORT_CONCURRENCY (4), EXPORT_TABLE_CACHE_BYTES (32MiB),
 * PIPELINE_BUFFER_BYTES (128KiB), MCP_BUDGET_BYTES (16KiB), FACET_VALUES_MAX (50000).
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ServerConfig & ListenConfig {
  const port = env.PORT === undefined || env.PORT === '' ? 8080 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`Expected \`PORT\` to be a port number, got "${env.PORT}"`);
  const snapshotPath = resolve(env.SNAPSHOT_PATH || DEFAULT_SNAPSHOT_PATH);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    snapshotPath,
    syncStatePath: env.SYNC_STATE_PATH ? resolve(env.SYNC_STATE_PATH) : defaultSyncStatePath(snapshotPath),
    publicDir: env.PUBLIC_DIR ? resolve(env.PUBLIC_DIR) : DEFAULT_PUBLIC_DIR,
    freshnessMaxAgeHours: positiveNumber(env, 'FRESHNESS_MAX_AGE_HOURS', DEFAULT_FRESHNESS_MAX_AGE_HOURS),
    ...(env.CURSOR_SECRET ? { cursorSecret: env.CURSOR_SECRET } : {}),
    ...(env.SHARD_CACHE_BYTES ? { cacheBytes: byteSize(env, 'SHARD_CACHE_BYTES') } : {}),
    ...(env.ANSWER_CACHE_BYTES ? { answerCacheBytes: byteSize(env, 'ANSWER_CACHE_BYTES', true) } : {}),
    ...(env.MCP_BUDGET_BYTES ? { mcpBudgetBytes: byteSize(env, 'MCP_BUDGET_BYTES') } : {}),
    openFiles: positiveNumber(env, 'OPEN_FILES', DEFAULT_OPEN_FILES, true, true),
    headersTimeoutMs: positiveNumber(env, 'HEADERS_TIMEOUT_MS', DEFAULT_HEADERS_TIMEOUT_MS, true),
    requestTimeoutMs: positiveNumber(env, 'REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, true),
    fastLane: onOff(env, 'FAST_LANE', true),
    exportConcurrency: positiveNumber(env, 'EXPORT_CONCURRENCY', DEFAULT_EXPORT_CONCURRENCY, true),
    ...(env.EXPORT_TABLE_CACHE_BYTES ? { exportTableBytes: byteSize(env, 'EXPORT_TABLE_CACHE_BYTES') } : {}),
    ...(env.PIPELINE_BUFFER_BYTES ? { pipelineBufferBytes: byteSize(env, 'PIPELINE_BUFFER_BYTES') } : {}),
    ...(env.FACET_VALUES_MAX ? { facetValuesMax: positiveNumber(env, 'FACET_VALUES_MAX', FACET_VALUES_MAX, true) } : {}),
  };
}
