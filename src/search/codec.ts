import {
  MAX_YEAR,
  NO_APPLICANT,
  NO_CODE,
  NO_SMALL,
  SEARCH_INDEX_FORMAT,
  SEARCH_INDEX_VERSION,
  SEARCH_SECTION_NAMES,
  SEARCH_SECTIONS,
  SearchIndexHeader,
  searchPartPath,
  type SearchSection,
} from '../contract/search-index.ts';

/** The index's stored arrays, exactly as src/contract/search-index.ts describes them. */
export type SearchIndexData = {
  docKNumber: Uint32Array;
  docYear: Uint16Array;
  docCode: Uint16Array;
  docApplicant: Uint32Array;
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
};

export class SearchIndexFormatError extends Error {
  override name = 'SearchIndexFormatError';
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const align8 = (n: number): number => Math.ceil(n / 8) * 8;

function sectionBytes(value: Uint8Array | Uint16Array | Uint32Array | string[]): Uint8Array {
  if (Array.isArray(value)) return new TextEncoder().encode(JSON.stringify(value));
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}

/** Lays the sections end to end (each at a multiple of 8, zero padding) and cuts the blob into parts. */
export function encodeSearchIndex(
  data: SearchIndexData,
  partBytes: number,
): { header: SearchIndexHeader; parts: Uint8Array[] } {
  if (!LITTLE_ENDIAN) throw new SearchIndexFormatError('the search index is little-endian; this machine is not');
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
    },
    blobBytes: size,
    partBytes,
    parts: parts.map((p, n) => ({ path: searchPartPath(n), bytes: p.byteLength })),
    sections,
  };
  return { header, parts };
}

/**
 * Rebuilds the arrays from the header and the parts' bytes. Typed arrays are views over one buffer (no copy per
 * section). Everything a query will index by is checked here once, so a damaged index fails at load, not with a wrong
 * answer later.
 */
export function decodeSearchIndex(headerValue: unknown, parts: readonly Uint8Array[]): SearchIndexData {
  if (!LITTLE_ENDIAN) throw new SearchIndexFormatError('the search index is little-endian; this machine is not');
  const parsed = SearchIndexHeader.safeParse(headerValue);
  if (!parsed.success) throw new SearchIndexFormatError(`search index header is invalid: ${parsed.error.issues[0]?.message}`);
  const header = parsed.data;
  if (parts.length !== header.parts.length) throw new SearchIndexFormatError('search index: wrong number of parts');
  let total = 0;
  for (const [i, p] of parts.entries()) {
    if (p.byteLength !== header.parts[i]!.bytes) throw new SearchIndexFormatError(`search index: part ${i} has the wrong size`);
    total += p.byteLength;
  }
  if (total !== header.blobBytes) throw new SearchIndexFormatError('search index: parts do not add up to the blob');

  // One allocation for the whole blob keeps every section 8-byte aligned whatever the parts' own buffers are.
  const blob = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    blob.set(p, at);
    at += p.byteLength;
  }

  const byName = new Map(header.sections.map((s) => [s.name, s]));
  const section = (name: keyof SearchIndexData): SearchSection => {
    const s = byName.get(name);
    if (!s || s.type !== SEARCH_SECTIONS[name] || s.offset + s.bytes > total) {
      throw new SearchIndexFormatError(`search index: section ${name} is missing or out of bounds`);
    }
    return s;
  };
  const u32 = (name: keyof SearchIndexData): Uint32Array => {
    const s = section(name);
    if (s.bytes % 4 !== 0) throw new SearchIndexFormatError(`search index: section ${name} has a partial element`);
    return new Uint32Array(blob.buffer, s.offset, s.bytes / 4);
  };
  const u16 = (name: keyof SearchIndexData): Uint16Array => {
    const s = section(name);
    if (s.bytes % 2 !== 0) throw new SearchIndexFormatError(`search index: section ${name} has a partial element`);
    return new Uint16Array(blob.buffer, s.offset, s.bytes / 2);
  };
  const u8 = (name: keyof SearchIndexData): Uint8Array => {
    const s = section(name);
    return new Uint8Array(blob.buffer, s.offset, s.bytes);
  };
  const strings = (name: keyof SearchIndexData): string[] => {
    const s = section(name);
    const value: unknown = JSON.parse(new TextDecoder().decode(blob.subarray(s.offset, s.offset + s.bytes)));
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      throw new SearchIndexFormatError(`search index: section ${name} is not a list of strings`);
    }
    return value as string[];
  };

  const data: SearchIndexData = {
    docKNumber: u32('docKNumber'),
    docYear: u16('docYear'),
    docCode: u16('docCode'),
    docApplicant: u32('docApplicant'),
    terms: strings('terms'),
    termDocOffsets: u32('termDocOffsets'),
    termDocs: u32('termDocs'),
    docTermOffsets: u32('docTermOffsets'),
    docTermIds: u32('docTermIds'),
    termApplicantOffsets: u32('termApplicantOffsets'),
    termApplicants: u32('termApplicants'),
    termCodeOffsets: u32('termCodeOffsets'),
    termCodes: u16('termCodes'),
    codes: strings('codes'),
    applicants: strings('applicants'),
    applicantsByKey: u32('applicantsByKey'),
    docDecided: u32('docDecided'),
    docReceived: u32('docReceived'),
    docPanel: u8('docPanel'),
    docDecision: u8('docDecision'),
    docType: u8('docType'),
    docFlags: u8('docFlags'),
    docCountry: u16('docCountry'),
    docState: u16('docState'),
    codeClass: u8('codeClass'),
    docSeqOffsets: u32('docSeqOffsets'),
    docSeq: u8('docSeq'),
    panels: strings('panels'),
    decisions: strings('decisions'),
    decisionNames: strings('decisionNames'),
    types: strings('types'),
    countries: strings('countries'),
    states: strings('states'),
    classes: strings('classes'),
    codeTypes: strings('codeTypes'),
  };
  checkShape(data, header.counts);
  return data;
}

function checkShape(d: SearchIndexData, counts: SearchIndexHeader['counts']): void {
  const fail = (what: string): never => {
    throw new SearchIndexFormatError(`search index: ${what}`);
  };
  const docs = d.docKNumber.length;
  if (docs !== counts.docs || d.terms.length !== counts.terms || d.codes.length !== counts.codes || d.applicants.length !== counts.applicants) {
    fail('counts differ from the header');
  }
  if (d.docYear.length !== docs || d.docCode.length !== docs || d.docApplicant.length !== docs) fail('document columns differ in length');
  if (d.codes.length >= NO_CODE) fail('too many product codes');
  if (d.applicantsByKey.length !== d.applicants.length) fail('applicantsByKey has the wrong length');
  maxBelow(d.docKNumber, 1_000_000, 'docKNumber', fail);
  const { docYear, docCode, docApplicant } = d;
  const codes = d.codes.length;
  const applicants = d.applicants.length;
  for (let i = 0; i < docs; i++) {
    if (i > 0 && docYear[i]! > docYear[i - 1]!) fail('docYear is not in document order');
    if (docYear[i]! > MAX_YEAR) fail('docYear out of range');
    const c = docCode[i]!;
    if (c !== NO_CODE && c >= codes) fail('docCode out of range');
    const a = docApplicant[i]!;
    if (a !== NO_APPLICANT && a >= applicants) fail('docApplicant out of range');
  }
  maxBelow(d.applicantsByKey, d.applicants.length, 'applicantsByKey', fail);
  checkColumns(d, docs, fail);
  const lists: [Uint32Array, Uint32Array | Uint16Array, number, string][] = [
    [d.termDocOffsets, d.termDocs, docs, 'termDocs'],
    [d.docTermOffsets, d.docTermIds, d.terms.length, 'docTermIds'],
    [d.termApplicantOffsets, d.termApplicants, d.applicants.length, 'termApplicants'],
    [d.termCodeOffsets, d.termCodes, d.codes.length, 'termCodes'],
  ];
  for (const [offsets, values, bound, name] of lists) {
    const rows = name === 'docTermIds' ? docs : d.terms.length;
    if (offsets.length !== rows + 1 || offsets[0] !== 0 || offsets[offsets.length - 1] !== values.length) {
      fail(`${name} offsets do not fit`);
    }
    for (let t = 1; t < offsets.length; t++) if (offsets[t]! < offsets[t - 1]!) fail(`${name} offsets decrease`);
    maxBelow(values, bound, name, fail);
  }
  // Checking a document stops at the first term past a word's range, which needs each document's terms ascending.
  if (d.docTermIds.length !== d.termDocs.length) fail('docTermIds and termDocs differ in size');
  for (let doc = 0; doc < docs; doc++) {
    for (let i = d.docTermOffsets[doc]! + 1, end = d.docTermOffsets[doc + 1]!; i < end; i++) {
      if (d.docTermIds[i]! <= d.docTermIds[i - 1]!) fail('docTermIds are not ascending');
    }
  }
}

/** The version 3 columns: lengths, dictionary bounds (NO_SMALL / NO_CODE aside), date order, phrase rows. */
function checkColumns(d: SearchIndexData, docs: number, fail: (what: string) => never): void {
  const perDoc: [string, { length: number }][] = [
    ['docDecided', d.docDecided], ['docReceived', d.docReceived], ['docPanel', d.docPanel], ['docDecision', d.docDecision],
    ['docType', d.docType], ['docFlags', d.docFlags], ['docCountry', d.docCountry], ['docState', d.docState],
  ];
  for (const [name, column] of perDoc) if (column.length !== docs) fail(`${name} differs in length from the documents`);
  if (d.codeClass.length !== d.codes.length) fail('codeClass differs in length from the codes');
  if (d.decisionNames.length !== d.decisions.length) fail('decisionNames differs in length from decisions');
  if (d.codeTypes.length !== d.codes.length) fail('codeTypes differs in length from the codes');
  const small: [Uint8Array, number, string][] = [
    [d.docPanel, d.panels.length, 'docPanel'],
    [d.docDecision, d.decisions.length, 'docDecision'],
    [d.docType, d.types.length, 'docType'],
    [d.codeClass, d.classes.length, 'codeClass'],
  ];
  for (const [column, size, name] of small) {
    if (size >= NO_SMALL) fail(`${name} has too many values`);
    for (let i = 0; i < column.length; i++) if (column[i] !== NO_SMALL && column[i]! >= size) fail(`${name} out of range`);
  }
  const wide: [Uint16Array, number, string][] = [
    [d.docCountry, d.countries.length, 'docCountry'],
    [d.docState, d.states.length, 'docState'],
  ];
  for (const [column, size, name] of wide) {
    if (size >= NO_CODE) fail(`${name} has too many values`);
    for (let i = 0; i < column.length; i++) if (column[i] !== NO_CODE && column[i]! >= size) fail(`${name} out of range`);
  }
  for (let i = 1; i < docs; i++) {
    const a = d.docDecided[i - 1]!;
    const b = d.docDecided[i]!;
    if (b !== 0 && (a === 0 || b > a)) fail('docDecided is not in document order');
    if ((b === 0) !== (d.docYear[i] === 0)) fail('docDecided and docYear disagree');
  }
  const o = d.docSeqOffsets;
  if (o.length !== docs + 1 || o[0] !== 0 || o[docs] !== d.docSeq.length) fail('docSeq offsets do not fit');
  for (let i = 1; i < o.length; i++) if (o[i]! < o[i - 1]!) fail('docSeq offsets decrease');
}

function maxBelow(values: Uint32Array | Uint16Array, bound: number, name: string, fail: (what: string) => never): void {
  let max = -1;
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!;
  if (max >= bound) fail(`${name} out of range`);
}
