import { BLOCK_DIGEST_BYTES, isPredicateSection, SEARCH_BLOCKS_PATH, SEARCH_INDEX_PATH, SEARCH_INDEX_VERSION, SEARCH_SECTION_NAMES, type SearchIndexHeader, type SearchSectionName } from '../contract/search-index.ts';
import {
  blockCount,
  checkSection,
  decodeSearchIndex,
  decodeSection,
  hasPredicateSections,
  parseSearchHeader,
  SearchIndexFormatError,
  SECTION_REQUIRES,
  sectionOf,
  type SearchIndexData,
} from './codec.ts';
import { emptySearchIndex, hasSection, markPredicatesAbsent, openSearchIndex, PredicatesNotIndexed, setSection, type SearchIndex } from './model.ts';

/** Reads one file of the snapshot by its path relative to the snapshot's root. */
export type ReadSnapshotFile = (relPath: string) => Promise<Uint8Array>;

function parseHeaderBytes(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new SearchIndexFormatError(`${SEARCH_INDEX_PATH} is not JSON`);
  }
}

/** Reads the header and every part of the search index through `read`, then decodes and opens it whole. */
export async function loadSearchIndex(read: ReadSnapshotFile): Promise<SearchIndex> {
  const header: unknown = parseHeaderBytes(await read(SEARCH_INDEX_PATH));
  const paths = isHeaderWithParts(header) ? header.parts.map((p) => p.path) : [];
  const parts = await Promise.all(paths.map((p) => read(p)));
  return openSearchIndex(decodeSearchIndex(header, parts));
}

function isHeaderWithParts(value: unknown): value is { parts: { path: string }[] } {
  if (typeof value !== 'object' || value === null || !('parts' in value) || !Array.isArray(value.parts)) return false;
  return value.parts.every((p: unknown) => typeof p === 'object' && p !== null && 'path' in p && typeof p.path === 'string' && /^search\/[\w.-]+$/.test(p.path));
}

/** An index written by an older build, which only whole loads could read: the snapshot must be built again. */
export class OlderSearchIndex extends SearchIndexFormatError {
  constructor(readonly version: number) {
    super(`search index version ${version} is older than ${SEARCH_INDEX_VERSION}, which reads by blocks; build the snapshot again`);
  }
}

/** Where a lazily loaded index reads from: whole checked files, unchecked byte ranges, and a hash for blocks. */
export type BlockSource = {
  /** A whole file, already checked against the manifest (the header and the block table). */
  readFile(path: string): Promise<Uint8Array>;
  /** `length` bytes of a part from `offset`, unchecked; rejects (or throws a corrupt-file error) when unreadable. */
  readRange(path: string, offset: number, length: number): Promise<Uint8Array>;
  /** SHA-256, synchronous or not (Web Crypto's digest is asynchronous and much faster than a script's). */
  sha256(bytes: Uint8Array): Uint8Array | Promise<Uint8Array>;
  /** A part's bytes did not match its block table: reports the part (once) and rejects. */
  corrupt(path: string): Promise<never>;
};

/**
 * The search index read by sections, on demand: `open` reads the header and the block table (both checked whole);
 * `ensure` reads the sections a request needs, as byte ranges of whole blocks, each block checked against its digest
 * before any of its bytes is used. A section stays loaded for the life of this object (the snapshot's). A section
 * that fails its checks is remembered as failed; a read error is not, so a later request reads again.
 */
export class LazySearchIndex {
  readonly index: SearchIndex;
  readonly header: SearchIndexHeader;
  private readonly table: Uint8Array;
  private readonly source: BlockSource;
  private readonly loads = new Map<SearchSectionName, Promise<void>>();

  private constructor(header: SearchIndexHeader, table: Uint8Array, source: BlockSource) {
    this.header = header;
    this.table = table;
    this.source = source;
    this.index = emptySearchIndex(header.counts.docs);
    if (!hasPredicateSections(header)) markPredicatesAbsent(this.index);
  }

  static async open(source: BlockSource): Promise<LazySearchIndex> {
    const value = parseHeaderBytes(await source.readFile(SEARCH_INDEX_PATH));
    const version = typeof value === 'object' && value !== null && 'version' in value ? value.version : undefined;
    if (typeof version === 'number' && version < SEARCH_INDEX_VERSION) throw new OlderSearchIndex(version);
    const header = parseSearchHeader(value);
    const table = await source.readFile(SEARCH_BLOCKS_PATH);
    if (table.byteLength !== blockCount(header) * BLOCK_DIGEST_BYTES) {
      throw new SearchIndexFormatError(`search index: ${SEARCH_BLOCKS_PATH} does not have one entry per block`);
    }
    return new LazySearchIndex(header, table, source);
  }

  /** Loads these sections (and what their checks need), then gives the index. */
  async ensure(names: Iterable<SearchSectionName>): Promise<SearchIndex> {
    await Promise.all([...new Set(names)].map((n) => this.load(n)));
    return this.index;
  }

  /** Every section (an operation that reads the index in ways not listed). */
  ensureAll(): Promise<SearchIndex> {
    return this.ensure(SEARCH_SECTION_NAMES.filter((n) => hasPredicateSections(this.header) || !isPredicateSection(n)));
  }

  /** Bytes of the sections loaded now (for measurements). */
  get loadedBytes(): number {
    return SEARCH_SECTION_NAMES.filter((n) => hasSection(this.index, n)).reduce((sum, n) => sum + sectionOf(this.header, n).bytes, 0);
  }

  private load(name: SearchSectionName): Promise<void> {
    const known = this.loads.get(name);
    if (known) return known;
    if (isPredicateSection(name) && !hasPredicateSections(this.header)) return Promise.reject(new PredicatesNotIndexed());
    const loading = (async () => {
      const requires = SECTION_REQUIRES[name] ?? [];
      await Promise.all(requires.map((r) => this.load(r)));
      const value = decodeSection(this.header, name, await this.readSection(name));
      const get = <K extends SearchSectionName>(n: K): SearchIndexData[K] => this.index[n];
      checkSection(this.header, name, value, get);
      setSection(this.index, name, value);
    })();
    this.loads.set(name, loading);
    loading.catch((err: unknown) => {
      if (!(err instanceof SearchIndexFormatError) && this.loads.get(name) === loading) this.loads.delete(name);
    });
    return loading;
  }

  /** The section's bytes, from the blocks that hold it, each checked. */
  private async readSection(name: SearchSectionName): Promise<Uint8Array> {
    const s = sectionOf(this.header, name);
    if (s.bytes === 0) return new Uint8Array(0);
    const { blockBytes, partBytes } = this.header;
    const first = Math.floor(s.offset / blockBytes);
    const end = Math.floor((s.offset + s.bytes - 1) / blockBytes) + 1;
    // Blocks never straddle parts (partBytes is a multiple of blockBytes): one range read per part the section touches.
    const pieces: Promise<Uint8Array>[] = [];
    for (let b = first; b < end; ) {
      const part = Math.floor((b * blockBytes) / partBytes);
      const partEnd = Math.min(end, ((part + 1) * partBytes) / blockBytes);
      pieces.push(this.readBlocks(part, b, partEnd));
      b = partEnd;
    }
    const read = await Promise.all(pieces);
    const from = s.offset - first * blockBytes;
    if (read.length === 1) {
      const piece = read[0]!;
      // Kept for the snapshot's life: a view into a much larger buffer (a storage that read more than asked) would
      // keep all of it alive, so the section is copied out of such a buffer.
      const view = piece.subarray(from, from + s.bytes);
      return piece.buffer.byteLength > piece.byteLength + 2 * blockBytes ? view.slice() : view;
    }
    const joined = new Uint8Array(read.reduce((n, r) => n + r.byteLength, 0));
    let at = 0;
    for (const r of read) {
      joined.set(r, at);
      at += r.byteLength;
    }
    return joined.subarray(from, from + s.bytes);
  }

  /** Blocks [from, to) of the blob, all in part `part`, read in one range and checked one by one. */
  private async readBlocks(part: number, from: number, to: number): Promise<Uint8Array> {
    const { blockBytes, partBytes, blobBytes } = this.header;
    const entry = this.header.parts[part];
    if (!entry) throw new SearchIndexFormatError(`search index: block ${from} lies past the last part`);
    const start = from * blockBytes - part * partBytes;
    const length = Math.min(to * blockBytes, blobBytes) - from * blockBytes;
    const bytes = await this.source.readRange(entry.path, start, length);
    if (bytes.byteLength !== length) return this.source.corrupt(entry.path);
    const digests = [];
    for (let b = from; b < to; b++) {
      const at = (b - from) * blockBytes;
      digests.push(this.source.sha256(bytes.subarray(at, Math.min(at + blockBytes, length))));
    }
    const done = await Promise.all(digests);
    for (const [i, digest] of done.entries()) {
      const at = (from + i) * BLOCK_DIGEST_BYTES;
      for (let j = 0; j < BLOCK_DIGEST_BYTES; j++) if (digest[j] !== this.table[at + j]) return this.source.corrupt(entry.path);
    }
    return bytes;
  }
}
