import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sourceStateOf } from '../../src/api/source-state.ts';
import type { ClearanceRecord } from '../../src/contract/index.ts';
import { SEARCH_CHUNKS_PATH, type SearchChunks } from '../../src/contract/search-chunks.ts';
import { answerOpenFda, type Endpoint, type OpenFdaPacing } from '../../src/openfda/answer.ts';
import { OPENFDA_LIMITS } from '../../src/search/budget.ts';
import { ChunkCache } from '../../src/search/chunk-cache.ts';
import { searchFromChunks } from '../../src/search/snapshot-index.ts';
import { Snapshot } from '../../src/snapshot/index.ts';
import { joinBytes } from '../../src/utils/join-bytes.ts';
import { buildFixtureSnapshot } from '../helpers/fixture-snapshot.ts';
import { allRecords } from '../server/helpers.ts';
import { countingStorage } from '../helpers/counting-storage.ts';

/**
 * openFDA's /device/510k.json and /device/classification.json over the chunked index, as a Worker reads it (each
 * snapshot opened with searchFromChunks): the same status, headers and bytes as over the whole index for every kind
 * of request, with a cache budget that keeps the files and with one of 0 bytes that keeps none (every request reads
 * again); what a search and a count read of the index, file by file; and a lookup of one K number reading none.
 */
let path: string;
let directory: SearchChunks;
let records: ClearanceRecord[];

beforeAll(async () => {
  path = await buildFixtureSnapshot();
  directory = JSON.parse(await readFile(join(path, SEARCH_CHUNKS_PATH), 'utf8')) as SearchChunks;
  records = await allRecords(path);
});

const deps = { now: () => new Date('2026-01-02T00:00:00Z'), sourceState: (s: Snapshot | null, now: Date) => sourceStateOf({ manifest: s?.manifest ?? null, sync: null, now, maxAgeHours: 48 }) };

/** A snapshot over the folder, every read of a file listed; read through the chunked index when `budget` is given. */
async function opened(budget: number | null): Promise<{ snapshot: Snapshot; reads: string[]; cache: ChunkCache | null }> {
  const { storage, reads } = countingStorage(path);
  const snapshot = await Snapshot.fromStorage(storage, await readFile(join(path, 'manifest.json')));
  const cache = budget === null ? null : new ChunkCache(budget);
  if (cache) await searchFromChunks(snapshot, cache);
  return { snapshot, reads, cache };
}

async function text(snapshot: Snapshot, endpoint: Endpoint, query: string, pacing: OpenFdaPacing = {}): Promise<string> {
  const at = endpoint === '510k' ? '/device/510k.json' : '/device/classification.json';
  const a = await answerOpenFda(deps, snapshot, endpoint, new URL(`http://test${at}?${query}`), pacing);
  return `${a.status} ${JSON.stringify(a.headers)}\n${new TextDecoder().decode(joinBytes(a.chunks))}`;
}

const searchFiles = (reads: readonly string[]) => reads.filter((p) => p.startsWith('search/'));
/** The term chunks a word's prefix range meets, from the directory's word ranges. */
const termChunksOf = (word: string) => directory.termChunks.filter((c) => c.last >= word && (c.first <= word || c.first.startsWith(word))).map((c) => c.file.path);

/** Requests over every field, clause kind, count, sort and page of both endpoints (values from the fixture's records). */
function requests(): [Endpoint, string][] {
  const r = records.find((x) => x.applicant && x.productCode && x.deviceName && x.deviceName.split(' ').length > 2)!;
  const [w1, w2] = r.deviceName!.split(/\s+/);
  const applicantWord = r.applicant!.split(/\s+/)[0]!;
  const s = (search: string, rest = '') => `search=${encodeURIComponent(search)}${rest}`;
  const list: [Endpoint, string][] = [
    ['510k', ''],
    ['510k', 'limit=7&skip=3'],
    ['510k', s('catheter')],
    ['510k', s('device_name:catheter', '&limit=20')],
    ['510k', s(`device_name:"${w1} ${w2}"`)],
    ['510k', s(`device_name.exact:"${r.deviceName}"`)],
    ['510k', s(`device_name:${w1!.slice(0, 3).toLowerCase()}*`, '&limit=50')],
    ['510k', s('_exists_:device_name', '&limit=2')],
    ['510k', s('_missing_:device_name')],
    ['510k', s(`applicant:${applicantWord}`)],
    ['510k', s(`applicant.exact:"${r.applicant}"`)],
    ['510k', s(`applicant:${applicantWord.slice(0, 2).toLowerCase()}*`)],
    ['510k', s(`product_code:${r.productCode}`, '&sort=decision_date:asc')],
    ['510k', s(`k_number:${r.kNumber}`)],
    ['510k', s(`k_number:${r.kNumber}`, '&skip=1')],
    ['510k', s(`k_number:${r.kNumber}`, '&limit=0')],
    ['510k', s(`k_number:${r.kNumber.toLowerCase()}`, '&sort=applicant.exact:desc')],
    ['510k', s('k_number:K000000')],
    ['510k', s('k_number:K99*')],
    ['510k', s('k_number:[K100000 TO K199999]', '&sort=k_number:asc&limit=5')],
    ['510k', s('decision_date:[20000101 TO 20101231] AND NOT device_name:catheter', '&limit=3')],
    ['510k', s('date_received:[19900101 TO 20201231]', '&sort=date_received:desc&limit=4')],
    ['510k', s('decision_code:SESE AND clearance_type:traditional')],
    ['510k', s('review_advisory_committee:CV OR country_code:US')],
    ['510k', s('state:CA AND third_party_flag:N AND expedited_review_flag:N AND statement_or_summary:Summary')],
    ['510k', s('openfda.device_class:2 AND openfda.regulation_number:870*')],
    ['510k', s('openfda.device_name:catheter OR openfda.medical_specialty_description:cardiovascular')],
    ['510k', s('catheter', '&sort=decision_date:desc&limit=3&search_after=0%3D20200101%3B1%3DK200001')],
    ['510k', 'count=product_code&limit=10'],
    ['510k', 'count=applicant'],
    ['510k', 'count=applicant.exact&limit=1000'],
    ['510k', 'count=device_name'],
    ['510k', 'count=device_name&limit=3'],
    ['510k', 'count=device_name&limit=100000'],
    ['510k', `${s('catheter')}&count=device_name`],
    ['510k', 'count=decision_date'],
    ['510k', `${s('pump')}&count=date_received`],
    ['510k', 'count=openfda.device_class'],
    ['510k', 'count=review_advisory_committee'],
    ['510k', 'count=state.exact'],
    ['510k', 'count=k_number'],
    ['510k', s('city:Rochester')],
    ['510k', s('device_name:zzzznotaword')],
    ['classification', s('device_class:3', '&limit=2')],
    ['classification', s(`product_code:${r.productCode}`)],
    ['classification', 'count=medical_specialty'],
  ];
  return list;
}

describe('openFDA over the chunked index', () => {
  it('answers every kind of request byte for byte as over the whole index, with a budget that keeps files and with one of 0 bytes', async () => {
    const whole = await opened(null);
    const kept = await opened(24 * 1024 * 1024);
    const none = await opened(0);
    const statuses = new Set<string>();
    for (const [endpoint, query] of requests()) {
      const want = await text(whole.snapshot, endpoint, query);
      statuses.add(want.slice(0, 3));
      // Twice each: read now, then from what the cache kept (or, at 0 bytes, read again).
      for (let round = 0; round < 2; round++) {
        expect(await text(kept.snapshot, endpoint, query), `${endpoint} ${query}`).toBe(want);
        expect(await text(none.snapshot, endpoint, query), `${endpoint} ${query} (0 bytes)`).toBe(want);
      }
      expect([none.cache!.size, none.cache!.bytes]).toEqual([0, 0]);
      expect(none.cache!.bytes).toBeLessThanOrEqual(0);
    }
    expect([...statuses].sort()).toEqual(['200', '400', '404']);
    expect(kept.cache!.bytes).toBeLessThanOrEqual(24 * 1024 * 1024);
    // Nothing but the directory and the files it names is read of the index over the chunks.
    for (const p of searchFiles([...kept.reads, ...none.reads])) expect(p === SEARCH_CHUNKS_PATH || p.startsWith('search/chunks/')).toBe(true);
  });

  it('a search reads its words’ chunks and the columns every answer orders by, each once; the same search again reads nothing', async () => {
    const { snapshot, reads } = await opened(24 * 1024 * 1024);
    reads.length = 0;
    await text(snapshot, '510k', 'search=device_name:catheter&limit=5');
    const read = searchFiles(reads);
    expect(new Set(read).size).toBe(read.length);
    const f = directory.files;
    const words = termChunksOf('catheter');
    expect(words.length).toBeGreaterThan(0);
    expect(read.sort()).toEqual([...words, f.dicts.path, f.decided.path, f.docKNumber.path, f.docCode.path].sort());
    // No other word's chunk, no phrase lists, no column it does not read.
    reads.length = 0;
    await text(snapshot, '510k', 'search=device_name:catheter&limit=5&skip=5');
    expect(searchFiles(reads)).toEqual([]);
  });

  it('a count of words reads each document’s words and only the word list chunks of the words it shows, once; a date count reads the date column only', async () => {
    const { snapshot, reads } = await opened(24 * 1024 * 1024);
    const f = directory.files;
    reads.length = 0;
    await text(snapshot, '510k', 'count=decision_date');
    expect(searchFiles(reads).sort()).toEqual([f.dicts.path, f.decided.path, f.docKNumber.path, f.docCode.path].sort());
    const chunkOf = (term: string) => directory.termChunks.find((c) => c.first <= term && term <= c.last)!.file.path;
    for (const limit of [3, 100_000]) {
      reads.length = 0;
      const answer = await text(snapshot, '510k', `count=device_name&limit=${limit}`);
      const terms = (JSON.parse(answer.slice(answer.indexOf('\n') + 1)) as { results: { term: string }[] }).results.map((r) => r.term);
      expect(terms.length).toBe(Math.min(limit, terms.length));
      const read = searchFiles(reads);
      expect(new Set(read).size).toBe(read.length);
      const shown = new Set(terms.map(chunkOf));
      // The first count reads each document's words (not their positions) and the chunks of the words it shows; a later
      // one only the chunks of the words it shows that are not in yet.
      if (limit === 3) expect(read.sort()).toEqual([...shown, f.docTerms.path].sort());
      else for (const p of read) expect(shown.has(p), p).toBe(true);
    }
    reads.length = 0;
    await text(snapshot, '510k', 'search=device_name:catheter&count=device_name&limit=3');
    expect(searchFiles(reads).filter((p) => p === f.docTerms.path || p === f.docSeq.path)).toEqual([]);
    // A phrase reads the positions beside the lists already in, and answers as over the whole index.
    const named = records.find((x) => x.deviceName && x.deviceName.split(/\s+/).length > 1)!.deviceName!.split(/\s+/).slice(0, 2).join(' ');
    const phrase = `search=device_name:${encodeURIComponent(`"${named}"`)}&limit=3`;
    reads.length = 0;
    const got = await text(snapshot, '510k', phrase);
    expect(searchFiles(reads).filter((p) => p === f.docTerms.path || p === f.docSeq.path)).toEqual([f.docSeq.path]);
    expect(got).toBe(await text((await opened(null)).snapshot, '510k', phrase));
    expect(got.startsWith('200 '), got).toBe(true);
  });

  it('keeps openFDA’s bounds: work past the bound, too many wildcard expansions and too many clauses are refused alike, and the turn is given back', async () => {
    const whole = await opened(null);
    const none = await opened(0);
    let turns = 0;
    const pacing: OpenFdaPacing = { limits: { ...OPENFDA_LIMITS, work: 2_000, expansions: 3, slice: 64 }, pause: async () => void turns++ };
    const cases = ['count=applicant', 'search=device_name:c*', `search=${Array.from({ length: 300 }, (_, i) => `device_name:w${i}`).join('+OR+')}`];
    for (const query of cases) {
      const want = await text(whole.snapshot, '510k', query, pacing);
      expect(want.startsWith('400 '), want).toBe(true);
      expect(await text(none.snapshot, '510k', query, pacing)).toBe(want);
    }
    turns = 0;
    expect((await text(none.snapshot, '510k', 'search=date_received:[19000101+TO+20991231]&limit=1', { ...pacing, limits: { ...pacing.limits!, work: 1e9 } })).slice(0, 3)).toBe('200');
    expect(turns).toBeGreaterThan(0);
  });

  it('a lookup of one K number reads no search file, and answers as over the whole index', async () => {
    const whole = await opened(null);
    const { snapshot, reads } = await opened(24 * 1024 * 1024);
    expect(searchFiles(reads)).toEqual([SEARCH_CHUNKS_PATH]);
    reads.length = 0;
    for (const r of records.slice(0, 5)) {
      const query = `search=k_number:${r.kNumber}`;
      const got = await text(snapshot, '510k', query);
      expect(got).toBe(await text(whole.snapshot, '510k', query));
      expect(got).toContain(`"k_number":"${r.kNumber}"`);
    }
    expect(reads.length).toBeGreaterThan(0);
    expect(searchFiles(reads)).toEqual([]);
  });
});
