import { readFile, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultSources } from '../../build/sources/default.ts';
import { SEARCH_CHUNKS_PATH } from '../../src/contract/search-chunks.ts';
import { parseChunkDirectory } from '../../src/search/chunk-directory.ts';
import { ChunkedIndex } from '../../src/search/chunked.ts';
import { parseQuery } from '../../src/search/grammar.ts';
import { loadSearchIndex } from '../../src/search/load.ts';
import type { SearchIndex } from '../../src/search/model.ts';
import { correctedQueries, correctionsOf, editDistance, indexWords, SPELLING, spellingOverIndex, spellingWords } from '../../src/search/spelling.ts';
import { queryWords } from '../../src/search/tokenize.ts';
import { matchesOf, readTruth, type Truth } from '../browser/fixture-truth.ts';
import { buildFixture } from '../helpers/fixture-snapshot.ts';

/** Edits from a to b, adjacent swaps counting one (optimal string alignment), by plain recursion: the reference. */
function reference(a: string, b: string): number {
  const memo = new Map<string, number>();
  const d = (i: number, j: number): number => {
    if (i === 0) return j;
    if (j === 0) return i;
    const key = `${i},${j}`;
    if (memo.has(key)) return memo.get(key)!;
    let best = Math.min(d(i - 1, j) + 1, d(i, j - 1) + 1, d(i - 1, j - 1) + (a[i - 1] === b[j - 1] ? 0 : 1));
    if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d(i - 2, j - 2) + 1);
    memo.set(key, best);
    return best;
  };
  return d(a.length, b.length);
}

describe('editDistance', () => {
  const pairs = [
    ['cathter', 'catheter'], ['catheter', 'catheter'], ['cahteter', 'catheter'], ['stnet', 'stent'], ['glvoe', 'glove'],
    ['pacemaker', 'pacemakers'], ['abc', 'xyz'], ['a', ''], ['', 'ab'], ['ca', 'abc'], ['kitten', 'sitting'], ['syringe', 'sryinge'],
  ];
  it.each(pairs)('%s → %s agrees with the reference, and with any bound it reports at most bound + 1', (a, b) => {
    const want = reference(a!, b!);
    expect(editDistance(a!, b!, 10)).toBe(want);
    for (const bound of [0, 1, 2]) expect(editDistance(a!, b!, bound)).toBe(Math.min(want, bound + 1));
  });
});

describe('correctedQueries', () => {
  it('replaces each word in turn, in any case, and every best correction together first', () => {
    const fixes = new Map([['cathter', ['catheter', 'catheters']], ['ballon', ['balloon']]]);
    expect(correctedQueries('Cathter ballon -foley', fixes).map((c) => c.query)).toEqual([
      'catheter balloon -foley',
      'catheter ballon -foley',
      'Cathter balloon -foley',
      'catheters ballon -foley',
    ]);
    expect(correctedQueries('cathter', new Map([['cathter', []]]))).toEqual([]);
  });

  it('checks plain words only: not a qualifier, a phrase, an exclusion, a number, nor a short word', () => {
    const q = 'cathter applicant:medtronc "ballon cath" -foley k12345 abc';
    expect(spellingWords(parseQuery(q), queryWords(q))).toEqual(['cathter']);
  });
});

/**
 * Over the bundled data: what the engine corrects, against a plain scan of the records' words (the fields section 6
 * searches), never the engine's own lists.
 */
describe('did you mean, over the bundled data', () => {
  let truth: Truth;
  let index: SearchIndex;
  let chunked: ChunkedIndex;
  /** Every word of the device names and on how many records each is; every word of applicants and device types. */
  let nameDocs: Map<string, number>;
  let otherWords: Set<string>;
  const req = (query: string) => ({ query, applicant: null, productCode: null, yearFrom: null, yearTo: null });

  beforeAll(async () => {
    const dir = await realpath((await buildFixture({ sources: (await defaultSources()).sources })).out);
    truth = await readTruth(dir);
    index = await loadSearchIndex((p) => readFile(join(dir, p)));
    const directory = parseChunkDirectory(JSON.parse(await readFile(join(dir, SEARCH_CHUNKS_PATH), 'utf8')));
    chunked = new ChunkedIndex(directory, async (p) => new Uint8Array(gunzipSync(await readFile(join(dir, p)))));
    nameDocs = new Map();
    otherWords = new Set();
    const split = (t: string | null | undefined) => (t ?? '').normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    for (const r of truth.records.values()) {
      for (const w of new Set(split(r.deviceName))) nameDocs.set(w, (nameDocs.get(w) ?? 0) + 1);
      for (const w of [...split(r.applicant), ...split(r.productCode ? truth.deviceTypes.get(r.productCode) : null)]) otherWords.add(w);
    }
  }, 300_000);

  /**
   * The corrections a scan of the records' words gives: the same first letter, within the edits, on the most device
   * names first.
   */
  const scanned = (word: string) => {
    const near = [...new Set([...nameDocs.keys(), ...otherWords])].filter((w) => w !== word && w[0] === word[0] && reference(word, w) <= (word.length <= 4 ? 1 : 2));
    // Of two near words one of which begins the other, the one further from the word typed is not offered.
    const d = (w: string) => reference(word, w);
    return near
      .filter((w) => !near.some((v) => v !== w && (v.startsWith(w) || w.startsWith(v)) && d(v) < d(w)))
      .map((w): [string, number] => [w, nameDocs.get(w) ?? 0])
      .sort((a, b) => b[1] - a[1] || reference(word, a[0]) - reference(word, b[0]) || (a[0] < b[0] ? -1 : 1))
      .slice(0, SPELLING.perWord)
      .map(([w]) => w);
  };

  it.each(['cathter', 'cathetr', 'stnet', 'glvoe', 'syrnge', 'pacmaker'])('the corrections of %s are the scan\'s', (word) => {
    expect(nameDocs.has(word) || otherWords.has(word)).toBe(false);
    const want = scanned(word);
    expect(want.length).toBeGreaterThan(0);
    expect(correctionsOf(indexWords(index), word)).toEqual(want);
  });

  it('"cathter" answers "catheter" first, with the scan\'s count, in the whole index and in the chunked one', async () => {
    const catheter = matchesOf(truth, 'catheter').length;
    expect(catheter).toBeGreaterThan(100);
    const whole = spellingOverIndex(index, req('cathter'), 0);
    expect(whole[0]).toEqual({ query: 'catheter', total: catheter, corrections: [{ word: 'cathter', correction: 'catheter' }] });
    // Every suggestion's total is the scan's count of its query, most first.
    for (const s of whole) expect(s.total).toBe(matchesOf(truth, s.query).length);
    // And they are the scan's corrections that find something, counted by the scan, most first (at most 4).
    const want = scanned('cathter')
      .map((w) => ({ w, n: matchesOf(truth, w).length }))
      .filter((x) => x.n > 0)
      .sort((x, y) => y.n - x.n || (x.w < y.w ? -1 : 1))
      .slice(0, SPELLING.shown);
    expect(whole.map((s) => [s.query, s.total])).toEqual(want.map((x) => [x.w, x.n]));
    expect(whole.map((s) => s.total)).toEqual([...whole.map((s) => s.total)].sort((a, b) => b - a));
    const before = chunked.reads;
    expect(await chunked.spelling(req('cathter'), 0)).toEqual(whole);
    // Only the word lists of "c" and the chunks of the corrections' words were read, not every term chunk.
    const dir = chunked.directory;
    expect(chunked.reads - before).toBeLessThan(dir.termChunks.length + dir.words!.chunks.length);
  });

  it('a known word, and a query whose words all find enough, suggest nothing', async () => {
    for (const q of ['catheter', 'catheter balloon', '']) {
      expect(spellingOverIndex(index, req(q), 0)).toEqual([]);
      expect(await chunked.spelling(req(q), 0)).toEqual([]);
    }
  });

  it('with filters, the counts are those of the corrected query under the same filters', async () => {
    const filtered = { ...req('cathter'), productCode: 'DQY' };
    const want = matchesOf(truth, 'catheter').filter((r) => r.productCode === 'DQY').length;
    expect(want).toBeGreaterThan(0);
    const got = spellingOverIndex(index, filtered, 0);
    expect(got[0]).toMatchObject({ query: 'catheter', total: want });
    for (const s of got) expect(s.total).toBe(matchesOf(truth, s.query).filter((r) => r.productCode === 'DQY').length);
    expect(await chunked.spelling(filtered, 0)).toEqual(got);
  });
});
