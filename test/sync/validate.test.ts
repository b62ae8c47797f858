import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { resolveSyncOptions, FDA_BASE_URL } from '../../build/sync/config.ts';
import { backoffDelay, isRetryableStatus } from '../../build/io/http.ts';
import { countRows, kindOfFile, validateDownload } from '../../build/sync/validate.ts';
import { crc32, readZip } from '../../build/sync/zip.ts';
import { PMN_COLUMNS } from '../../build/sources/parse.ts';

const PMN_HEADER = PMN_COLUMNS.join('|');
const row = (k: string) => `${k}|Zimmer, Inc.||||Walker|MI|US|||05/26/1976|07/26/1976|SESE|PM|IQI||PM||Traditional|N||KNEE AID`;
const pmnText = (n: number, header = PMN_HEADER) => `${header}\r\n${Array.from({ length: n }, (_, i) => row(`K76${String(i + 1).padStart(4, '0')}`)).join('\r\n')}\r\n`;
const zip = (files: Record<string, string>) => zipSync(Object.fromEntries(Object.entries(files).map(([n, t]) => [n, Buffer.from(t, 'latin1')])));
const prev = (rows: number) => ({ etag: null, lastModified: null, bytes: 1, sha256: 'a'.repeat(64), rows });

describe('validateDownload', () => {
  it('accepts a whole zip holding the matching text file and counts its rows', async () => {
    expect(await validateDownload('pmn96cur.zip', zip({ 'pmn96cur.txt': pmnText(20) }), prev(20), 0.9)).toEqual({ rows: 20, entry: 'pmn96cur.txt', entryBytes: pmnText(20).length });
    expect((await validateDownload('PMN96CUR.ZIP', zip({ 'PMN96CUR.TXT': pmnText(3) }), undefined, 0.9)).rows).toBe(3);
  });

  it('accepts growth and a small loss, within the ratio', async () => {
    expect((await validateDownload('pmn96cur.zip', zip({ 'pmn96cur.txt': pmnText(18) }), prev(20), 0.9)).rows).toBe(18);
  });

  const good = zip({ 'pmn96cur.txt': pmnText(50) });
  const flipped = Uint8Array.from(good);
  const at = 30 + 'pmn96cur.txt'.length + 8; // past the local header and name: inside the deflated data
  flipped[at] = (flipped[at] as number) ^ 0xff;

  it.each([
    { name: 'a truncated zip', bytes: good.subarray(0, good.byteLength - 30), prev: undefined, reason: /^pmn96cur\.zip: not a complete zip/ },
    { name: 'damaged data', bytes: flipped, prev: undefined, reason: /^pmn96cur\.zip: (the zip does not inflate|pmn96cur\.txt (fails its CRC-32 check|inflates to))/ },
    { name: 'no zip at all', bytes: Buffer.from('<html>maintenance</html>'), prev: undefined, reason: /not a complete zip/ },
    { name: 'the wrong file inside', bytes: zip({ 'pmn9195.txt': pmnText(3) }), prev: undefined, reason: /the zip holds no pmn96cur\.txt \(entries: pmn9195\.txt\)/ },
    { name: 'a changed header', bytes: zip({ 'pmn96cur.txt': pmnText(3, PMN_HEADER.replace('|TYPE|', '|SUBMISSIONTYPE|')) }), prev: undefined, reason: /the header line changed/ },
    { name: 'a header only', bytes: zip({ 'pmn96cur.txt': `${PMN_HEADER}\r\n` }), prev: undefined, reason: /has a header but no rows/ },
    { name: 'collapsed rows', bytes: zip({ 'pmn96cur.txt': pmnText(17) }), prev: prev(20), reason: /17 rows where the last good sync had 20 \(fewer than 90%\)/ },
  ])('refuses $name', async ({ bytes, prev: p, reason }) => {
    await expect(validateDownload('pmn96cur.zip', bytes, p, 0.9)).rejects.toThrow(reason);
  });

  it('checks foiclass for the columns the build reads, not for an exact header', async () => {
    const header = 'REVIEW_PANEL|MEDICALSPECIALTY|PRODUCTCODE|DEVICENAME|DEVICECLASS|UNCLASSIFIED_REASON|REGULATIONNUMBER|DEFINITION|NEWCOLUMN';
    expect((await validateDownload('foiclass.zip', zip({ 'foiclass.txt': `${header}\r\nCV|CV|DTB|Pacemaker|3||870.3610|x|y\r\n` }), undefined, 0.9)).rows).toBe(1);
    await expect(validateDownload('foiclass.zip', zip({ 'foiclass.txt': `${header.replace('DEVICECLASS', 'CLASS')}\r\nCV\r\n` }), undefined, 0.9)).rejects.toThrow(
      /^foiclass\.zip: the header line changed: no DEVICECLASS column$/,
    );
  });

  it.each([
    ['pmn96cur.zip', 'pmn'],
    ['foiclass.zip', 'foiclass'],
    ['FOICLASS.ZIP', 'foiclass'],
    ['pmnlstmn.txt', 'pmn'],
  ])('%s is a %s file', (name, kind) => {
    expect(kindOfFile(name)).toBe(kind);
  });

  it.each([
    ['H\r\n', 0],
    ['H\r\na\r\nb\r\n', 2],
    ['H\na\nb', 2],
    ['H\r\na\r\n\r\n  \r\nb\r\n', 2],
    ['H', 0],
  ])('countRows(%j) = %i', (text, rows) => {
    expect(countRows(text)).toBe(rows);
  });
});

describe('readZip and crc32', () => {
  it('computes the standard CRC-32', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array())).toBe(0);
  });
  it('returns the entries of a whole zip', async () => {
    const entries = await readZip(zip({ 'a.txt': 'alpha', 'dir/b.txt': 'beta' }));
    expect(entries.map((e) => [e.name, Buffer.from(e.bytes).toString()])).toEqual([
      ['a.txt', 'alpha'],
      ['dir/b.txt', 'beta'],
    ]);
  });
  it('finds a CRC mismatch that inflating alone would miss', async () => {
    const stored = zipSync({ 'a.txt': Buffer.from('alpha beta gamma') }, { level: 0 });
    const i = Buffer.from(stored).indexOf('beta');
    const damaged = Uint8Array.from(stored);
    damaged[i] = 'B'.charCodeAt(0);
    await expect(readZip(damaged)).rejects.toThrow(/^a\.txt fails its CRC-32 check$/);
  });
});

describe('retry policy', () => {
  const policy = { retries: 4, baseDelayMs: 100, maxDelayMs: 1_000 };
  it.each([
    [0, 1, 100],
    [1, 1, 200],
    [3, 1, 800],
    [4, 1, 1_000],
    [10, 1, 1_000],
    [2, 0, 0],
    [2, 0.5, 200],
  ])('attempt %i with random %f waits %i ms', (attempt, r, ms) => {
    expect(backoffDelay(attempt, policy, () => r)).toBe(ms);
  });
  it.each([
    [500, true],
    [503, true],
    [429, true],
    [408, true],
    [404, false],
    [403, false],
    [400, false],
  ])('status %i is retryable: %s', (status, retryable) => {
    expect(isRetryableStatus(status)).toBe(retryable);
  });
});

describe('resolveSyncOptions', () => {
  it("defaults to FDA's files and adds the base URL's final slash", () => {
    const o = resolveSyncOptions({});
    expect(o.baseUrl).toBe(FDA_BASE_URL);
    expect(o.files).toEqual(['pmn7680.zip', 'pmn8185.zip', 'pmn8690.zip', 'pmn9195.zip', 'pmn96cur.zip', 'foiclass.zip']);
    expect(resolveSyncOptions({ baseUrl: 'http://127.0.0.1:9/files' }).baseUrl).toBe('http://127.0.0.1:9/files/');
  });
  it.each([
    [{ baseUrl: 'ftp://x/' }, /`baseUrl` to be http or https/],
    [{ baseUrl: 'not a url' }, /`baseUrl` to be an absolute URL/],
    [{ files: [] }, /`files` to name at least one file/],
    [{ files: ['../etc/passwd.zip'] }, /plain \.zip or \.txt name/],
    [{ files: ['a.zip', 'a.zip'] }, /each file once/],
    [{ concurrency: 0 }, /`concurrency` to be an integer from 1 and up, got 0/],
    [{ timeoutMs: 1.5 }, /`timeoutMs`/],
    [{ retries: -1 }, /`retries` to be an integer from 0 and up/],
    [{ minRowRatio: 2 }, /`minRowRatio` to be from 0 to 1/],
  ])('refuses %j', (given, reason) => {
    expect(() => resolveSyncOptions(given)).toThrow(reason);
  });
});
