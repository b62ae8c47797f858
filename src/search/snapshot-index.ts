import { CHUNK_PATH_PATTERN, SEARCH_CHUNKS_PATH, SearchChunks } from '../contract/search-chunks.ts';
import { SEARCH_INDEX_PATH, type SearchSectionName } from '../contract/search-index.ts';
import { UNREADABLE, type Snapshot } from '../snapshot/snapshot.ts';
import { toHex } from '../snapshot/storage.ts';
import { BundleFormatError } from './bundle.ts';
import type { ChunkCache } from './chunk-cache.ts';
import { ChunkFormatError } from './chunk-directory.ts';
import { sectionFiles, type SectionWords } from './chunk-sections.ts';
import { ChunkedIndex } from './chunked.ts';
import { SearchIndexFormatError } from './codec.ts';
import { LazySearchIndex, OlderSearchIndex, type BlockSource } from './load.ts';
import { PredicatesNotIndexed, type SearchIndex } from './model.ts';

/**
 * A snapshot's search index, read from its files by 64 KiB blocks (load.ts) a section at a time as requests need
 * them, opened once and kept for the snapshot's life: the one way the server's operations and the openFDA endpoints
 * reach the index of the snapshot they answer from. A snapshot opened with `searchFromChunks` (a Worker's) is read
 * through its chunked index instead (src/search/chunked.ts): only the files a request needs, in a cache bounded by
 * bytes.
 */

type Opened = { lazy: LazySearchIndex } | { unavailable: string };
export type Loaded = { index: SearchIndex } | { unavailable: string };

/** Why a snapshot whose index (or chunked index) cannot be read has no search. */
export const DAMAGED = "This snapshot's search index cannot be read; every other operation is available.";
const OLDER = "This snapshot's search index is of an older format; build the snapshot again with npm run build. Every other operation is available.";

/** Each snapshot's search index (or why it has none), opened once and kept for the snapshot's life. */
const indexes = new WeakMap<Snapshot, Promise<Opened>>();

/** The snapshot's files as the lazy index reads them: whole checked files, ranges of parts, the storage's hash. */
function blockSource(snapshot: Snapshot): BlockSource {
  return {
    readFile: (path) => snapshot.readFile(path),
    readRange: (path, offset, length) => snapshot.storage.readRange(path, offset, length).catch(() => snapshot.reportCorrupt(path, UNREADABLE)),
    sha256: (bytes) => (snapshot.storage.sha256Async ? snapshot.storage.sha256Async(bytes) : snapshot.storage.sha256(bytes)),
    // Reported as the whole part against the manifest, as every damaged file is (the log line names its sha256 now).
    corrupt: async (path) => {
      const bytes = await snapshot.storage.read(path).catch(() => null);
      const digest = bytes === null ? null : await (snapshot.storage.sha256Async ? snapshot.storage.sha256Async(bytes) : snapshot.storage.sha256(bytes));
      return snapshot.reportCorrupt(path, digest === null ? UNREADABLE : toHex(digest));
    },
  };
}

function openIndex(snapshot: Snapshot): Promise<Opened> {
  const known = indexes.get(snapshot);
  if (known) return known;
  const opening = (async (): Promise<Opened> => {
    if (!snapshot.fileEntry(SEARCH_INDEX_PATH)) {
      return { unavailable: 'This snapshot was built without a search index; every other operation is available.' };
    }
    try {
      return { lazy: await LazySearchIndex.open(blockSource(snapshot)) };
    } catch (err) {
      if (err instanceof OlderSearchIndex) return { unavailable: OLDER };
      if (err instanceof SearchIndexFormatError) return { unavailable: DAMAGED };
      throw err;
    }
  })();
  indexes.set(snapshot, opening);
  opening.catch(() => {
    if (indexes.get(snapshot) === opening) indexes.delete(snapshot);
  });
  return opening;
}

/**
 * The snapshot's search index with `sections` loaded (every section when not given), each read on first need and
 * kept for the snapshot's life. A snapshot without an index, or with a damaged header or section, answers 503 at
 * once and keeps doing so (it will not get better); a read error or a block that does not match its digest is not
 * remembered, and the next request reads again.
 */
export async function searchIndexOf(snapshot: Snapshot, sections?: Iterable<SearchSectionName>): Promise<Loaded> {
  const opened = await openIndex(snapshot);
  if ('unavailable' in opened) return opened;
  try {
    return { index: await (sections ? opened.lazy.ensure(sections) : opened.lazy.ensureAll()) };
  } catch (err) {
    if (err instanceof SearchIndexFormatError) return { unavailable: DAMAGED };
    if (err instanceof PredicatesNotIndexed) return { unavailable: err.message };
    throw err;
  }
}

/** Bytes of the snapshot's index sections loaded so far (for measurements). */
export async function searchIndexBytes(snapshot: Snapshot): Promise<number> {
  const opened = await openIndex(snapshot);
  return 'lazy' in opened ? opened.lazy.loadedBytes : 0;
}


type Chunked = { chunked: ChunkedIndex } | { unavailable: string };

/** The snapshots whose searches read the chunked index (a Worker's), each opened once. */
const chunkedIndexes = new WeakMap<Snapshot, Promise<Chunked>>();

/** A file of the chunked index, read as stored, checked against its name and the manifest, and inflated. */
function chunkReader(snapshot: Snapshot): (path: string) => Promise<Uint8Array> {
  const storage = snapshot.storage;
  return async (path) => {
    const entry = snapshot.fileEntry(path);
    const named = CHUNK_PATH_PATTERN.exec(path)?.[1];
    if (!entry || !named) throw new ChunkFormatError(`${path} is not a file of this snapshot's chunked index`);
    const bytes = await storage.read(path);
    const digest = toHex(await (storage.sha256Async ? storage.sha256Async(bytes) : storage.sha256(bytes)));
    if (!digest.startsWith(named) || digest !== entry.sha256) snapshot.reportCorrupt(path, digest);
    return gunzip(bytes);
  };
}

/**
 * gzip bytes inflated with the platform's DecompressionStream (native on Node and in Workers), fed the bytes as they
 * are: a Blob would copy them first, and in a Worker that copy stays in the process's memory until the Blob is
 * collected (the columns a first search reads are megabytes).
 */
async function gunzip(bytes: Uint8Array): Promise<Uint8Array> {
  const source = new ReadableStream<BufferSource>({
    start: (controller) => {
      controller.enqueue(bytes as Uint8Array<ArrayBuffer>);
      controller.close();
    },
  });
  const stream = source.pipeThrough(new DecompressionStream('gzip'));
  try {
    return new Uint8Array(await new Response(stream).arrayBuffer());
  } catch {
    throw new ChunkFormatError('a file of the chunked index is not gzip');
  }
}

/**
 * Has this snapshot's index read through its chunked index (search/chunks.json and the files it names) through
 * `cache`, fetching only the files a request needs, rather than the whole index by sections: for a host whose memory
 * is small and whose processes start often (a Worker). Reads the directory now. A snapshot without a chunked index
 * keeps the whole index.
 */
export async function searchFromChunks(snapshot: Snapshot, cache: ChunkCache): Promise<void> {
  if (!snapshot.fileEntry(SEARCH_CHUNKS_PATH) || chunkedIndexes.has(snapshot)) return;
  const opening = (async (): Promise<Chunked> => {
    let directory: SearchChunks;
    try {
      const parsed = SearchChunks.safeParse(JSON.parse(new TextDecoder().decode(await snapshot.readFile(SEARCH_CHUNKS_PATH))));
      if (!parsed.success) return { unavailable: DAMAGED };
      directory = parsed.data;
    } catch (err) {
      if (err instanceof SyntaxError) return { unavailable: DAMAGED };
      throw err;
    }
    return { chunked: new ChunkedIndex(directory, chunkReader(snapshot), cache) };
  })();
  chunkedIndexes.set(snapshot, opening);
  opening.catch(() => {
    if (chunkedIndexes.get(snapshot) === opening) chunkedIndexes.delete(snapshot);
  });
  await opening;
}

/** The chunked index a snapshot is read through, why it has none it can read, or null (it reads the whole index). */
export async function chunkedOf(snapshot: Snapshot): Promise<Chunked | null> {
  return (await chunkedIndexes.get(snapshot)) ?? null;
}

/** A chunked index's file that could not be read after a request began (a damaged file), with why. */
export class ChunkedUnavailable extends Error {
  override name = 'ChunkedUnavailable';
}

/** Whether the snapshot is read through a chunked index whose directory is sound. */
export async function readsChunks(snapshot: Snapshot): Promise<boolean> {
  const opened = await chunkedOf(snapshot);
  return opened !== null && 'chunked' in opened;
}

/** Why a chunked index's failure means no search: a damaged file, or predicates it lacks; null for any other error. */
export function chunkedUnavailable(err: unknown): string | null {
  if (err instanceof ChunkFormatError || err instanceof BundleFormatError) return DAMAGED;
  if (err instanceof PredicatesNotIndexed) return err.message;
  return null;
}

/**
 * An index a request reads, the call that reads more of it for the same request (`more`: the index again, with those
 * words' files too), and the call that lets go of its files once it is answered.
 */
export type Held = { index: SearchIndex; more: (words: SectionWords) => Promise<SearchIndex>; release: () => void };

/**
 * The snapshot's index with `sections` readable, for one request that reads them by sections rather than through the
 * search engine's own request (openFDA's endpoints): over the whole index, those sections (kept for the snapshot's
 * life); over a chunked index, the files that hold them, with the term chunks of `words` only (src/search/chunk-sections.ts),
 * held until `release` and then left to the cache's budget. The arrays stay valid after `release`.
 */
export async function sectionIndexOf(snapshot: Snapshot, sections: ReadonlySet<SearchSectionName>, words: SectionWords): Promise<Held | { unavailable: string }> {
  const opened = await chunkedOf(snapshot);
  if (!opened) {
    const loaded = await searchIndexOf(snapshot, sections);
    return 'unavailable' in loaded ? loaded : { index: loaded.index, more: async () => loaded.index, release: () => {} };
  }
  if ('unavailable' in opened) return opened;
  const { chunked } = opened;
  const lease = chunked.lease();
  try {
    await chunked.load(sectionFiles(chunked.directory, sections, words), lease);
    const more = async (next: SectionWords) => {
      try {
        await chunked.load(sectionFiles(chunked.directory, [], next), lease);
      } catch (err) {
        const why = chunkedUnavailable(err);
        throw why === null ? err : new ChunkedUnavailable(why);
      }
      return chunked.indexFor(lease);
    };
    return { index: chunked.indexFor(lease), more, release: () => lease.release() };
  } catch (err) {
    lease.release();
    const why = chunkedUnavailable(err);
    if (why !== null) return { unavailable: why };
    throw err;
  }
}
