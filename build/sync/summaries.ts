import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LINEAGE_INDEX_PATH, LineageIndex } from '../../src/contract/index.ts';
import { clearancesIn, clearancesToFetch } from '../predicates/devices.ts';
import { fetchSummaries, summaryPaths } from '../predicates/fetch.ts';
import { EDGE_SOURCE } from '../predicates/run.ts';
import { EDGE_FILE, EDGE_SOURCE_FILE, findEdgeFolders, isEdgeFolder } from '../lineage/read.ts';
import { activeSnapshotDir } from '../publish/publish.ts';
import type { SyncOptions } from './config.ts';

export type SyncEdges = {
  /** The edge folders the build reads. */
  folders: string[];
  /** One sentence on the summaries fetched, or why none were; null when the sync fetches none. */
  detail: string | null;
};

const sourceOf = async (folder: string): Promise<string | null> => {
  try {
    return (JSON.parse(await readFile(join(folder, EDGE_SOURCE_FILE), 'utf8')) as { source?: unknown }).source as string;
  } catch {
    return null;
  }
};

/**
 * The nightly step between the verified sources and the build: fetch the 510(k) summaries (and, for laboratory
 * devices, FDA's decision summaries) of the clearances decided lately that it has not fetched, read them, and write
 * the sync's edge folder (`<dir>/predicates/summary`), where the bundled reading of summaries stands for the devices
 * it has not read. A fetch that cannot run (another holds its lock: a backfill) leaves the last edge folder as it
 * was, and the build goes on with it.
 */
export async function syncEdges(o: SyncOptions, sources: readonly string[], log: (line: string) => void): Promise<SyncEdges> {
  const folders = (await Promise.all(o.edges.map(findEdgeFolders))).flat();
  if (!o.summaries) return { folders, detail: null };
  const sourceIds = await Promise.all(folders.map(sourceOf));
  const base = folders.filter((_, i) => sourceIds[i] === EDGE_SOURCE.source);
  const rest = folders.filter((_, i) => sourceIds[i] !== EDGE_SOURCE.source);
  if (base.length > 1) throw new Error(`edge folders ${base.join(', ')} all give source "${EDGE_SOURCE.source}"; the sync reads summaries into one`);
  const own = summaryPaths(o.dir).edges;
  const s = o.summaries;
  let detail: string;
  try {
    const picked = clearancesToFetch(await clearancesIn(sources), { days: s.days });
    const run = await fetchSummaries({
      dir: o.dir,
      ...picked,
      ...(base[0] !== undefined && { base: base[0] }),
      baseUrl: s.baseUrl,
      intervalMs: s.intervalMs,
      limit: s.limit,
      maxBytes: s.maxBytes,
      timeoutMs: o.timeoutMs,
      retries: o.retries,
      baseDelayMs: o.baseDelayMs,
      maxDelayMs: o.maxDelayMs,
      ...(o.fetch && { fetch: o.fetch }),
      ...(o.sleep && { sleep: o.sleep }),
      ...(o.now && { now: o.now }),
      log: (line) => log(`summaries: ${line}`),
    });
    detail = `Summaries of ${picked.devices.length} recent clearances: ${run.fetched} fetched, ${run.missing} missing at FDA, ${run.failed} failed, ${run.skipped} kept before; ${run.edges} predicate edges for ${run.devices} devices.`;
  } catch (err) {
    detail = `Summaries not fetched: ${(err as Error).message}.`;
  }
  log(detail);
  if (await isEdgeFolder(own)) return { folders: [...rest, own], detail };
  return { folders, detail };
}

/** The edge inputs as the snapshot's lineage header records them: each source's id and predicates.csv's sha256. */
export async function edgeSignature(folders: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    folders.map(async (f) => `${await sourceOf(f)}:${createHash('sha256').update(await readFile(join(f, EDGE_FILE))).digest('hex')}`),
  );
  return parts.sort().join(',');
}

/** The same for the served snapshot; null when there is none or it has no lineage header. */
export async function servedEdgeSignature(out: string): Promise<string | null> {
  const dir = await activeSnapshotDir(out);
  if (!dir) return null;
  try {
    const index = LineageIndex.parse(JSON.parse(await readFile(join(dir, LINEAGE_INDEX_PATH), 'utf8')));
    return index.sources.map((s) => `${s.source}:${s.sha256}`).sort().join(',');
  } catch {
    return null;
  }
}
