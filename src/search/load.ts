import { SEARCH_INDEX_PATH } from '../contract/search-index.ts';
import { decodeSearchIndex, SearchIndexFormatError } from './codec.ts';
import { openSearchIndex, type SearchIndex } from './model.ts';

/** Reads one file of the snapshot by its path relative to the snapshot's root. */
export type ReadSnapshotFile = (relPath: string) => Promise<Uint8Array>;

/** Reads the header and every part of the search index through `read`, then decodes and opens it. */
export async function loadSearchIndex(read: ReadSnapshotFile): Promise<SearchIndex> {
  const text = new TextDecoder().decode(await read(SEARCH_INDEX_PATH));
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    throw new SearchIndexFormatError(`${SEARCH_INDEX_PATH} is not JSON`);
  }
  const paths = isHeaderWithParts(header) ? header.parts.map((p) => p.path) : [];
  const parts = await Promise.all(paths.map((p) => read(p)));
  return openSearchIndex(decodeSearchIndex(header, parts));
}

function isHeaderWithParts(value: unknown): value is { parts: { path: string }[] } {
  if (typeof value !== 'object' || value === null || !('parts' in value) || !Array.isArray(value.parts)) return false;
  return value.parts.every((p: unknown) => typeof p === 'object' && p !== null && 'path' in p && typeof p.path === 'string' && /^search\/[\w.-]+$/.test(p.path));
}
