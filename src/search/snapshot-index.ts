import { SEARCH_INDEX_PATH, type SearchSectionName } from '../contract/search-index.ts';
import { UNREADABLE, type Snapshot } from '../snapshot/snapshot.ts';
import { toHex } from '../snapshot/storage.ts';
import { SearchIndexFormatError } from './codec.ts';
import { LazySearchIndex, OlderSearchIndex, type BlockSource } from './load.ts';
import { PredicatesNotIndexed, type SearchIndex } from './model.ts';

/**
 * A snapshot's search index, read from its files by 64 KiB blocks (load.ts) a section at a time as requests need
 * them, opened once and kept for the snapshot's life: the one way the server's operations and the openFDA endpoints
 * reach the index of the snapshot they answer from.
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

