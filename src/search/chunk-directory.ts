import { CHUNK_FILES, CHUNK_PATH_PATTERN, SEARCH_CHUNKS_FORMAT, SEARCH_CHUNKS_VERSION, type SearchChunks } from '../contract/search-chunks.ts';
import { partitionPoint } from '../utils/bisect.ts';

/** The directory of the search index's parts (src/contract/search-chunks.ts): its check, and which word chunks a word reaches. */

/** The bundle bytes of a file of the directory (fetched, checked against its name, and inflated by the caller). */
export type ReadChunk = (path: string) => Promise<Uint8Array>;

export class ChunkFormatError extends Error {
  override name = 'ChunkFormatError';
}

/** Checks the directory's shape (the build validated it with its schema; a browser carries no schema library). */
export function parseChunkDirectory(value: unknown): SearchChunks {
  const d = value as SearchChunks;
  const fail = (what: string): never => {
    throw new ChunkFormatError(`search/chunks.json: ${what}`);
  };
  if (typeof d !== 'object' || d === null) fail('not an object');
  if (d.format !== SEARCH_CHUNKS_FORMAT) fail(`format is not ${SEARCH_CHUNKS_FORMAT}`);
  if (d.version !== SEARCH_CHUNKS_VERSION) fail(`version ${String(d.version)} is not ${SEARCH_CHUNKS_VERSION}`);
  const okRef = (r: unknown) => typeof r === 'object' && r !== null && CHUNK_PATH_PATTERN.test(String((r as { path?: unknown }).path));
  for (const f of CHUNK_FILES) if (!okRef(d.files?.[f])) fail(`files.${f} is not a chunk file`);
  if (!Array.isArray(d.termChunks) || !Array.isArray(d.codeChunks) || !Array.isArray(d.kBlocks)) fail('a chunk list is missing');
  let next = 0;
  for (const c of d.termChunks) {
    if (c.from !== next || !(c.count > 0) || !okRef(c.file) || typeof c.first !== 'string' || typeof c.last !== 'string') fail('term chunks do not cover the terms in order');
    next += c.count;
  }
  if (next !== d.counts?.terms) fail('term chunks do not cover the terms in order');
  for (const [list, of, total] of [[d.codeChunks, d.codeChunkOf, d.counts.codes]] as const) {
    if (!Array.isArray(of) || of.length !== total || !of.every((c) => Number.isInteger(c) && c >= 0 && c < list.length)) fail('id chunks do not cover the ids');
    if (list.reduce((n, c) => n + (okRef(c.file) ? c.count : NaN), 0) !== total) fail('id chunks do not cover the ids');
  }
  if (!(d.kBlockDocs > 0) || d.kBlocks.length !== Math.ceil(d.counts.docs / d.kBlockDocs) || !d.kBlocks.every(okRef)) fail('K number blocks do not cover the documents');
  checkPredicateDirectory(d, fail);
  if (d.words !== undefined) {
    let from = 0;
    if (typeof d.words !== 'object' || d.words === null || !Array.isArray(d.words.chunks)) fail('words is not a word list directory');
    for (const c of d.words.chunks) {
      if (c.from !== from || !(c.count > 0) || !okRef(c.file) || typeof c.first !== 'string' || typeof c.last !== 'string') fail('word chunks do not cover the terms in order');
      from += c.count;
    }
    if (from !== d.counts.terms) fail('word chunks do not cover the terms in order');
  }
  return d;
}

/** Checks the directory's `predicates` member, when it has one (a browser carries no schema library). */
function checkPredicateDirectory(dir: SearchChunks, fail: (what: string) => never): void {
  const p = dir.predicates;
  if (p === undefined) return;
  const ok = (r: unknown) => typeof r === 'object' && r !== null && CHUNK_PATH_PATTERN.test(String((r as { path?: unknown }).path));
  if (typeof p !== 'object' || p === null || !ok(p.codes) || !ok(p.docPreds) || !ok(p.docEdgeKinds) || !Array.isArray(p.chunks)) fail('predicates is not a predicate directory');
  let next = 0;
  let last = -1;
  for (const c of p.chunks) {
    if (c.from !== next || !(c.count > 0) || !ok(c.file) || !(c.first > last) || !(c.last >= c.first)) fail('predicate chunks do not cover the devices in order');
    next += c.count;
    last = c.last;
  }
  if (next !== p.count) fail('predicate chunks do not cover the devices in order');
}

/** The term chunks a word's prefix range can reach: those whose [first, last] meets the words starting with it. */
export function chunksOfPrefix(dir: SearchChunks, word: string): number[] {
  return runsOfPrefix(dir.termChunks, word);
}

/** Of runs of a sorted word list, those whose [first, last] meets the words starting with `word`. */
export function runsOfPrefix(chunks: readonly { first: string; last: string }[], word: string): number[] {
  const out: number[] = [];
  // Chunks are in term order: skip those that end before the word, take them until one starts past its prefix range.
  for (let i = partitionPoint(0, chunks.length, (c) => chunks[c]!.last < word); i < chunks.length; i++) {
    const first = chunks[i]!.first;
    if (first > word && !first.startsWith(word)) break;
    out.push(i);
  }
  return out;
}
