import type { ChunkFile, IdChunk, SearchChunks } from '../contract/search-chunks.ts';
import { isoOfDay, NO_APPLICANT, NO_CODE, type SearchSectionName } from '../contract/search-index.ts';
import { valueOf, type Decoded } from './bundle.ts';
import type { ApplicantColumn } from './codec.ts';
import type { ChunkCache } from './chunk-cache.ts';
import { ChunkFormatError } from './chunk-directory.ts';
import { invertRows, type Rows } from './csr.ts';
import { setPredicateSections } from './chunked-predicates.ts';
import { countKept } from './kept.ts';
import { deriveThrough, emptySearchIndex, markWithoutForward, SectionNotLoaded, setDerived, setDerivedLazily, setSection, type SearchIndex } from './model.ts';

/**
 * The files of a chunked index (src/search/chunked.ts) that the cache holds, read as one SearchIndex: every term id,
 * document id and column position is what it is in the whole index, and what is not loaded reads as empty (or, for
 * the code and applicant columns, in part: see chunked.ts).
 */
export class LoadedChunks {
  readonly directory: SearchChunks;
  private readonly cache: ChunkCache;
  /** The files this view reads: all the cache holds, or only those of one request (its lease). */
  private readonly reads: ((path: string) => boolean) | null;

  constructor(directory: SearchChunks, cache: ChunkCache, reads: ((path: string) => boolean) | null = null) {
    this.directory = directory;
    this.cache = cache;
    this.reads = reads;
  }

  has(path: string): boolean {
    return (this.reads === null || this.reads(path)) && this.cache.has(path);
  }

  bundle(path: string): Map<string, Decoded> | undefined {
    return this.has(path) ? this.cache.peek(path)?.bundle : undefined;
  }

  /** A value made once from a file and kept with it (let go of when the file is). */
  private derivedOf<T>(path: string, name: string, make: () => T, bytes: (value: T) => number): T {
    return this.cache.derive(path, name, make, bytes);
  }

  /**
   * A lookup derived from a whole column (documents by code, by applicant, by K number), made once and kept with the
   * column's file while the cache holds it: every view over the same files reads the same one.
   */
  private keepDerived(ix: SearchIndex, name: 'codeDocs' | 'applicantDocs' | 'byKNumber', file: ChunkFile): void {
    const path = this.directory.files[file].path;
    const bytes = (v: { byteLength: number } | Rows) => ('offsets' in v ? v.offsets.byteLength + v.values.byteLength : v.byteLength);
    deriveThrough(ix, name, (make) => (this.has(path) ? this.derivedOf(path, derivedKey(ix, name), make, bytes) : make()));
  }

  /**
   * The rows a word reads for the codes (applicants) its terms reach (`wordCodeDocs`, `wordApplicantDocs`), with the
   * whole column loaded: the whole table when it is made already, or when the loaded word chunks' rows come to an
   * eighth of it (made once and kept with the column, as `keepDerived`: a warm cache holds many words' chunks, and
   * gathering their rows again for every index made over them costs more than the table); else those rows gathered,
   * made on first read. A first word search reaches a few codes and applicants: it need not make a table of every
   * document (4 MB at a million).
   */
  private wordRows(ix: SearchIndex, name: 'wordCodeDocs' | 'wordApplicantDocs', whole: 'codeDocs' | 'applicantDocs', file: ChunkFile, madeLater?: (bytes: number) => void): void {
    const [idsName, chunks, ids] = whole === 'codeDocs' ? (['codeIds', this.directory.codeChunks, this.directory.counts.codes] as const) : (['applicantIds', [], this.directory.counts.applicants] as const);
    setDerivedLazily(ix, name, () => {
      if (this.cache.peek(this.directory.files[file].path)?.derived.has(derivedKey(ix, whole))) return ix[whole];
      let reached = 0;
      for (const c of this.directory.termChunks) {
        const bundle = this.bundle(c.file.path);
        if (bundle) reached += valueOf(bundle, whole, 'rows').values.length;
      }
      if (reached * WHOLE_TABLE_PART >= this.directory.counts.docs) return ix[whole];
      const rows = this.gathered(idsName, whole, chunks, ids);
      madeLater?.(rows.offsets.byteLength + rows.values.byteLength);
      return rows;
    });
  }

  /** A whole column, widened back to the engine's type, decoded once. */
  column(name: ChunkFile): Uint8Array | Uint16Array | Uint32Array {
    const path = this.directory.files[name].path;
    // A column stored in its own type is a view into the file's bytes, already counted with the file.
    const stored = () => Object.values(this.bundle(path)!.get('values') as Record<string, ArrayBufferView>)[0]?.buffer;
    return this.derivedOf(path, 'column', () => this.counted(path, this.widen(name, path)), (out) => (out.buffer === stored() ? 0 : out.byteLength));
  }

  /** `value`, with what the engine keeps made from it counted with the file (kept.ts). */
  private counted<T extends object>(path: string, value: T): T {
    this.cache.countWith(path, value);
    return value;
  }

  private widen(name: ChunkFile, path: string): Uint8Array | Uint16Array | Uint32Array {
    const bundle = this.bundle(path)!;
    const meta = valueOf(bundle, 'meta', 'json') as { type: 'u8' | 'u16' | 'u32'; none: number | null };
    const raw = bundle.get('values') as Record<string, Uint8Array | Uint16Array | Uint32Array>;
    const stored = raw.u8 ?? raw.u16 ?? raw.u32;
    if (!stored || stored.length !== this.directory.counts.docs) throw new ChunkFormatError(`${name} does not hold one value per document`);
    const storedNone = stored instanceof Uint8Array ? 0xff : stored instanceof Uint16Array ? 0xffff : 0xffffffff;
    let out: Uint8Array | Uint16Array | Uint32Array;
    const kind = stored instanceof Uint8Array ? 'u8' : stored instanceof Uint16Array ? 'u16' : 'u32';
    const type = name === 'docApplicant' ? (applicantsIn16Bits(this.directory) ? 'u16' : 'u32') : meta.type;
    const none = type !== meta.type ? 0xffff : meta.none;
    if (kind === type) out = stored;
    else {
      out = type === 'u16' ? new Uint16Array(stored.length) : new Uint32Array(stored.length);
      for (let i = 0; i < stored.length; i++) out[i] = meta.none !== null && stored[i] === storedNone ? none! : stored[i]!;
    }
    return out;
  }

  /**
   * The decision years (`years`) or dates (`days`) of every document, from their runs, each made once and kept with
   * the file: every search reads the years (the default facet, the year filter), few the dates (a date sort, filter or
   * facet), so the dates, twice the years' bytes, are made only when a request reads them. `bundle` is the file's, for a
   * read after the cache let go of it (the value is then made and not kept).
   */
  private decided<K extends 'years' | 'days'>(which: K, bundle: Map<string, Decoded>): K extends 'years' ? Uint16Array : Uint32Array {
    const path = this.directory.files.decided.path;
    const make = () => decidedOf(bundle, this.directory.counts.docs, which);
    if (!this.cache.peek(path)) return make() as never;
    return this.derivedOf(path, which, () => this.counted(path, make()), (a) => a.byteLength) as never;
  }

  /**
   * The index over what is loaded now, and the bytes it holds beyond the cached files (its word list and offsets, rows
   * copied together); `madeLater` is told the bytes of what it makes on first use (each document's words, a column
   * in part) and of what the engine keeps for the index or for an array made for it (kept.ts).
   */
  view(madeLater?: (bytes: number) => void): { index: SearchIndex; extraBytes: number } {
    const dir = this.directory;
    const files = dir.files;
    const n = dir.counts.docs;
    const ix = emptySearchIndex(n);
    if (madeLater) countKept(ix, madeLater);

    const dicts = this.bundle(files.dicts.path);
    if (dicts) {
      const lists = valueOf(dicts, 'lists', 'json') as Record<string, string[]>;
      for (const name of ['codes', 'panels', 'decisions', 'decisionNames', 'types', 'countries', 'states', 'classes'] as const) setSection(ix, name, lists[name]!);
      setSection(ix, 'codeClass', valueOf(dicts, 'codeClass', 'u8'));
    }
    const decided = this.bundle(files.decided.path);
    if (decided) {
      setSection(ix, 'docYear', this.decided('years', decided));
      let days: Uint32Array | null = null;
      Object.defineProperty(ix, 'docDecided', { get: () => (days ??= this.decided('days', decided)) });
    }

    // The word list: every term id stays what it is in the whole index. A term of a chunk not loaded stands as its
    // chunk's first word, which keeps the list sorted, and has no rows; a request loads every chunk its words reach.
    const terms: string[] = new Array<string>(dir.counts.terms);
    const docRows: Rows[] = [];
    const appRows: Rows[] = [];
    const codeRows: Rows[] = [];
    const docOffsets = new Uint32Array(dir.counts.terms + 1);
    const appOffsets = new Uint32Array(dir.counts.terms + 1);
    const codeOffsets = new Uint32Array(dir.counts.terms + 1);
    let docAt = 0;
    let appAt = 0;
    let codeAt = 0;
    for (const c of dir.termChunks) {
      const bundle = this.bundle(c.file.path);
      if (!bundle) {
        terms.fill(c.first, c.from, c.from + c.count);
        docOffsets.fill(docAt, c.from + 1, c.from + c.count + 1);
        appOffsets.fill(appAt, c.from + 1, c.from + c.count + 1);
        codeOffsets.fill(codeAt, c.from + 1, c.from + c.count + 1);
        continue;
      }
      const words = valueOf(bundle, 'terms', 'json') as string[];
      const d = valueOf(bundle, 'docs', 'rows');
      const a = valueOf(bundle, 'applicants', 'rows');
      const k = valueOf(bundle, 'codes', 'rows');
      if (words.length !== c.count || d.offsets.length !== c.count + 1) throw new ChunkFormatError(`${c.file.path}: not the chunk the directory names`);
      for (let i = 0; i < c.count; i++) {
        terms[c.from + i] = words[i]!;
        docOffsets[c.from + i + 1] = docAt + d.offsets[i + 1]!;
        appOffsets[c.from + i + 1] = appAt + a.offsets[i + 1]!;
        codeOffsets[c.from + i + 1] = codeAt + k.offsets[i + 1]!;
      }
      docAt += d.values.length;
      appAt += a.values.length;
      codeAt += k.values.length;
      docRows.push(d);
      appRows.push(a);
      codeRows.push(k);
    }
    const termDocs = concat(docRows.map((r) => r.values), docAt);
    if (docRows.length > 1 && madeLater) countKept(termDocs, madeLater);
    setSection(ix, 'terms', terms);
    setSection(ix, 'termDocOffsets', docOffsets);
    setSection(ix, 'termDocs', termDocs);
    setSection(ix, 'termApplicantOffsets', appOffsets);
    setSection(ix, 'termApplicants', concat(appRows.map((r) => r.values), appAt));
    setSection(ix, 'termCodeOffsets', codeOffsets);
    setSection(ix, 'termCodes', Uint16Array.from(concat(codeRows.map((r) => r.values), codeAt)));

    // Each document's words: the whole forward lists where they are read (phrases, with their positions; a count of
    // words, without), else those of the loaded words only (a word checks a document against its own term range,
    // which is loaded).
    if (this.has(files.docTerms.path)) {
      const rows = valueOf(this.bundle(files.docTerms.path)!, 'rows', 'rows');
      setSection(ix, 'docTermOffsets', rows.offsets);
      setSection(ix, 'docTermIds', rows.values);
      if (this.has(files.docSeq.path)) {
        const seq = this.bundle(files.docSeq.path)!;
        setSection(ix, 'docSeqOffsets', valueOf(seq, 'offsets', 'u32'));
        setSection(ix, 'docSeq', valueOf(seq, 'values', 'u8'));
      }
    } else {
      // No forward lists: the search engine checks a word document by document through its own postings (words.ts
      // termMarks). A reader by sections (openFDA's device_name) still reads `docTerms`: made on its first read, over
      // the loaded words only, a pass over every document.
      markWithoutForward(ix);
      let forward: Rows | null = null;
      Object.defineProperty(ix, 'docTerms', {
        get: () => {
          if (!forward) {
            forward = invertRows(docOffsets, termDocs, n);
            madeLater?.(forward.offsets.byteLength + forward.values.byteLength);
          }
          return forward;
        },
        configurable: true,
      });
    }

    for (const name of ['docPanel', 'docDecision', 'docType', 'docFlags', 'docCountry', 'docState', 'docReceived'] as const) {
      if (this.has(files[name].path)) setSection(ix, name, this.column(name) as never);
    }
    if (this.has(files.codeTypes.path)) setSection(ix, 'codeTypes', valueOf(this.bundle(files.codeTypes.path)!, 'codeTypes', 'json') as string[]);

    let partBytes = 0;
    if (this.has(files.docCode.path)) {
      setSection(ix, 'docCode', this.column('docCode') as Uint16Array);
      this.keepDerived(ix, 'codeDocs', 'docCode');
      this.wordRows(ix, 'wordCodeDocs', 'codeDocs', 'docCode', madeLater);
    } else {
      const part = this.partial('codeIds', 'codeDocs', dir.codeChunks, dir.counts.codes, NO_CODE, 'u16');
      partBytes += part.rows.offsets.byteLength + part.rows.values.byteLength;
      lazyColumn(ix, 'docCode', part.column, madeLater);
      setDerived(ix, 'codeDocs', part.rows);
    }
    if (this.has(files.docApplicant.path) && this.has(files.applicants.path)) {
      setSection(ix, 'docApplicant', this.column('docApplicant') as ApplicantColumn);
      const names = this.bundle(files.applicants.path)!;
      setSection(ix, 'applicants', valueOf(names, 'applicants', 'json') as string[]);
      setSection(ix, 'applicantsByKey', valueOf(names, 'applicantsByKey', 'u32'));
      this.keepDerived(ix, 'applicantDocs', 'docApplicant');
      this.wordRows(ix, 'wordApplicantDocs', 'applicantDocs', 'docApplicant', madeLater);
    } else {
      const narrow = applicantsIn16Bits(dir);
      const part = this.partial('applicantIds', 'applicantDocs', [], dir.counts.applicants, narrow ? 0xffff : NO_APPLICANT, narrow ? 'u16' : 'u32');
      partBytes += part.rows.offsets.byteLength + part.rows.values.byteLength;
      lazyColumn(ix, 'docApplicant', part.column, madeLater);
      setDerived(ix, 'applicantDocs', part.rows);
      setSection(ix, 'applicants', lengthOnly(dir.counts.applicants, 'applicants'));
    }

    setPredicateSections(ix, dir, (path) => this.bundle(path));
    if (this.has(files.docKNumber.path)) {
      setSection(ix, 'docKNumber', this.column('docKNumber') as Uint32Array);
      this.keepDerived(ix, 'byKNumber', 'docKNumber');
    } else {
      // A page's K numbers come from their blocks (`kNumbers`), which the view does not hold: with the whole column
      // absent, nothing reads K numbers at large, and the engine's own reading of a page's is replaced by the caller.
      setSection(ix, 'docKNumber', new Uint32Array(0));
      // Read only for a K number word, which declares the whole column (scanWord takes it in a local all the same).
      setDerived(ix, 'byKNumber', new Uint32Array(0));
    }
    const extraBytes = dir.counts.terms * 20 + (docRows.length > 1 ? termDocs.byteLength : 0) + (appRows.length > 1 ? appAt * 4 : 0) + codeAt * 2 + partBytes;
    return { index: ix, extraBytes };
  }

  /**
   * A column known only for the documents of the codes (applicants) whose rows are loaded, in term chunks (`idsName`,
   * `rowsName`) or in id chunks, and those rows.
   */
  private partial(idsName: string, rowsName: string, chunks: readonly IdChunk[], ids: number, none: number, type: 'u16' | 'u32'): { column: () => Uint16Array | Uint32Array; rows: Rows } {
    const n = this.directory.counts.docs;
    const { offsets, values } = this.gathered(idsName, rowsName, chunks, ids);
    // The column from the rows, made on first use (a word checked document by document).
    const column = () => {
      const out = type === 'u16' ? new Uint16Array(n) : new Uint32Array(n);
      out.fill(none);
      for (let id = 0; id < ids; id++) for (let j = offsets[id]!; j < offsets[id + 1]!; j++) out[values[j]!] = id;
      return out;
    };
    return { column, rows: { offsets, values } };
  }

  /** The rows of the codes (applicants) loaded in term chunks (`idsName`, `rowsName`) or in id chunks, by id. */
  private gathered(idsName: string, rowsName: string, chunks: readonly IdChunk[], ids: number): Rows {
    const lengths = new Uint32Array(ids + 1);
    const loaded: { ids: Uint32Array; rows: Rows }[] = [];
    const found = new Uint8Array(ids);
    const take = (idList: Uint32Array, rows: Rows, path: string) => {
      if (rows.offsets.length !== idList.length + 1 || idList.some((id) => id >= ids)) throw new ChunkFormatError(`${path}: its ids and rows do not match`);
      // The same code may come in several chunks: its rows once.
      const keep: number[] = [];
      for (let i = 0; i < idList.length; i++) {
        const id = idList[i]!;
        if (found[id]) continue;
        found[id] = 1;
        keep.push(i);
        lengths[id + 1] = rows.offsets[i + 1]! - rows.offsets[i]!;
      }
      if (keep.length > 0) loaded.push({ ids: Uint32Array.from(keep, (i) => idList[i]!), rows: pickRows(rows, Uint32Array.from(keep)) });
    };
    for (const c of this.directory.termChunks) {
      const bundle = this.bundle(c.file.path);
      if (bundle) take(valueOf(bundle, idsName, 'u32'), valueOf(bundle, rowsName, 'rows'), c.file.path);
    }
    for (const c of chunks) {
      const bundle = this.bundle(c.file.path);
      if (!bundle) continue;
      const idList = valueOf(bundle, 'ids', 'u32');
      if (idList.length !== c.count) throw new ChunkFormatError(`${c.file.path}: not the chunk the directory names`);
      take(idList, valueOf(bundle, 'docs', 'rows'), c.file.path);
    }
    // Rows in id order: an id whose chunk is not loaded has none.
    const offsets = lengths;
    for (let i = 0; i < ids; i++) offsets[i + 1]! += offsets[i]!;
    const values = new Uint32Array(offsets[ids]!);
    for (const { ids: idList, rows } of loaded) {
      for (let i = 0; i < idList.length; i++) values.set(rows.values.subarray(rows.offsets[i]!, rows.offsets[i + 1]!), offsets[idList[i]!]!);
    }
    return { offsets, values };
  }
}

/** The part of a whole documents-by-code (applicant) table that the loaded word chunks' rows reach before it is made. */
const WHOLE_TABLE_PART = 8;

/**
 * Whether the applicant column is kept in 16 bits, whole or in part, whatever width it is stored in: where every
 * applicant id fits below 0xffff, its "none" (the engine reads either width: codec.ts).
 */
function applicantsIn16Bits(dir: SearchChunks): boolean {
  return dir.counts.applicants < 0xffff;
}

/** The name a whole table derived from a column is kept under with the column's file (`keepDerived`). */
function derivedKey(ix: SearchIndex, name: 'codeDocs' | 'applicantDocs' | 'byKNumber'): string {
  // With the length of the list the ids index: the file may be shared by a snapshot whose list differs.
  return `${name}/${name === 'codeDocs' ? ix.codes.length : name === 'applicantDocs' ? ix.applicants.length : ''}`;
}

/** The decision years or dates of every document, from the runs of `decided` (one day, and its year, per run). */
function decidedOf(bundle: Map<string, Decoded>, n: number, which: 'years' | 'days'): Uint16Array | Uint32Array {
  const ends = valueOf(bundle, 'runs', 'rows').values;
  const values = valueOf(bundle, 'days', 'u32');
  if (ends.length !== values.length || (ends.length > 0 && ends[ends.length - 1] !== n)) throw new ChunkFormatError('decided: runs do not cover the documents');
  const out = which === 'years' ? new Uint16Array(n) : new Uint32Array(n);
  let at = 0;
  for (let r = 0; r < ends.length; r++) {
    const day = values[r]!;
    out.fill(which === 'days' ? day : day === 0 ? 0 : Number(isoOfDay(day).slice(0, 4)), at, ends[r]);
    at = ends[r]!;
  }
  return out;
}

/**
 * A column of the index made on first read, then kept (an own property ahead of the index's section getter); `count`
 * is told its bytes and those the engine keeps made from it.
 */
function lazyColumn(ix: SearchIndex, name: 'docCode' | 'docApplicant', make: () => Uint16Array | Uint32Array, count?: (bytes: number) => void): void {
  let made: Uint16Array | Uint32Array | null = null;
  Object.defineProperty(ix, name, {
    get: () => {
      if (!made) {
        made = make();
        if (count) {
          count(made.byteLength);
          countKept(made, count);
        }
      }
      return made;
    },
  });
}

/** The rows at positions `at`, in that order. */
function pickRows(rows: Rows, at: Uint32Array): Rows {
  const offsets = new Uint32Array(at.length + 1);
  for (let i = 0; i < at.length; i++) offsets[i + 1] = offsets[i]! + rows.offsets[at[i]! + 1]! - rows.offsets[at[i]!]!;
  const values = new Uint32Array(offsets[at.length]!);
  for (let i = 0; i < at.length; i++) values.set(rows.values.subarray(rows.offsets[at[i]!]!, rows.offsets[at[i]! + 1]!), offsets[i]!);
  return { offsets, values };
}

function concat(pieces: readonly Uint32Array[], total: number): Uint32Array {
  if (pieces.length === 1) return pieces[0]!;
  const out = new Uint32Array(total);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A list whose length is known and whose entries are not loaded: reading one throws, so nothing reads it unawares. */
function lengthOnly(length: number, section: SearchSectionName): string[] {
  return new Proxy([] as string[], {
    get(target, key, receiver) {
      if (key === 'length') return length;
      if (typeof key === 'string' && /^\d+$/.test(key)) throw new SectionNotLoaded(section);
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
}
