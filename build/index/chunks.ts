import { createHash } from 'node:crypto';
import { NO_APPLICANT, NO_CODE, NO_SMALL } from '../../src/contract/search-index.ts';
import {
  CHUNK_TARGET_BYTES,
  ID_CHUNK_TARGET_BYTES,
  chunkPath,
  CHUNK_HASH_CHARS,
  K_BLOCK_DOCS,
  LANDING_KNUMBERS,
  SEARCH_CHUNKS_FORMAT,
  SEARCH_CHUNKS_PATH,
  SEARCH_CHUNKS_VERSION,
  SearchChunks,
  type ChunkFile,
  type FileRef,
  type IdChunk,
  type PredicateChunks,
  type WordChunks,
  WORD_CHUNK_TARGET_BYTES,
} from '../../src/contract/search-chunks.ts';
import { encodeBundle, type BundleValue } from '../../src/search/bundle.ts';
import type { SearchIndexData } from '../../src/search/codec.ts';
import type { Rows } from '../../src/search/csr.ts';
import type { FacetRequest } from '../../src/search/facet-fields.ts';
import { FACET_FIELDS } from '../../src/search/facet-fields.ts';
import { openSearchIndex, type SearchIndex } from '../../src/search/model.ts';
import { runSearch } from '../../src/search/engine.ts';
import { kNumberText } from '../../src/search/k-number.ts';
import { yearCounts } from '../../src/search/years.ts';
import { compressTo } from '../write/compress.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * The facets the search page asks for (public/js/state.js, facetRequests): their counts over everything are the
 * landing answer. A page that asks for others computes them itself.
 */
export const LANDING_FACETS: FacetRequest[] = (
  [
    { field: 'productCode', size: 10, order: 'count' },
    { field: 'applicant', size: 10, order: 'count' },
    { field: 'decisionYear', size: null, order: 'value' },
    { field: 'advisoryCommittee', size: null, order: 'count' },
    { field: 'deviceClass', size: null, order: 'count' },
    { field: 'decisionCode', size: null, order: 'count' },
    { field: 'submissionType', size: null, order: 'count' },
    { field: 'thirdParty', size: null, order: 'count' },
    { field: 'expeditedReview', size: null, order: 'count' },
    { field: 'statementOrSummary', size: null, order: 'count' },
    { field: 'countryCode', size: 10, order: 'count' },
    { field: 'state', size: 10, order: 'count' },
  ] as FacetRequest[]
).filter((f) => (FACET_FIELDS as readonly string[]).includes(f.field));

type Written = { path: string; bytes: Uint8Array; inflated: string };

/** Gzip of a bundle under its content-hashed name, with the hash of the bundle itself (for a host that inflates it). */
async function packed(kind: string, values: Record<string, BundleValue>): Promise<Written> {
  const bundle = encodeBundle(values);
  const bytes = await compressTo('gzip', bundle);
  const inflated = createHash('sha256').update(bundle).digest('hex').slice(0, CHUNK_HASH_CHARS);
  return { path: chunkPath(kind, createHash('sha256').update(bytes).digest('hex')), bytes, inflated };
}

const ref = (w: Written): FileRef => ({ path: w.path, bytes: w.bytes.byteLength, inflated: w.inflated });

/** The rows of `ids`, in that order. */
export function pickRows(rows: Rows, ids: Uint32Array): Rows {
  const offsets = new Uint32Array(ids.length + 1);
  for (const [i, id] of ids.entries()) offsets[i + 1] = offsets[i]! + rows.offsets[id + 1]! - rows.offsets[id]!;
  const values = new Uint32Array(offsets[ids.length]!);
  for (const [i, id] of ids.entries()) values.set(rows.values.subarray(rows.offsets[id]!, rows.offsets[id + 1]!), offsets[i]!);
  return { offsets, values };
}

/** Rows r in [from, to) of `rows`, renumbered from 0. */
export function sliceRows(rows: Rows, from: number, to: number): Rows {
  const base = rows.offsets[from]!;
  const offsets = new Uint32Array(to - from + 1);
  for (let r = from; r <= to; r++) offsets[r - from] = rows.offsets[r]! - base;
  return { offsets, values: rows.values.slice(base, rows.offsets[to]!) };
}

/**
 * Cuts rows 0..count-1 into runs whose varint bytes reach about `target` each: a run ends once it holds that much
 * (so a long row ends its run; no run is empty). `weight(r)` is the bytes of row r in all relations a run carries.
 */
export function cutRuns(count: number, weight: (r: number) => number, target: number): { from: number; count: number }[] {
  const out: { from: number; count: number }[] = [];
  let from = 0;
  let bytes = 0;
  for (let r = 0; r < count; r++) {
    bytes += weight(r);
    if (bytes >= target) {
      out.push({ from, count: r + 1 - from });
      from = r + 1;
      bytes = 0;
    }
  }
  if (from < count) out.push({ from, count: count - from });
  return out;
}

/** About the varint bytes of row r: its length, and one to three bytes a posting by the gaps' size. */
function rowWeight(rows: Rows, universe: number): (r: number) => number {
  return (r) => {
    const n = rows.offsets[r + 1]! - rows.offsets[r]!;
    if (n === 0) return 1;
    const gap = universe / n;
    return 1 + n * (gap < 128 ? 1 : gap < 16_384 ? 2 : 3);
  };
}

/** A column in the narrowest type that holds its values, its "none" mapped to that type's largest value. */
function narrow(values: Uint8Array | Uint16Array | Uint32Array, none: number | null): { value: BundleValue; meta: { type: string; none: number | null } } {
  const type = values instanceof Uint8Array ? 'u8' : values instanceof Uint16Array ? 'u16' : 'u32';
  let max = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v !== none && v > max) max = v;
  }
  const meta = { type, none };
  const into = <T extends Uint8Array | Uint16Array>(out: T, sentinel: number): T => {
    for (let i = 0; i < values.length; i++) out[i] = values[i] === none ? sentinel : values[i]!;
    return out;
  };
  if (max < 0xff && type !== 'u8') return { value: { u8: into(new Uint8Array(values.length), 0xff) }, meta };
  if (max < 0xffff && type === 'u32') return { value: { u16: into(new Uint16Array(values.length), 0xffff) }, meta };
  const v: BundleValue = values instanceof Uint8Array ? { u8: values } : values instanceof Uint16Array ? { u16: values } : { u32: values };
  return { value: v, meta };
}

/** Runs of equal values of a column: each run's value and length. */
function runsOf(values: Uint32Array): { values: Uint32Array; lengths: Uint32Array } {
  const vs: number[] = [];
  const ls: number[] = [];
  for (let i = 0; i < values.length; ) {
    let j = i + 1;
    while (j < values.length && values[j] === values[i]) j++;
    vs.push(values[i]!);
    ls.push(j - i);
    i = j;
  }
  return { values: Uint32Array.from(vs), lengths: Uint32Array.from(ls) };
}

export type ChunkFiles = { directory: SearchChunks; files: Written[] };

/**
 * The chunked index's files from the index's arrays (src/contract/search-chunks.ts). Pure apart from compression:
 * the same arrays give the same files and names.
 */
export async function buildSearchChunks(
  data: SearchIndexData,
  indexHeaderSha256: string,
  sizes: { targetBytes: number; idTargetBytes: number; kBlockDocs: number } = { targetBytes: CHUNK_TARGET_BYTES, idTargetBytes: ID_CHUNK_TARGET_BYTES, kBlockDocs: K_BLOCK_DOCS },
): Promise<ChunkFiles> {
  const index: SearchIndex = openSearchIndex(data);
  const docs = data.docKNumber.length;
  const files: Written[] = [];
  const add = (w: Written): FileRef => (files.push(w), ref(w));

  const termDocs: Rows = { offsets: data.termDocOffsets, values: data.termDocs };
  const termApplicants: Rows = { offsets: data.termApplicantOffsets, values: data.termApplicants };
  const termCodes: Rows = { offsets: data.termCodeOffsets, values: Uint32Array.from(data.termCodes) };
  const docW = rowWeight(termDocs, docs);
  const appW = rowWeight(termApplicants, data.applicants.length);
  const codeW = rowWeight(termCodes, data.codes.length);
  const codeRowW = rowWeight(index.codeDocs, docs);
  const applicantRowW = rowWeight(index.applicantDocs, docs);
  const reachWeight = (t: number): number => {
    let w = 0;
    for (let i = termCodes.offsets[t]!; i < termCodes.offsets[t + 1]!; i++) w += codeRowW(termCodes.values[i]!);
    for (let i = termApplicants.offsets[t]!; i < termApplicants.offsets[t + 1]!; i++) w += applicantRowW(termApplicants.values[i]!);
    return w;
  };
  const termChunks = [];
  for (const run of cutRuns(data.terms.length, (t) => docW(t) + appW(t) + codeW(t) + reachWeight(t) + data.terms[t]!.length + 3, sizes.targetBytes)) {
    const to = run.from + run.count;
    const reached = (rel: Rows) => Uint32Array.from(new Set(rel.values.subarray(rel.offsets[run.from]!, rel.offsets[to]!))).sort();
    const codeIds = reached(termCodes);
    const applicantIds = reached(termApplicants);
    const file = add(
      await packed('terms', {
        terms: { json: data.terms.slice(run.from, to) },
        docs: { rows: sliceRows(termDocs, run.from, to) },
        applicants: { rows: sliceRows(termApplicants, run.from, to) },
        codes: { rows: sliceRows(termCodes, run.from, to) },
        codeIds: { u32: codeIds },
        codeDocs: { rows: pickRows(index.codeDocs, codeIds) },
        applicantIds: { u32: applicantIds },
        applicantDocs: { rows: pickRows(index.applicantDocs, applicantIds) },
      }),
    );
    termChunks.push({ first: data.terms[run.from]!, last: data.terms[to - 1]!, from: run.from, count: run.count, file });
  }

  // The word list alone, for "did you mean" (src/search/spelling.ts): each word and its number of clearances.
  const wordChunks: WordChunks['chunks'] = [];
  for (const run of cutRuns(data.terms.length, (t) => data.terms[t]!.length + 4, WORD_CHUNK_TARGET_BYTES)) {
    const to = run.from + run.count;
    const docCounts = new Uint32Array(run.count);
    const reach = new Uint8Array(run.count);
    for (let t = run.from; t < to; t++) {
      docCounts[t - run.from] = data.termDocOffsets[t + 1]! - data.termDocOffsets[t]!;
      reach[t - run.from] = data.termCodeOffsets[t + 1]! > data.termCodeOffsets[t]! || data.termApplicantOffsets[t + 1]! > data.termApplicantOffsets[t]! ? 1 : 0;
    }
    const file = add(await packed('words', { words: { json: data.terms.slice(run.from, to) }, docs: { u32: docCounts }, reach: { u8: reach } }));
    wordChunks.push({ first: data.terms[run.from]!, last: data.terms[to - 1]!, from: run.from, count: run.count, file });
  }

  // Ids in `order`, cut into runs; each chunk holds its ids and their rows.
  const idChunks = async (kind: string, rows: Rows, order: Uint32Array): Promise<{ chunks: IdChunk[]; chunkOf: number[] }> => {
    const chunks: IdChunk[] = [];
    const chunkOf = new Array<number>(order.length).fill(0);
    const w = rowWeight(rows, docs);
    for (const run of cutRuns(order.length, (i) => w(order[i]!), sizes.idTargetBytes)) {
      const ids = order.slice(run.from, run.from + run.count);
      for (const id of ids) chunkOf[id] = chunks.length;
      chunks.push({ count: run.count, file: add(await packed(kind, { ids: { u32: ids }, docs: { rows: pickRows(rows, ids) } })) });
    }
    return { chunks, chunkOf };
  };
  const byType = Uint32Array.from(data.codes.keys()).sort((a, b) => (data.codeTypes[a]! < data.codeTypes[b]! ? -1 : data.codeTypes[a]! > data.codeTypes[b]! ? 1 : a - b));
  const codeChunks = await idChunks('codes', index.codeDocs, byType);

  const kBlocks: FileRef[] = [];
  for (let d = 0; d < docs; d += sizes.kBlockDocs) kBlocks.push(add(await packed('k', { values: { u32: data.docKNumber.slice(d, d + sizes.kBlockDocs) } })));

  const column = async (name: ChunkFile, values: Uint8Array | Uint16Array | Uint32Array, none: number | null) => {
    const n = narrow(values, none);
    return add(await packed(name, { meta: { json: n.meta }, values: n.value }));
  };
  const decided = runsOf(data.docDecided);
  const fileRefs: Record<ChunkFile, FileRef> = {
    dicts: add(
      await packed('dicts', {
        lists: {
          json: {
            codes: data.codes, panels: data.panels, decisions: data.decisions, decisionNames: data.decisionNames,
            types: data.types, countries: data.countries, states: data.states, classes: data.classes,
          },
        },
        codeClass: { u8: data.codeClass },
      }),
    ),
    applicants: add(await packed('applicants', { applicants: { json: data.applicants }, applicantsByKey: { u32: data.applicantsByKey } })),
    codeTypes: add(await packed('codeTypes', { codeTypes: { json: data.codeTypes } })),
    decided: add(await packed('decided', { runs: { rows: { offsets: Uint32Array.of(0, decided.lengths.length), values: cumulative(decided.lengths) } }, days: { u32: decided.values } })),
    docKNumber: await column('docKNumber', data.docKNumber, null),
    docCode: await column('docCode', data.docCode, NO_CODE),
    docApplicant: await column('docApplicant', data.docApplicant, NO_APPLICANT),
    docPanel: await column('docPanel', data.docPanel, NO_SMALL),
    docDecision: await column('docDecision', data.docDecision, NO_SMALL),
    docType: await column('docType', data.docType, NO_SMALL),
    docFlags: await column('docFlags', data.docFlags, null),
    docCountry: await column('docCountry', data.docCountry, NO_CODE),
    docState: await column('docState', data.docState, NO_CODE),
    docReceived: await column('docReceived', data.docReceived, null),
    docTerms: add(await packed('docTerms', { rows: { rows: { offsets: data.docTermOffsets, values: data.docTermIds } } })),
    docSeq: add(await packed('docSeq', { offsets: { u32: data.docSeqOffsets }, values: { u8: data.docSeq } })),
  };

  const predicates = data.predCodes === undefined ? undefined : await predicateChunks(data, sizes.targetBytes, async (kind, values) => add(await packed(kind, values)));

  const landing = runSearch(index, { query: '', applicant: null, productCode: null, yearFrom: null, yearTo: null, page: 1, pageSize: 1, facets: LANDING_FACETS });
  const kNumbers: string[] = [];
  for (let d = 0; d < Math.min(docs, LANDING_KNUMBERS); d++) kNumbers.push(kNumberText(data.docKNumber[d]!));
  const directory: SearchChunks = {
    format: SEARCH_CHUNKS_FORMAT,
    version: SEARCH_CHUNKS_VERSION,
    indexHeaderSha256,
    counts: { docs, terms: data.terms.length, codes: data.codes.length, applicants: data.applicants.length },
    files: fileRefs,
    termChunks,
    codeChunks: codeChunks.chunks,
    codeChunkOf: codeChunks.chunkOf,
    kBlockDocs: sizes.kBlockDocs,
    kBlocks,
    landing: { facets: LANDING_FACETS, kNumbers, facetCounts: landing.facets },
    years: yearCounts(index),
    ...(predicates && { predicates }),
    words: { chunks: wordChunks },
  };
  return { directory, files };
}

/**
 * The predicate part of the directory: each device's documents (and kinds) in chunks cut by code, and the whole
 * files the facet and `kind:` read. `write` packs a bundle and gives its reference.
 */
async function predicateChunks(data: SearchIndexData, target: number, write: (kind: string, values: Record<string, BundleValue>) => Promise<FileRef>): Promise<PredicateChunks> {
  const docs = data.docKNumber.length;
  const rows: Rows = { offsets: data.predDocOffsets, values: data.predDocs };
  const w = rowWeight(rows, docs);
  const chunks: PredicateChunks['chunks'] = [];
  for (const run of cutRuns(data.predCodes.length, (p) => w(p) + 4, target)) {
    const to = run.from + run.count;
    const file = await write('preds', {
      codes: { u32: data.predCodes.slice(run.from, to) },
      docs: { rows: sliceRows(rows, run.from, to) },
      kinds: { u8: data.predDocKinds.slice(data.predDocOffsets[run.from]!, data.predDocOffsets[to]!) },
    });
    chunks.push({ first: data.predCodes[run.from]!, last: data.predCodes[to - 1]!, from: run.from, count: run.count, file });
  }
  return {
    count: data.predCodes.length,
    chunks,
    codes: await write('predCodes', { codes: { u32: data.predCodes } }),
    docPreds: await write('docPreds', { rows: { rows: { offsets: data.docPredOffsets, values: data.docPreds } }, kinds: { u8: data.docPredKinds } }),
    docEdgeKinds: await write('docEdgeKinds', { values: { u8: data.docEdgeKinds } }),
  };
}

/** Run lengths as the ends of each run: ascending, so they travel as rows (gaps are the lengths). */
function cumulative(lengths: Uint32Array): Uint32Array {
  const out = new Uint32Array(lengths.length);
  let at = 0;
  for (let i = 0; i < lengths.length; i++) out[i] = at += lengths[i]!;
  return out;
}

/** Writes the chunked index beside `search/` (the directory last in the list, like any file of the snapshot). */
export async function writeSearchChunks(data: SearchIndexData, indexHeaderSha256: string, writer: SnapshotWriter): Promise<SearchChunks> {
  const { directory, files } = await buildSearchChunks(data, indexHeaderSha256);
  const seen = new Set<string>();
  for (const f of files) {
    // The same bytes give the same name: identical chunks (say two empty columns) are one file.
    if (seen.has(f.path)) continue;
    seen.add(f.path);
    writer.writeBytes(f.path, f.bytes);
  }
  writer.writeJson(SEARCH_CHUNKS_PATH, SearchChunks, directory);
  return directory;
}

