import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pLimit from 'p-limit';
import { Manifest, LAYOUT } from '../../src/contract/index.ts';
import { SYNC_HISTORY_LIMIT, type SyncFileState, type SyncOutcome, type SyncState } from '../../src/contract/sync.ts';
import { runBuild } from '../snapshot/build.ts';
import { activeSnapshotDir } from '../publish/publish.ts';
import { limitsFor, resolveSyncOptions, type SyncOptions } from './config.ts';
import { getWithRetry, type HttpResult } from '../io/http.ts';
import { acquireLock } from '../io/lock.ts';
import { readSyncState, writeSyncState } from './state.ts';
import { validateDownload } from './validate.ts';
import { edgeSignature, servedEdgeSignature, syncEdges } from './summaries.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';

export type FileOutcome = {
  name: string;
  /** not-modified: a 304; downloaded: a 200, `changed` when its bytes differ from the last good sync's. */
  status: 'not-modified' | 'downloaded';
  changed: boolean;
  bytes: number;
  rows: number;
};

export type SyncResult = {
  outcome: SyncOutcome;
  /** One sentence, as kept in the state's history. */
  detail: string;
  state: SyncState;
  files: FileOutcome[];
  /** The published snapshot, when this sync built one. */
  snapshot: { dir: string; snapshotId: string } | null;
};

type Fetched = FileOutcome & { entry: SyncFileState; incoming: string | null; maxEntryBytes: number };

/**
 * download → verify → (if anything changed) build and publish → record. A failure at any step records its time and
 * reason in the state file and leaves the served snapshot and the last verified sources as they were; nothing is
 * promoted until every file has passed.
 */
export async function runSync(given: Partial<SyncOptions> = {}): Promise<SyncResult> {
  const o = resolveSyncOptions(given);
  const now = o.now ?? (() => new Date());
  const log = o.log ?? (() => {});
  const paths = { sources: join(o.dir, 'sources'), incoming: join(o.dir, 'incoming'), state: join(o.dir, 'state.json') };
  const release = await acquireLock(join(o.dir, 'lock'), 'sync');
  try {
    const { state, problem } = await readSyncState(paths.state);
    if (problem) log(problem);
    const attemptAt = now().toISOString();
    state.lastAttemptAt = attemptAt;
    state.snapshot = resolve(o.out);
    await writeSyncState(paths.state, state);
    await rm(paths.incoming, { recursive: true, force: true });

    const finish = async (outcome: SyncOutcome, detail: string, files: FileOutcome[], snapshot: SyncResult['snapshot']) => {
      state.history = [{ at: attemptAt, outcome, detail }, ...state.history].slice(0, SYNC_HISTORY_LIMIT);
      await writeSyncState(paths.state, state);
      await rm(paths.incoming, { recursive: true, force: true });
      // No log line here: the caller prints the outcome once (reportSyncOutcome).
      return { outcome, detail, state, files, snapshot };
    };
    const fail = (reason: string, files: FileOutcome[] = []) => {
      state.lastFailure = { at: now().toISOString(), reason };
      return finish('failed', reason, files, null);
    };

    // Download and verify every file; collect every failure, so one run reports all that is wrong.
    const limit = pLimit(o.concurrency);
    const settled = await Promise.allSettled(o.files.map((name) => limit(() => fetchOne(name, state.files[name], o, paths, log))));
    const failures = settled.flatMap((s, i) => (s.status === 'rejected' ? [`${o.files[i]}: ${reasonOf(s.reason, o.files[i] ?? '')}`] : []));
    const fetched = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const outcomes = fetched.map(({ entry: _e, incoming: _i, maxEntryBytes: _m, ...f }) => f);
    if (failures.length > 0) return await fail(failures.join('; '), outcomes);
    const verifiedAt = now().toISOString();

    // Promote the new files, then decide whether the served snapshot already matches the sources.
    await mkdir(paths.sources, { recursive: true });
    for (const f of fetched) if (f.incoming) await rename(f.incoming, join(paths.sources, f.name));
    const sources = o.files.map((name) => join(paths.sources, name));
    const edges = await syncEdges(o, sources, log);
    const revision = await revisionOf(sources);
    const served = await servedRevision(o.out);
    const edgesChanged = (await servedEdgeSignature(o.out)) !== (await edgeSignature(edges.folders));
    const changed = fetched.filter((f) => f.changed).map((f) => f.name);
    const notModified = fetched.filter((f) => f.status === 'not-modified').length;
    const newFiles = Object.fromEntries(fetched.map((f) => [f.name, f.entry]));

    // The revision covers every byte of every source, so an equal one means the snapshot already is these sources.
    if (!o.force && served === revision && !edgesChanged) {
      state.files = newFiles;
      state.lastSuccessfulSyncAt = verifiedAt;
      state.lastFailure = null;
      const detail = `All ${fetched.length} files are unchanged at the origin (${notModified} not modified, ${fetched.length - notModified} downloaded with the same bytes); the snapshot was not rebuilt.${edges.detail ? ` ${edges.detail}` : ''}`;
      return await finish('unchanged', detail, outcomes, null);
    }

    let built: { dir: string; snapshotId: string };
    try {
      const why = changed.length ? `changed: ${changed.join(', ')}` : served === null ? 'no snapshot yet' : served !== revision ? 'the snapshot does not match the sources' : 'the predicate edges changed';
      log(`building from ${sources.length} files and ${edges.folders.length} edge folders (${why})`);
      const build = o.build ?? runBuild;
      // Every entry the build reads passed its file's limit in the check above; the build keeps to the largest.
      const maxEntryBytes = Math.max(...fetched.map((f) => f.maxEntryBytes));
      const result = await build({ sources, edges: edges.folders, out: o.out, lastSuccessfulSyncAt: verifiedAt, maxEntryBytes, pagefind: o.pagefind });
      built = { dir: result.dir, snapshotId: result.manifest.snapshotId };
    } catch (err) {
      // state.files keeps the last good validators, so the next run downloads these files again and retries.
      return await fail(`the build failed: ${(err as Error).message}`, outcomes);
    }
    state.files = newFiles;
    state.lastSuccessfulSyncAt = verifiedAt;
    state.lastFailure = null;
    const what = changed.length ? `${changed.length} changed file${changed.length === 1 ? '' : 's'} (${changed.join(', ')})` : 'no changed file';
    return await finish('built', `Downloaded ${what}, ${fetched.length - changed.length} unchanged; published snapshot ${built.snapshotId}.${edges.detail ? ` ${edges.detail}` : ''}`, outcomes, built);
  } finally {
    await release();
  }
}

async function fetchOne(
  name: string,
  previous: SyncFileState | undefined,
  o: SyncOptions,
  paths: { sources: string; incoming: string },
  log: (line: string) => void,
): Promise<Fetched> {
  const local = join(paths.sources, name);
  // Ask conditionally only when the file on disk is the one the validators describe.
  const localSha256 = previous ? await fileSha256(local).catch(() => null) : null;
  const usable = previous && localSha256 === previous.sha256 ? previous : undefined;
  const headers: Record<string, string> = {};
  if (usable?.etag) headers['if-none-match'] = usable.etag;
  if (usable?.lastModified) headers['if-modified-since'] = usable.lastModified;
  const limits = limitsFor(o, previous);

  const url = new URL(name, o.baseUrl).href;
  await mkdir(paths.incoming, { recursive: true });
  const incoming = join(paths.incoming, name);
  let res: HttpResult;
  try {
    // Streamed to disk as it comes, and cut off at the limit: an origin cannot make the sync hold a file in memory.
    res = await getWithRetry(url, headers, { ...o, onRetry: ({ attempt, delayMs, reason }) => log(`${name}: ${reason}; retry ${attempt} of ${o.retries} in ${delayMs} ms`) }, {
      file: incoming,
      limit: limits.download,
    });
  } catch (err) {
    await rm(incoming, { force: true });
    throw new Error(`could not be downloaded from ${url}: ${(err as Error).message}`, { cause: err });
  }
  if (res.status === 304) {
    if (!usable) throw new Error(`${url} answered 304 Not Modified to a request that was not conditional`);
    return {
      name,
      status: 'not-modified',
      changed: false,
      bytes: usable.bytes,
      rows: usable.rows,
      incoming: null,
      maxEntryBytes: limits.entry.bytes,
      entry: { ...usable, etag: res.headers.get('etag') ?? usable.etag, lastModified: res.headers.get('last-modified') ?? usable.lastModified },
    };
  }
  const verified = await validateDownload(name, incoming, previous, o.minRowRatio, limits.entry.bytes, limits.entry.name);
  const entry: SyncFileState = {
    etag: res.headers.get('etag'),
    lastModified: res.headers.get('last-modified'),
    bytes: res.bytes,
    sha256: res.sha256,
    rows: verified.rows,
    entryBytes: verified.entryBytes,
  };
  log(`${name}: ${res.bytes.toLocaleString('en-US')} bytes, ${verified.rows.toLocaleString('en-US')} rows`);
  return { name, status: 'downloaded', changed: res.sha256 !== previous?.sha256, bytes: entry.bytes, rows: entry.rows, incoming, maxEntryBytes: limits.entry.bytes, entry };
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The build's sourceRevision for these files: a sha256 over their bytes in source order. */
async function revisionOf(files: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const f of files) for await (const chunk of createReadStream(f)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest('hex')}`;
}

async function servedRevision(out: string): Promise<string | null> {
  const dir = await activeSnapshotDir(out);
  if (!dir) return null;
  try {
    return Manifest.parse(JSON.parse(await readFile(join(dir, LAYOUT.manifest), 'utf8'))).sourceRevision;
  } catch {
    return null;
  }
}

function reasonOf(err: unknown, name: string): string {
  const message = err instanceof Error ? err.message : String(err);
  // Validation messages already start with the file's name.
  return message.startsWith(`${name}: `) ? message.slice(name.length + 2) : message;
}

/** The closing lines of a sync on stdout, and exit code 1 when it failed: one report for `sync` and `build --fetch`. */
export function reportSyncOutcome(result: SyncResult): void {
  console.log(`sync ${result.outcome}: ${result.detail}`);
  if (result.outcome === 'failed') {
    console.log('the published snapshot, if any, was left as it was');
    process.exitCode = 1;
  }
}
