import type { ClearanceRecord } from '../../src/contract/index.ts';
import {
  NO_APPLICANT,
  NO_CODE,
  SEARCH_INDEX_PATH,
  SEARCH_PART_BYTES,
  SearchIndexHeader,
} from '../../src/contract/search-index.ts';
import { encodeSearchIndex, type SearchIndexData } from '../../src/search/codec.ts';
import { invertRows } from '../../src/search/csr.ts';
import { applicantKey, tokenize } from '../../src/search/tokenize.ts';
import type { SnapshotWriter } from '../write/writer.ts';

/**
 * Writes the API's search index under `search/` of the snapshot being built (format: src/contract/search-index.ts).
 * `records` are every clearance in kNumber ascending order; `deviceTypes` maps a product code to its device type.
 */
export async function writeSearchIndex(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
  writer: SnapshotWriter,
): Promise<void> {
  const { header, parts } = encodeSearchIndex(buildSearchIndexData(records, deviceTypes), SEARCH_PART_BYTES);
  for (const [n, bytes] of parts.entries()) writer.writeBytes(header.parts[n]!.path, bytes);
  writer.writeJson(SEARCH_INDEX_PATH, SearchIndexHeader, header);
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The index's arrays from the records. Pure and deterministic: the same records give the same arrays. */
export function buildSearchIndexData(
  records: readonly ClearanceRecord[],
  deviceTypes: ReadonlyMap<string, string | null>,
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

  for (let d = 0; d < n; d++) {
    const r = docs[d]!;
    docKNumber[d] = Number(r.kNumber.slice(1));
    docYear[d] = r.decisionDate === null ? 0 : Number(r.decisionDate.slice(0, 4));
    docCode[d] = r.productCode === null ? NO_CODE : codeId.get(r.productCode)!;
    docApplicant[d] = r.applicant === null ? NO_APPLICANT : groups.idOfKey.get(applicantKey(r.applicant))!;
    for (const t of vocabulary.idsOf(tokenize(r.deviceName))) docTerms.push(t);
    docTermOffsets[d + 1] = docTerms.length;
  }
  const applicantTerms = groups.spellings.map((spellings) => vocabulary.idsOf(spellings.flatMap(tokenize)));
  const codeTerms = codes.map((c) => vocabulary.idsOf(tokenize(deviceTypes.get(c) ?? '')));

  const { terms, finalId } = vocabulary.sorted();
  const docTermIds = docTerms.view();
  for (let i = 0; i < docTermIds.length; i++) docTermIds[i] = finalId[docTermIds[i]!]!;
  const docPostings = invertRows(docTermOffsets, docTermIds, terms.length);
  const forward = invertRows(docPostings.offsets, docPostings.values, n); // the same rows, each now ascending
  const applicantPostings = invertRows(...rows(applicantTerms, finalId), terms.length);
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
  };
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
