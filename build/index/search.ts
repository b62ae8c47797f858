import { createHash } from 'node:crypto';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import {
  dayNumber,
  NO_APPLICANT,
  NO_CODE,
  NO_SMALL,
  SEQ_OVERFLOW,
  SEARCH_BLOCKS_PATH,
  SEARCH_INDEX_PATH,
  SEARCH_PART_BYTES,
  SearchIndexHeader,
} from '../../src/contract/search-index.ts';
import { blockTable, encodeSearchIndex, type SearchIndexData } from '../../src/search/codec.ts';
import { invertRows } from '../../src/search/csr.ts';
import { applicantKey, tokenize } from '../../src/search/tokenize.ts';
import type { SnapshotWriter } from '../write/writer.ts';
import { jsonBytes } from '../write/json.ts';
import { sha256Hex } from '../../src/utils/sha256-hex.ts';
import { writeSearchChunks } from './chunks.ts';
import { partitionPoint } from '../../src/utils/bisect.ts';
import { predicateSections, type SearchEdges } from './predicates.ts';

/**
 * Writes the API's search index under `search/` of the snapshot being built (format: src/contract/search-index.ts).
 * `records` are every clearance in kNumber ascending order; `deviceTypes` maps a product code to its device type;
 * `edges` are the merged predicate edges the lineage files hold (null: none).
 */
export async function writeSearchIndex(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  writer: SnapshotWriter,
  deviceClasses: ReadonlyMap<string, string | null> = new Map(),
  edges: SearchEdges | null = null,
): Promise<void> {
  const data = buildSearchIndexData(records, deviceTypes, deviceClasses, edges);
  const { header, parts, blob } = encodeSearchIndex(data, SEARCH_PART_BYTES);
  for (const [n, bytes] of parts.entries()) writer.writeBytes(header.parts[n]!.path, bytes);
  writer.writeBytes(SEARCH_BLOCKS_PATH, blockTable(blob, header.blockBytes, (b) => createHash('sha256').update(b).digest()));
  writer.writeJson(SEARCH_INDEX_PATH, SearchIndexHeader, header);
  // The same arrays cut for a browser that fetches only what a query needs (src/contract/search-chunks.ts).
  await writeSearchChunks(data, sha256Hex(jsonBytes(header)), writer);
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The index's arrays from the records. Pure and deterministic: the same records give the same arrays. */
export function buildSearchIndexData(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  deviceClasses: ReadonlyMap<string, string | null> = new Map(),
  edges: SearchEdges | null = null,
): SearchIndexData {
  const docs = documentOrder(records);
  const n = docs.length;

  const codeSet = new Set<string>();
  for (const r of records) if (r.productCode !== null) codeSet.add(r.productCode);
  const codes = [...codeSet].sort(byCodeUnits);
  const codeId = new Map(codes.map((c, i) => [c, i]));
  const groups = applicantGroups(records);

  const docKNumber = new Uint32Array(n);
  const docYear = new Uint16Array(n);
  const docCode = new Uint16Array(n);
  const docApplicant = new Uint32Array(n);
  const vocabulary = new Vocabulary();
  const docTermOffsets = new Uint32Array(n + 1);
  const docTerms = new GrowableU32();
  const docSeqOffsets = new Uint32Array(n + 1);
  const sequence = new GrowableU32();
  const docDecided = new Uint32Array(n);
  const docReceived = new Uint32Array(n);
  const docFlags = new Uint8Array(n);
  const panels = new Dictionary(docs.map((r) => r.advisoryCommittee), NO_SMALL, 'review advisory committees');
  const decisions = new Dictionary(docs.map((r) => r.decisionCode), NO_SMALL, 'decision codes');
  const types = new Dictionary(docs.map((r) => r.submissionType), NO_SMALL, 'submission types');
  const countries = new Dictionary(docs.map((r) => r.countryCode), NO_CODE, 'countries');
  const states = new Dictionary(docs.map((r) => r.state), NO_CODE, 'states');
  const classes = new Dictionary(codes.map((c) => deviceClasses.get(c) ?? null), NO_SMALL, 'device classes');

  for (let d = 0; d < n; d++) {
    const r = docs[d]!;
    docKNumber[d] = Number(r.kNumber.slice(1));
    docYear[d] = r.decisionDate === null ? 0 : Number(r.decisionDate.slice(0, 4));
    docCode[d] = r.productCode === null ? NO_CODE : codeId.get(r.productCode)!;
    docApplicant[d] = r.applicant === null ? NO_APPLICANT : groups.idOfKey.get(applicantKey(r.applicant))!;
    docDecided[d] = r.decisionDate === null ? 0 : dayNumber(r.decisionDate);
    docReceived[d] = r.receivedDate === null ? 0 : dayNumber(r.receivedDate);
    docFlags[d] = flagBits(r.thirdParty) | (flagBits(r.expeditedReview) << 2) | (flagBits(summaryFlag(r.statementOrSummary)) << 4);
    const words = tokenize(r.deviceName);
    for (const t of vocabulary.idsOf(words)) docTerms.push(t);
    docTermOffsets[d + 1] = docTerms.length;
    for (const t of vocabulary.sequenceOf(words)) sequence.push(t);
    docSeqOffsets[d + 1] = sequence.length;
  }
  const applicantTerms = groups.spellings.map((spellings) => vocabulary.idsOf(spellings.flatMap(tokenize)));
  const codeTerms = codes.map((c) => vocabulary.idsOf(tokenize(deviceTypes.get(c) ?? '')));

  const { terms, finalId } = vocabulary.sorted();
  const docTermIds = docTerms.view();
  for (let i = 0; i < docTermIds.length; i++) docTermIds[i] = finalId[docTermIds[i]!]!;
  const docPostings = invertRows(docTermOffsets, docTermIds, terms.length);
  const forward = invertRows(docPostings.offsets, docPostings.values, n); // the same rows, each now ascending
  const applicantPostings = invertRows(...rows(applicantTerms, finalId), terms.length);
  const docSeq = sequencePositions(sequence.view(), docSeqOffsets, finalId, forward);
  const decisionNames = mostFrequent(docs, decisions, (r) => r.decisionCode, (r) => r.decisionDescription);
  const codePostings = invertRows(...rows(codeTerms, finalId), terms.length);

  return {
    docKNumber,
    docYear,
    docCode,
    docApplicant,
    terms,
    termDocOffsets: docPostings.offsets,
    termDocs: docPostings.values,
    docTermOffsets: forward.offsets,
    docTermIds: forward.values,
    termApplicantOffsets: applicantPostings.offsets,
    termApplicants: applicantPostings.values,
    termCodeOffsets: codePostings.offsets,
    termCodes: Uint16Array.from(codePostings.values),
    codes,
    applicants: groups.displays,
    applicantsByKey: groups.byKey,
    docDecided,
    docReceived,
    docPanel: Uint8Array.from(panels.ids),
    docDecision: Uint8Array.from(decisions.ids),
    docType: Uint8Array.from(types.ids),
    docFlags,
    docCountry: Uint16Array.from(countries.ids),
    docState: Uint16Array.from(states.ids),
    codeClass: Uint8Array.from(classes.ids),
    docSeqOffsets,
    docSeq,
    panels: panels.values,
    decisions: decisions.values,
    decisionNames,
    types: types.values,
    countries: countries.values,
    states: states.values,
    classes: classes.values,
    codeTypes: codes.map((c) => deviceTypes.get(c) ?? ''),
    ...predicateSections(docKNumber, edges),
  };
}

/** Two bits of `docFlags`: 0 null, 1 no, 2 yes. */
const flagBits = (value: boolean | null): number => (value === null ? 0 : value ? 2 : 1);

/** statementOrSummary as a yes/no: a summary is on file with FDA ("Summary"), or the applicant has it ("Statement"). */
export function summaryFlag(value: string | null): boolean | null {
  const v = value?.trim().toLowerCase();
  return v === 'summary' ? true : v === 'statement' ? false : null;
}

/** The distinct values of a column, sorted by code units, and each row's index into them (`none` for null). */
class Dictionary {
  readonly values: string[];
  readonly ids: number[];
  constructor(column: readonly (string | null)[], none: number, what: string) {
    this.values = [...new Set(column.filter((v): v is string => v !== null))].sort(byCodeUnits);
    if (this.values.length >= none) throw new Error(`search index: more than ${none - 1} ${what}`);
    const id = new Map(this.values.map((v, i) => [v, i]));
    this.ids = column.map((v) => (v === null ? none : id.get(v)!));
  }
}

/** For each value of a dictionary, the most frequent `label` among the records carrying it, ties to the smallest. */
function mostFrequent(
  docs: readonly ClearanceRecord[],
  dictionary: Dictionary,
  key: (r: ClearanceRecord) => string | null,
  label: (r: ClearanceRecord) => string | null,
): string[] {
  const counts = dictionary.values.map(() => new Map<string, number>());
  for (const r of docs) {
    const k = key(r);
    const l = label(r);
    if (k === null || l === null) continue;
    const m = counts[dictionary.values.indexOf(k)]!;
    m.set(l, (m.get(l) ?? 0) + 1);
  }
  return counts.map((m, i) => {
    let best = dictionary.values[i]!;
    let top = 0;
    for (const [l, c] of m) if (c > top || (c === top && l < best)) [best, top] = [l, c];
    return best;
  });
}

/** Each document's words in order, as positions in its own ascending term row (SEQ_OVERFLOW past 255). */
function sequencePositions(
  provisional: Uint32Array,
  offsets: Uint32Array,
  finalId: Uint32Array,
  forward: { offsets: Uint32Array; values: Uint32Array },
): Uint8Array {
  const out = new Uint8Array(provisional.length);
  for (let d = 0; d + 1 < offsets.length; d++) {
    const lo = forward.offsets[d]!;
    const hi = forward.offsets[d + 1]!;
    for (let i = offsets[d]!; i < offsets[d + 1]!; i++) {
      const t = finalId[provisional[i]!]!;
      const a = partitionPoint(lo, hi, (j) => forward.values[j]! < t);
      out[i] = Math.min(a - lo, SEQ_OVERFLOW);
    }
  }
  return out;
}

/**
 * The records in the order search returns them when relevance does not decide: decisionDate descending, null last,
 * then kNumber descending. Both fit one number (date digits, then the K number's six digits), and K numbers are
 * unique, so a numeric sort of those keys gives the order without a comparator over a million records.
 */
export function documentOrder(records: readonly ClearanceRecord[]): ClearanceRecord[] {
  const keys = new Float64Array(records.length);
  const byKNumber = new Map<number, ClearanceRecord>();
  for (const [i, r] of records.entries()) {
    const k = Number(r.kNumber.slice(1));
    const date = r.decisionDate === null ? 0 : Number(r.decisionDate.replaceAll('-', ''));
    keys[i] = date * 1_000_000 + k;
    byKNumber.set(k, r);
  }
  if (byKNumber.size !== records.length) throw new Error('search index: K numbers are not unique');
  keys.sort().reverse();
  return Array.from(keys, (key) => byKNumber.get(key % 1_000_000)!);
}

/**
 * Applicants are grouped as the applicant filter compares them (case and runs of spaces ignored), so a facet value's
 * count is what filtering by it returns. A group shows its most frequent spelling, ties to the smallest in code units.
 */
function applicantGroups(records: readonly ClearanceRecord[]): {
  displays: string[];
  spellings: string[][];
  idOfKey: Map<string, number>;
  byKey: Uint32Array;
} {
  const counts = new Map<string, Map<string, number>>();
  for (const r of records) {
    if (r.applicant === null) continue;
    const key = applicantKey(r.applicant);
    let spellings = counts.get(key);
    if (!spellings) counts.set(key, (spellings = new Map()));
    spellings.set(r.applicant, (spellings.get(r.applicant) ?? 0) + 1);
  }
  const groups = [...counts].map(([key, spellings]) => {
    let display = '';
    let best = -1;
    for (const [s, c] of spellings) if (c > best || (c === best && s < display)) [display, best] = [s, c];
    return { key, display, spellings: [...spellings.keys()].sort(byCodeUnits) };
  });
  groups.sort((a, b) => byCodeUnits(a.display, b.display));
  const idOfKey = new Map(groups.map((g, i) => [g.key, i]));
  const byKey = Uint32Array.from(
    groups.map((_, i) => i).sort((a, b) => byCodeUnits(groups[a]!.key, groups[b]!.key)),
  );
  return { displays: groups.map((g) => g.display), spellings: groups.map((g) => g.spellings), idOfKey, byKey };
}

/** Collects words under provisional ids, then numbers them in sorted order so that a prefix is one id range. */
class Vocabulary {
  private readonly ids = new Map<string, number>();

  /** The distinct provisional ids of `words`. */
  idsOf(words: readonly string[]): number[] {
    const out = new Set<number>();
    for (const w of words) {
      let id = this.ids.get(w);
      if (id === undefined) this.ids.set(w, (id = this.ids.size));
      out.add(id);
    }
    return [...out];
  }

  /** The provisional id of every word, in order, repeats kept. */
  sequenceOf(words: readonly string[]): number[] {
    return words.map((w) => {
      let id = this.ids.get(w);
      if (id === undefined) this.ids.set(w, (id = this.ids.size));
      return id;
    });
  }

  sorted(): { terms: string[]; finalId: Uint32Array } {
    const terms = [...this.ids.keys()].sort(byCodeUnits);
    const finalId = new Uint32Array(terms.length);
    for (const [i, t] of terms.entries()) finalId[this.ids.get(t)!] = i;
    return { terms, finalId };
  }
}

/** Lists of provisional term ids as compressed rows of final ids. */
function rows(lists: readonly number[][], finalId: Uint32Array): [Uint32Array, Uint32Array] {
  const offsets = new Uint32Array(lists.length + 1);
  for (const [i, l] of lists.entries()) offsets[i + 1] = offsets[i]! + l.length;
  const values = new Uint32Array(offsets[lists.length]!);
  let at = 0;
  for (const l of lists) for (const t of l) values[at++] = finalId[t]!;
  return [offsets, values];
}

class GrowableU32 {
  private buf = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}
