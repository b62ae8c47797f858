import {
  MAX_YEAR,
  NO_APPLICANT,
  NO_CODE,
  NO_SMALL,
  BLOCK_DIGEST_BYTES,
  SEARCH_BLOCK_BYTES,
  SEARCH_INDEX_FORMAT,
  SEARCH_INDEX_VERSION,
  SEARCH_SECTION_NAMES,
  SEARCH_SECTIONS,
  SearchIndexHeader,
  isPredicateSection,
  PREDICATE_SECTIONS,
  searchPartPath,
  type SearchSection,
  type SearchSectionName,
} from '../contract/search-index.ts';

/**
 * The applicant column as the engine holds it: 32-bit as the whole index stores it, or 16-bit where every applicant id
 * is below 0xffff, as a chunked index stores it and then keeps it (half the bytes of a widened copy); its "none" is
 * then 0xffff (`noApplicantIn`).
 */
export type ApplicantColumn = Uint16Array | Uint32Array;

/** The value of `column` that stands for "no applicant". */
export function noApplicantIn(column: ApplicantColumn): number {
  return column instanceof Uint16Array ? 0xffff : NO_APPLICANT;
}

/** The index's stored arrays, exactly as src/contract/search-index.ts describes them (the applicant column may be narrower). */
export type SearchIndexData = {
  docKNumber: Uint32Array;
  docYear: Uint16Array;
  docCode: Uint16Array;
  docApplicant: ApplicantColumn;
  terms: string[];
  termDocOffsets: Uint32Array;
  termDocs: Uint32Array;
  docTermOffsets: Uint32Array;
  docTermIds: Uint32Array;
  termApplicantOffsets: Uint32Array;
  termApplicants: Uint32Array;
  termCodeOffsets: Uint32Array;
  termCodes: Uint16Array;
  codes: string[];
  applicants: string[];
  applicantsByKey: Uint32Array;
  docDecided: Uint32Array;
  docReceived: Uint32Array;
  docPanel: Uint8Array;
  docDecision: Uint8Array;
  docType: Uint8Array;
  docFlags: Uint8Array;
  docCountry: Uint16Array;
  docState: Uint16Array;
  codeClass: Uint8Array;
  docSeqOffsets: Uint32Array;
  docSeq: Uint8Array;
  panels: string[];
  decisions: string[];
  decisionNames: string[];
  types: string[];
  countries: string[];
  states: string[];
  classes: string[];
  codeTypes: string[];
  predCodes: Uint32Array;
  predDocOffsets: Uint32Array;
  predDocs: Uint32Array;
  predDocKinds: Uint8Array;
  docPredOffsets: Uint32Array;
  docPreds: Uint32Array;
  docPredKinds: Uint8Array;
  docEdgeKinds: Uint8Array;
};

export class SearchIndexFormatError extends Error {
  override name = 'SearchIndexFormatError';
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const align8 = (n: number): number => Math.ceil(n / 8) * 8;
const ELEMENT_BYTES = { u8: 1, u16: 2, u32: 4, json: 1 } as const;

function sectionBytes(value: Uint8Array | Uint16Array | Uint32Array | string[]): Uint8Array {
  if (Array.isArray(value)) return new TextEncoder().encode(JSON.stringify(value));
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/**
 * Lays the sections end to end (each at a multiple of 8, zero padding) and cuts the blob into parts. `blockBytes`
 * (the unit a reader checks, see `blockTable`) must divide `partBytes`.
 */
export function encodeSearchIndex(
  data: SearchIndexData,
  partBytes: number,
  blockBytes = Math.min(SEARCH_BLOCK_BYTES, partBytes),
): { header: SearchIndexHeader; parts: Uint8Array[]; blob: Uint8Array } {
  if (!LITTLE_ENDIAN) throw new SearchIndexFormatError('the search index is little-endian; this machine is not');
  if (partBytes % blockBytes !== 0) throw new SearchIndexFormatError(`partBytes (${partBytes}) must be a multiple of blockBytes (${blockBytes})`);
  const chunks = SEARCH_SECTION_NAMES.map((name) => ({ name, bytes: sectionBytes(data[name]) }));
  const sections: SearchSection[] = [];
  let size = 0;
  for (const { name, bytes } of chunks) {
    sections.push({ name, type: SEARCH_SECTIONS[name], offset: size, bytes: bytes.byteLength });
    size = align8(size + bytes.byteLength);
  }
  const blob = new Uint8Array(size);
  for (const [i, { bytes }] of chunks.entries()) blob.set(bytes, sections[i]!.offset);

  const parts: Uint8Array[] = [];
  for (let at = 0; at < size; at += partBytes) parts.push(blob.subarray(at, Math.min(size, at + partBytes)));
  const header: SearchIndexHeader = {
    format: SEARCH_INDEX_FORMAT,
    version: SEARCH_INDEX_VERSION,
    counts: {
      docs: data.docKNumber.length,
      terms: data.terms.length,
      codes: data.codes.length,
      applicants: data.applicants.length,
      panels: data.panels.length,
      decisions: data.decisions.length,
      types: data.types.length,
      countries: data.countries.length,
      states: data.states.length,
      classes: data.classes.length,
      predicates: data.predCodes.length,
    },
    blobBytes: size,
    partBytes,
    blockBytes,
    parts: parts.map((p, n) => ({ path: searchPartPath(n), bytes: p.byteLength })),
    sections,
  };
  return { header, parts, blob };
}

/** `search/blocks.bin`: the first BLOCK_DIGEST_BYTES of the sha256 of each `blockBytes` block of the blob. */
export function blockTable(blob: Uint8Array, blockBytes: number, sha256: (bytes: Uint8Array) => Uint8Array): Uint8Array {
  const count = Math.ceil(blob.byteLength / blockBytes);
  const table = new Uint8Array(count * BLOCK_DIGEST_BYTES);
  for (let b = 0; b < count; b++) {
    table.set(sha256(blob.subarray(b * blockBytes, (b + 1) * blockBytes)).subarray(0, BLOCK_DIGEST_BYTES), b * BLOCK_DIGEST_BYTES);
  }
  return table;
}

/** How many blocks the blob of `header` has (the length of its block table, in entries). */
export const blockCount = (header: SearchIndexHeader): number => Math.ceil(header.blobBytes / header.blockBytes);

/**
 * The header, parsed and checked for everything that needs no section: parts that add up to the blob, blocks that fit
 * in parts, every section there once, of its type, in bounds, whole elements, and dictionary sizes the columns' "no
 * value" markers leave room for.
 */
export function parseSearchHeader(value: unknown): SearchIndexHeader {
  if (!LITTLE_ENDIAN) throw new SearchIndexFormatError('the search index is little-endian; this machine is not');
  const parsed = SearchIndexHeader.safeParse(value);
  if (!parsed.success) throw new SearchIndexFormatError(`search index header is invalid: ${parsed.error.issues[0]?.message}`);
  const header = parsed.data;
  const fail = (what: string): never => {
    throw new SearchIndexFormatError(`search index: ${what}`);
  };
  if (header.partBytes % header.blockBytes !== 0) fail('partBytes is not a multiple of blockBytes');
  let total = 0;
  for (const [i, p] of header.parts.entries()) {
    if (!/^search\/[\w.-]+$/.test(p.path)) fail(`part ${i} has an invalid path`);
    if (p.bytes > header.partBytes || (i < header.parts.length - 1 && p.bytes !== header.partBytes)) fail(`part ${i} has the wrong size`);
    total += p.bytes;
  }
  if (total !== header.blobBytes) fail('parts do not add up to the blob');
  const seen = new Set<string>();
  for (const s of header.sections) {
    if (seen.has(s.name)) fail(`section ${s.name} appears twice`);
    seen.add(s.name);
    if (s.type !== SEARCH_SECTIONS[s.name] || s.offset + s.bytes > total) fail(`section ${s.name} is missing or out of bounds`);
    if (s.bytes % ELEMENT_BYTES[s.type] !== 0) fail(`section ${s.name} has a partial element`);
  }
  // The predicate sections come all together, with their count, or (an index written before them) not at all.
  const predicates = PREDICATE_SECTIONS.filter((name) => seen.has(name)).length;
  if (predicates !== 0 && (predicates !== PREDICATE_SECTIONS.length || header.counts.predicates === undefined)) fail('the predicate sections are incomplete');
  for (const name of SEARCH_SECTION_NAMES) if (!seen.has(name) && !(predicates === 0 && isPredicateSection(name))) fail(`section ${name} is missing or out of bounds`);
  const c = header.counts;
  if (c.codes >= NO_CODE || c.countries >= NO_CODE || c.states >= NO_CODE) fail('too many values for a u16 column');
  if (c.panels >= NO_SMALL || c.decisions >= NO_SMALL || c.types >= NO_SMALL || c.classes >= NO_SMALL) fail('too many values for a u8 column');
  if (lengthOf(header, 'docTermIds') !== lengthOf(header, 'termDocs')) fail('docTermIds and termDocs differ in size');
  return header;
}

/** The section's entry in a parsed header. */
export function sectionOf(header: SearchIndexHeader, name: SearchSectionName): SearchSection {
  const s = header.sections.find((x) => x.name === name);
  if (!s) throw new SearchIndexFormatError(`search index: section ${name} is missing or out of bounds`);
  return s;
}

/** Elements in a section (bytes for json), from the header alone. */
export const lengthOf = (header: SearchIndexHeader, name: SearchSectionName): number => {
  const s = sectionOf(header, name);
  return s.bytes / ELEMENT_BYTES[s.type];
};

export type SectionValue = SearchIndexData[SearchSectionName];

/**
 * One section's value from exactly its bytes. Typed arrays are views (no copy) when the bytes are 8-byte aligned in
 * their buffer, copies otherwise.
 */
export function decodeSection(header: SearchIndexHeader, name: SearchSectionName, bytes: Uint8Array): SectionValue {
  const s = sectionOf(header, name);
  if (bytes.byteLength !== s.bytes) throw new SearchIndexFormatError(`search index: section ${name} was read with the wrong size`);
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : bytes.slice();
  switch (s.type) {
    case 'u8':
      return aligned;
    case 'u16':
      return new Uint16Array(aligned.buffer, aligned.byteOffset, s.bytes / 2);
    case 'u32':
      return new Uint32Array(aligned.buffer, aligned.byteOffset, s.bytes / 4);
    case 'json': {
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        value = null;
      }
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
        throw new SearchIndexFormatError(`search index: section ${name} is not a list of strings`);
      }
      return value as string[];
    }
  }
}

/** Sections whose check reads another section, which is therefore loaded first. */
export const SECTION_REQUIRES: Partial<Record<SearchSectionName, readonly SearchSectionName[]>> = {
  docTermIds: ['docTermOffsets'],
};

type CheckContext = {
  header: SearchIndexHeader;
  /** A section loaded already (only those of SECTION_REQUIRES are promised). */
  get: <K extends SearchSectionName>(name: K) => SearchIndexData[K];
  fail: (what: string) => never;
};
type Check = (value: never, ctx: CheckContext) => void;

const docLength = (name: string) => (v: { length: number }, { header, fail }: CheckContext) => {
  if (v.length !== header.counts.docs) fail(`${name} differs in length from the documents`);
};
const stringCount = (name: string, count: (c: SearchIndexHeader['counts']) => number) => (v: string[], { header, fail }: CheckContext) => {
  if (v.length !== count(header.counts)) fail(`${name}: counts differ from the header`);
};
/** A column of dictionary ids: one per row, each below the dictionary's size or the "no value" marker. */
const ids = (name: string, rows: (c: SearchIndexHeader['counts']) => number, size: (c: SearchIndexHeader['counts']) => number, none: number) =>
  (v: Uint8Array | Uint16Array | Uint32Array, { header, fail }: CheckContext) => {
    if (v.length !== rows(header.counts)) fail(`${name} has the wrong length`);
    const bound = size(header.counts);
    for (let i = 0; i < v.length; i++) if (v[i] !== none && v[i]! >= bound) fail(`${name} out of range`);
  };
const offsets = (name: string, rows: (c: SearchIndexHeader['counts']) => number, values: SearchSectionName) =>
  (v: Uint32Array, { header, fail }: CheckContext) => {
    if (v.length !== rows(header.counts) + 1 || v[0] !== 0 || v[v.length - 1] !== lengthOf(header, values)) fail(`${name} offsets do not fit`);
    for (let t = 1; t < v.length; t++) if (v[t]! < v[t - 1]!) fail(`${name} offsets decrease`);
  };
const below = (name: string, bound: (c: SearchIndexHeader['counts']) => number) => (v: Uint32Array | Uint16Array, { header, fail }: CheckContext) => {
  maxBelow(v, bound(header.counts), name, fail);
};

/**
 * What a section must satisfy before a query reads it, checked once when it is loaded: lengths against the header's
 * counts, every id it holds within its dictionary, offsets that fit their values, and the orders queries rely on.
 * A section without an entry (one added later) is only checked for its type and size.
 */
const SECTION_CHECKS: Partial<Record<SearchSectionName, Check>> = {
  docKNumber: (v: Uint32Array, ctx) => {
    docLength('docKNumber')(v, ctx);
    maxBelow(v, 1_000_000, 'docKNumber', ctx.fail);
  },
  docYear: (v: Uint16Array, ctx) => {
    docLength('docYear')(v, ctx);
    for (let i = 0; i < v.length; i++) {
      if (i > 0 && v[i]! > v[i - 1]!) ctx.fail('docYear is not in document order');
      if (v[i]! > MAX_YEAR) ctx.fail('docYear out of range');
    }
  },
  docCode: ids('docCode', (c) => c.docs, (c) => c.codes, NO_CODE),
  docApplicant: ids('docApplicant', (c) => c.docs, (c) => c.applicants, NO_APPLICANT),
  terms: stringCount('terms', (c) => c.terms),
  codes: stringCount('codes', (c) => c.codes),
  applicants: stringCount('applicants', (c) => c.applicants),
  panels: stringCount('panels', (c) => c.panels),
  decisions: stringCount('decisions', (c) => c.decisions),
  decisionNames: stringCount('decisionNames', (c) => c.decisions),
  types: stringCount('types', (c) => c.types),
  countries: stringCount('countries', (c) => c.countries),
  states: stringCount('states', (c) => c.states),
  classes: stringCount('classes', (c) => c.classes),
  codeTypes: stringCount('codeTypes', (c) => c.codes),
  termDocOffsets: offsets('termDocs', (c) => c.terms, 'termDocs'),
  termDocs: below('termDocs', (c) => c.docs),
  docTermOffsets: offsets('docTermIds', (c) => c.docs, 'docTermIds'),
  docTermIds: (v: Uint32Array, ctx) => {
    maxBelow(v, ctx.header.counts.terms, 'docTermIds', ctx.fail);
    // Checking a document stops at the first term past a word's range, which needs each document's terms ascending.
    const o = ctx.get('docTermOffsets');
    for (let doc = 0; doc + 1 < o.length; doc++) {
      for (let i = o[doc]! + 1, end = o[doc + 1]!; i < end; i++) if (v[i]! <= v[i - 1]!) ctx.fail('docTermIds are not ascending');
    }
  },
  termApplicantOffsets: offsets('termApplicants', (c) => c.terms, 'termApplicants'),
  termApplicants: below('termApplicants', (c) => c.applicants),
  termCodeOffsets: offsets('termCodes', (c) => c.terms, 'termCodes'),
  termCodes: below('termCodes', (c) => c.codes),
  applicantsByKey: (v: Uint32Array, ctx) => {
    if (v.length !== ctx.header.counts.applicants) ctx.fail('applicantsByKey has the wrong length');
    maxBelow(v, ctx.header.counts.applicants, 'applicantsByKey', ctx.fail);
  },
  docDecided: (v: Uint32Array, ctx) => {
    docLength('docDecided')(v, ctx);
    for (let i = 1; i < v.length; i++) {
      const a = v[i - 1]!;
      const b = v[i]!;
      if (b !== 0 && (a === 0 || b > a)) ctx.fail('docDecided is not in document order');
    }
  },
  docReceived: docLength('docReceived'),
  docPanel: ids('docPanel', (c) => c.docs, (c) => c.panels, NO_SMALL),
  docDecision: ids('docDecision', (c) => c.docs, (c) => c.decisions, NO_SMALL),
  docType: ids('docType', (c) => c.docs, (c) => c.types, NO_SMALL),
  docFlags: docLength('docFlags'),
  docCountry: ids('docCountry', (c) => c.docs, (c) => c.countries, NO_CODE),
  docState: ids('docState', (c) => c.docs, (c) => c.states, NO_CODE),
  codeClass: ids('codeClass', (c) => c.codes, (c) => c.classes, NO_SMALL),
  docSeqOffsets: offsets('docSeq', (c) => c.docs, 'docSeq'),
  predCodes: (v: Uint32Array, ctx) => {
    if (v.length !== ctx.header.counts.predicates) ctx.fail('predCodes: counts differ from the header');
    // A predicate is found by a binary search of its code.
    for (let i = 1; i < v.length; i++) if (v[i]! <= v[i - 1]!) ctx.fail('predCodes are not ascending');
  },
  predDocOffsets: offsets('predDocs', (c) => c.predicates ?? 0, 'predDocs'),
  predDocs: below('predDocs', (c) => c.docs),
  predDocKinds: (v: Uint8Array, ctx) => {
    if (v.length !== lengthOf(ctx.header, 'predDocs')) ctx.fail('predDocKinds differs in length from predDocs');
  },
  docPredOffsets: offsets('docPreds', (c) => c.docs, 'docPreds'),
  docPreds: below('docPreds', (c) => c.predicates ?? 0),
  docPredKinds: (v: Uint8Array, ctx) => {
    if (v.length !== lengthOf(ctx.header, 'docPreds')) ctx.fail('docPredKinds differs in length from docPreds');
  },
  docEdgeKinds: docLength('docEdgeKinds'),
};

/** Whether the header lists the predicate sections (an index written before they existed does not). */
export const hasPredicateSections = (header: SearchIndexHeader): boolean => header.sections.some((s) => s.name === 'predCodes');

/** Checks one decoded section (see SECTION_CHECKS); `get` gives the sections SECTION_REQUIRES names. */
export function checkSection(
  header: SearchIndexHeader,
  name: SearchSectionName,
  value: SectionValue,
  get: <K extends SearchSectionName>(name: K) => SearchIndexData[K],
): void {
  const fail = (what: string): never => {
    throw new SearchIndexFormatError(`search index: ${what}`);
  };
  (SECTION_CHECKS[name] as ((v: SectionValue, ctx: CheckContext) => void) | undefined)?.(value, { header, get, fail });
}

/**
 * Rebuilds every array from the header and the parts' bytes (the whole index at once: the static page, tests and
 * benchmarks). Typed arrays are views over one buffer. Each section is checked as a lazy load checks it, and the
 * sections are then checked against each other.
 */
export function decodeSearchIndex(headerValue: unknown, parts: readonly Uint8Array[]): SearchIndexData {
  const header = parseSearchHeader(headerValue);
  if (parts.length !== header.parts.length) throw new SearchIndexFormatError('search index: wrong number of parts');
  let total = 0;
  for (const [i, p] of parts.entries()) {
    if (p.byteLength !== header.parts[i]!.bytes) throw new SearchIndexFormatError(`search index: part ${i} has the wrong size`);
    total += p.byteLength;
  }
  // One allocation for the whole blob keeps every section 8-byte aligned whatever the parts' own buffers are.
  const blob = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    blob.set(p, at);
    at += p.byteLength;
  }
  const data: Partial<Record<SearchSectionName, SectionValue>> = {};
  const get = <K extends SearchSectionName>(name: K): SearchIndexData[K] => data[name] as SearchIndexData[K];
  const names = SEARCH_SECTION_NAMES.filter((name) => hasPredicateSections(header) || !isPredicateSection(name));
  for (const name of names) {
    const s = sectionOf(header, name);
    data[name] = decodeSection(header, name, blob.subarray(s.offset, s.offset + s.bytes));
  }
  for (const name of names) checkSection(header, name, data[name]!, get);
  const full = data as SearchIndexData;
  for (let i = 0; i < full.docYear.length; i++) {
    if ((full.docDecided[i] === 0) !== (full.docYear[i] === 0)) throw new SearchIndexFormatError('search index: docDecided and docYear disagree');
  }
  return full;
}

function maxBelow(values: Uint32Array | Uint16Array, bound: number, name: string, fail: (what: string) => never): void {
  let max = -1;
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!;
  if (max >= bound) fail(`${name} out of range`);
}
