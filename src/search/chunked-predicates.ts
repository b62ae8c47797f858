import type { SearchChunks } from '../contract/search-chunks.ts';
import { lineageCode } from '../contract/lineage.ts';
import { isPredicateSection, type SearchSectionName } from '../contract/search-index.ts';
import { partitionPoint } from '../utils/bisect.ts';
import { valueOf, type Decoded } from './bundle.ts';
import { ChunkFormatError } from './chunk-directory.ts';
import type { ParsedQuery } from './grammar.ts';
import { markPredicatesAbsent, PredicatesNotIndexed, setSection, type SearchIndex } from './model.ts';

/*
 * The predicate sections of the chunked index (src/contract/search-chunks.ts, `predicates`): which files a request
 * reads, and the sections a view over what is loaded holds. A `predicate:` term reads the chunk whose code range holds
 * its device; the facet reads the whole list of devices and each document's; `kind:` reads one byte per document.
 */

type Bundle = (path: string) => Map<string, Decoded> | undefined;

/** Every file of the predicate part (a file let go of makes the view again). */
export function predicateFilePaths(dir: SearchChunks): string[] {
  const p = dir.predicates;
  return p ? [p.codes.path, p.docPreds.path, p.docEdgeKinds.path, ...p.chunks.map((c) => c.file.path)] : [];
}

/**
 * The files a request reads for the predicate sections it needs (`sections`, from src/search/needs.ts). Throws
 * PredicatesNotIndexed when it needs some and the directory was written before predicates were indexed.
 */
export function predicatePaths(dir: SearchChunks, parsed: ParsedQuery, sections: ReadonlySet<SearchSectionName>): string[] {
  if (![...sections].some(isPredicateSection)) return [];
  const p = dir.predicates;
  if (!p) throw new PredicatesNotIndexed();
  const out: string[] = [];
  if (sections.has('docPreds')) out.push(p.codes.path, p.docPreds.path);
  if (sections.has('docEdgeKinds')) out.push(p.docEdgeKinds.path);
  for (const clause of parsed.clauses) {
    for (const t of clause) {
      if (t.kind !== 'field' || t.qualifier.field !== 'predicate') continue;
      const code = lineageCode(t.qualifier.number);
      const c = partitionPoint(0, p.chunks.length, (i) => p.chunks[i]!.last < code);
      if (c < p.chunks.length && p.chunks[c]!.first <= code) out.push(p.chunks[c]!.file.path);
    }
  }
  return out;
}

/**
 * Sets the predicate sections a view can hold from the loaded files. Device ids are those of the whole index: a
 * device of a chunk not loaded stands as its chunk's first code, which keeps the list ascending, and has no rows; a
 * request loads the chunk of every device it names (and a chunk's first code is in no other chunk).
 */
export function setPredicateSections(ix: SearchIndex, dir: SearchChunks, bundle: Bundle): void {
  const p = dir.predicates;
  if (!p) {
    markPredicatesAbsent(ix);
    return;
  }
  const whole = bundle(p.codes.path);
  const loaded = p.chunks.map((c) => bundle(c.file.path));
  // Made on first read (a request with a predicate: term or the facet), from what is loaded then.
  let made: { codes: Uint32Array; offsets: Uint32Array; docs: Uint32Array; kinds: Uint8Array } | null = null;
  const rows = () => {
    if (made) return made;
    const codes = whole ? valueOf(whole, 'codes', 'u32') : new Uint32Array(p.count);
    if (codes.length !== p.count) throw new ChunkFormatError(`${p.codes.path}: not one code per device`);
    const offsets = new Uint32Array(p.count + 1);
    const docs: Uint32Array[] = [];
    const kinds: Uint8Array[] = [];
    let at = 0;
    for (const [i, c] of p.chunks.entries()) {
      const b = loaded[i];
      if (!b) {
        if (!whole) codes.fill(c.first, c.from, c.from + c.count);
        offsets.fill(at, c.from + 1, c.from + c.count + 1);
        continue;
      }
      const own = valueOf(b, 'codes', 'u32');
      const r = valueOf(b, 'docs', 'rows');
      const k = valueOf(b, 'kinds', 'u8');
      if (own.length !== c.count || r.offsets.length !== c.count + 1 || k.length !== r.values.length) throw new ChunkFormatError(`${c.file.path}: not the chunk the directory names`);
      if (!whole) codes.set(own, c.from);
      for (let j = 0; j < c.count; j++) offsets[c.from + j + 1] = at + r.offsets[j + 1]!;
      at += r.values.length;
      docs.push(r.values);
      kinds.push(k);
    }
    return (made = { codes, offsets, docs: join(docs, new Uint32Array(at)), kinds: join(kinds, new Uint8Array(at)) });
  };
  Object.defineProperty(ix, 'predCodes', { get: () => rows().codes });
  Object.defineProperty(ix, 'predDocOffsets', { get: () => rows().offsets });
  Object.defineProperty(ix, 'predDocs', { get: () => rows().docs });
  Object.defineProperty(ix, 'predDocKinds', { get: () => rows().kinds });
  const forward = bundle(p.docPreds.path);
  if (forward) {
    const rows = valueOf(forward, 'rows', 'rows');
    const k = valueOf(forward, 'kinds', 'u8');
    if (rows.offsets.length !== dir.counts.docs + 1 || k.length !== rows.values.length) throw new ChunkFormatError(`${p.docPreds.path}: not one row per document`);
    setSection(ix, 'docPredOffsets', rows.offsets);
    setSection(ix, 'docPreds', rows.values);
    setSection(ix, 'docPredKinds', k);
  }
  const edgeKinds = bundle(p.docEdgeKinds.path);
  if (edgeKinds) {
    const v = valueOf(edgeKinds, 'values', 'u8');
    if (v.length !== dir.counts.docs) throw new ChunkFormatError(`${p.docEdgeKinds.path}: not one value per document`);
    setSection(ix, 'docEdgeKinds', v);
  }
}

function join<T extends Uint32Array | Uint8Array>(pieces: readonly T[], out: T): T {
  if (pieces.length === 1) return pieces[0]!;
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}
