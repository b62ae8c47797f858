import { readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuild, type BuildOptions } from '../../build/snapshot/build.ts';
import { readSources } from '../../build/sources/read.ts';
import { DOWNLOAD_LIMITS, limitsFor, type SyncOptions } from '../../build/sync/config.ts';
import { runSync } from '../../build/sync/run.ts';
import { LAYOUT } from '../../src/contract/index.ts';
import { fixtureText, ORIGIN_FILE_NAMES, startOrigin, type Origin } from './origin.ts';
import { until } from '../helpers/until.ts';
import { testTempDir } from '../helpers/temp-dirs.ts';

/** The sync against an origin that sends more than it should: every download and every entry read has a limit. */

const MiB = 1024 * 1024;
let origin: Origin;
let work: string;
let dir: string;
let out: string;
let builds = 0;

const options = (extra: Partial<SyncOptions> = {}): Partial<SyncOptions> => ({
  baseUrl: origin.url,
  files: ORIGIN_FILE_NAMES,
  dir,
  out,
  timeoutMs: 10_000,
  retries: 0,
  baseDelayMs: 1,
  maxDelayMs: 2,
  build: (o: BuildOptions) => {
    builds++;
    return runBuild({ ...o, sourceDateEpoch: 1_786_924_800 });
  },
  ...extra,
});

/** The published snapshot as a client sees it: where the link points and the manifest's bytes. */
const published = async () => ({ link: await readlink(out), manifest: await readFile(join(out, LAYOUT.manifest), 'utf8') });

/** pmn7680.zip as FDA ships it, plus one more entry. */
async function pmnWith(extra: Record<string, Uint8Array>, level: 0 | 6 = 6): Promise<Uint8Array> {
  const text = Buffer.from(await fixtureText('pmn-1976-1990-sample.txt'), 'latin1');
  return zipSync({ 'pmn7680.txt': text, ...extra }, { level, mtime: new Date('2026-01-01T00:00:00Z') });
}

/** The central directory's record of `name` with its uncompressed size set to `size` (a directory that lies). */
function declareSize(zip: Uint8Array, name: string, size: number): Uint8Array {
  const bytes = Buffer.from(zip);
  for (let i = bytes.length - 46; i >= 0; i--) {
    if (bytes.readUInt32LE(i) !== 0x02014b50) continue;
    const length = bytes.readUInt16LE(i + 28);
    if (bytes.subarray(i + 46, i + 46 + length).toString('latin1') === name) {
      bytes.writeUInt32LE(size, i + 24);
      return bytes;
    }
  }
  throw new Error(`no directory record for ${name}`);
}

async function failsWith(extra: Partial<SyncOptions>, reason: RegExp): Promise<void> {
  const before = await published();
  const buildsBefore = builds;
  const result = await runSync(options(extra));
  expect(result.outcome).toBe('failed');
  expect(result.detail).toMatch(reason);
  expect(builds).toBe(buildsBefore);
  expect(await published()).toEqual(before);
  expect(await readdir(dir)).not.toContain('incoming');
}

beforeAll(async () => {
  origin = await startOrigin();
  work = await testTempDir('sync-bounds-');
  dir = join(work, '.sync');
  out = join(work, 'snapshot');
  expect((await runSync(options())).outcome).toBe('built');
});
afterAll(async () => {
  await origin?.close();
  await rm(work, { recursive: true, force: true });
});

describe('the sync under hostile downloads', () => {
  const zeros = new Uint8Array(10 * MiB);
  const original = () => origin.files.get('pmn7680.zip')?.bytes as Uint8Array;

  it('a zip entry the build reads that would inflate past --max-entry-bytes fails the run, naming the file and the limit', async () => {
    const good = original();
    origin.put('pmn7680.zip', await pmnWith({ 'zeros.txt': zeros }));
    try {
      await failsWith({ maxEntryBytes: MiB }, /^pmn7680\.zip: zeros\.txt would inflate to 10,485,760 bytes, past the limit of 1,048,576 bytes \(--max-entry-bytes\)$/);
    } finally {
      origin.put('pmn7680.zip', good);
    }
  });

  it('an entry whose directory under-declares its size is stopped at the limit while it inflates', async () => {
    const good = original();
    origin.put('pmn7680.zip', declareSize(await pmnWith({ 'zeros.txt': zeros }), 'zeros.txt', 100));
    try {
      await failsWith({ maxEntryBytes: MiB }, /^pmn7680\.zip: zeros\.txt inflates past the limit of 1,048,576 bytes \(--max-entry-bytes\); inflating stopped there$/);
    } finally {
      origin.put('pmn7680.zip', good);
    }
  });

  it('an entry the build does not read is never inflated (its damaged data goes unnoticed), whatever its size', async () => {
    const good = original();
    // Stored, so a flipped byte would fail its CRC-32 if it were read.
    const zip = Buffer.from(await pmnWith({ 'zeros.bin': zeros }, 0));
    // Past its local header's name: inside its stored zeros.
    const at = zip.indexOf(Buffer.from('zeros.bin')) + 1_000;
    expect(zip[at]).toBe(0);
    zip[at] = 1;
    origin.put('pmn7680.zip', zip);
    try {
      const result = await runSync(options({ maxEntryBytes: MiB, force: true }));
      expect([result.outcome, result.detail]).toEqual(['built', expect.stringMatching(/^Downloaded 1 changed file \(pmn7680\.zip\)/)]);
    } finally {
      origin.put('pmn7680.zip', good);
    }
  });

  it('a download that declares more than --max-download-bytes is refused before its body is read', async () => {
    const size = original().byteLength;
    origin.fault('pmn7680.zip', { kind: 'ignore-validators' });
    try {
      await failsWith(
        { maxDownloadBytes: 1000 },
        new RegExp(`^pmn7680\\.zip: could not be downloaded from ${origin.url}pmn7680\\.zip: the answer declares ${size.toLocaleString('en-US')} bytes, past the limit of 1,000 bytes \\(--max-download-bytes\\)`),
      );
    } finally {
      origin.fault('pmn7680.zip', undefined);
    }
  });

  it('a body longer than any limit (no declared length, never ending) is cut off at the limit', async () => {
    origin.fault('pmn96cur.zip', { kind: 'endless', maxBytes: 256 * MiB });
    origin.requests.length = 0;
    try {
      await failsWith(
        { maxDownloadBytes: MiB },
        new RegExp(`^pmn96cur\\.zip: could not be downloaded from ${origin.url}pmn96cur\\.zip: more than 1,048,576 bytes were sent, past the limit \\(--max-download-bytes\\); reading stopped there$`),
      );
      // The client hung up: the origin did not get to send its 256 MiB.
      await until(() => origin.requests.some((r) => r.path === '/ftparea/pmn96cur.zip'), 'the origin to log the request', 5_000);
      const sent = origin.requests.find((r) => r.path === '/ftparea/pmn96cur.zip')?.bytes ?? Infinity;
      expect(sent).toBeLessThan(64 * MiB);
    } finally {
      origin.fault('pmn96cur.zip', undefined);
    }
  });

  it('a failed connection names the URL it tried', async () => {
    await failsWith({ baseUrl: 'http://127.0.0.1:9/nowhere/' }, /^pmn7680\.zip: could not be downloaded from http:\/\/127\.0\.0\.1:9\/nowhere\/pmn7680\.zip: connect ECONNREFUSED/);
  });
});

describe("the build's reader", () => {
  it('inflates only the entries it reads, each within its limit', async () => {
    const text = Buffer.from(await fixtureText('pmn-1976-1990-sample.txt'), 'latin1');
    const zipPath = join(work, 'reader.zip');
    await writeFile(zipPath, zipSync({ 'pmn7680.txt': text, 'zeros.bin': new Uint8Array(10 * MiB), 'zeros.txt': new Uint8Array(2 * MiB) }));
    await expect(readSources([zipPath], { maxEntryBytes: MiB })).rejects.toThrow(
      /reader\.zip!zeros\.txt: would inflate to 2,097,152 bytes, past the limit of 1,048,576 bytes \(the build's limit per zip entry\)$/,
    );
    const read = await readSources([zipPath], { maxEntryBytes: 3 * MiB }).catch((err: Error) => err);
    // zeros.txt is read (and is not a source the build knows); zeros.bin never is.
    expect(String(read)).toMatch(/zeros\.txt: not a source this build reads/);
    await writeFile(zipPath, zipSync({ 'pmn7680.txt': text, 'zeros.bin': new Uint8Array(10 * MiB) }));
    const ok = await readSources([zipPath], { maxEntryBytes: MiB });
    expect(ok.inputs.map((i) => [i.name.split('!')[1], i.bytes.byteLength])).toEqual([['pmn7680.txt', text.length]]);
  });
});

describe('the default limits', () => {
  const L = DOWNLOAD_LIMITS;
  const none = { maxDownloadBytes: null, maxEntryBytes: null };
  const prev = (bytes: number, entryBytes?: number) => ({ etag: null, lastModified: null, bytes, sha256: 'a'.repeat(64), rows: 1, entryBytes });
  it.each([
    ['no good sync yet', none, undefined, L.downloadFirstBytes, L.entryFirstBytes],
    ['a small file: the floors', none, prev(MiB, 5 * MiB), L.downloadFloorBytes, L.entryFloorBytes],
    ['a large file: four times its size', none, prev(100 * MiB, 500 * MiB), 400 * MiB, 2000 * MiB],
    ['a state from before entry sizes were kept', none, prev(100 * MiB), 400 * MiB, L.entryFirstBytes],
    ['given limits win', { maxDownloadBytes: 5, maxEntryBytes: 7 }, prev(100 * MiB, 500 * MiB), 5, 7],
  ])('%s', (_, given, previous, download, entry) => {
    const limits = limitsFor(given, previous);
    expect([limits.download.bytes, limits.entry.bytes]).toEqual([download, entry]);
  });
});
