import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';
import type { SyncFileState } from '../../src/contract/sync.ts';
import { PMN_COLUMNS } from '../sources/parse.ts';
import { readsEntry } from '../sources/read.ts';
import { bytesZipSource, fileZipSource, inflateEntry, zipDirectory } from './zip.ts';

/**
 * Checks one download before anything is built from it: a whole zip holding the expected text file, FDA's header
 * line, and a row count that has not collapsed against the last good sync: a file (or bytes) in, facts or a reason
 * out. Read in chunks, so memory stays flat whatever the file holds.
 */
export type SourceKind = 'pmn' | 'foiclass';

/** The columns the build reads from foiclass; FDA has added columns over the years, so others may come and go. */
export const FOICLASS_REQUIRED = ['PRODUCTCODE', 'DEVICENAME', 'DEVICECLASS', 'REGULATIONNUMBER', 'MEDICALSPECIALTY', 'REVIEW_PANEL', 'DEFINITION'];

export type Verified = { rows: number; entry: string };

export class ValidationError extends Error {
  override readonly name = 'ValidationError';
}

export function kindOfFile(name: string): SourceKind {
  return /^foiclass/i.test(basename(name)) ? 'foiclass' : 'pmn';
}

/** What a download's check learned: the text file's rows and name, and the bytes the build will inflate from it. */
export type VerifiedFile = Verified & { entryBytes: number };

/**
 * `minRowRatio`: the share of the last good sync's rows a file must keep (0.9: losing more than a tenth is taken
 * for a broken export, not for FDA withdrawing records). `maxEntryBytes`: the most any zip entry the build reads may
 * inflate to; the entries it does not read are never inflated. The file is streamed, never held whole.
 */
export async function validateDownload(
  name: string,
  source: string | Uint8Array,
  previous: SyncFileState | undefined,
  minRowRatio: number,
  maxEntryBytes = Number.MAX_SAFE_INTEGER,
  limitName = '--max-entry-bytes',
): Promise<VerifiedFile> {
  const fail = (err: unknown): never => {
    if (err instanceof ValidationError) throw err;
    throw new ValidationError(`${name}: ${(err as Error).message}`);
  };
  const scan = new TextScan();
  let entry = name;
  let entryBytes = 0;
  if (!/\.zip$/i.test(name)) {
    const stream = typeof source === 'string' ? createReadStream(source) : Readable.from([Buffer.from(source)]);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      entryBytes += chunk.byteLength;
      scan.push(chunk);
    }
  } else {
    const src = await (typeof source === 'string' ? fileZipSource(source) : Promise.resolve(bytesZipSource(source))).catch(fail);
    try {
      const entries = await zipDirectory(src).catch(fail);
      const wanted = `${basename(name).replace(/\.zip$/i, '')}.txt`.toLowerCase();
      // Strict on purpose: FDA ships each .txt in the zip of its name, so anything else is not the file we expect.
      const match = entries.find((e) => /\.txt$/i.test(e.name) && basename(e.name).toLowerCase() === wanted);
      if (!match) throw new ValidationError(`${name}: the zip holds no ${wanted} (entries: ${entries.map((e) => e.name).join(', ') || 'none'})`);
      entry = match.name;
      // Every entry the build will read is inflated here too (capped, size and CRC checked), so the build never
      // meets an entry that was not checked; the rest are left as they are.
      for (const e of entries.filter((x) => readsEntry(x.name))) {
        entryBytes += await inflateEntry(src, e, maxEntryBytes, limitName, e === match ? (c) => scan.push(c) : () => {}).catch(fail);
      }
    } finally {
      await src.close();
    }
  }
  checkHeader(name, kindOfFile(name), scan.header());
  const rows = scan.total;
  if (rows === 0) throw new ValidationError(`${name}: ${entry} has a header but no rows`);
  if (previous && rows < previous.rows * minRowRatio) {
    throw new ValidationError(
      `${name}: ${entry} has ${rows.toLocaleString('en-US')} rows where the last good sync had ${previous.rows.toLocaleString('en-US')} (fewer than ${Math.round(minRowRatio * 100)}%)`,
    );
  }
  return { rows, entry, entryBytes };
}

/** The header line (up to HEADER_MAX bytes of it) and the data rows of a text streamed in chunks. */
const HEADER_MAX = 64 * 1024;

class TextScan {
  rows = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private inHeader = true;
  private significant = false;

  push(chunk: Buffer): void {
    let i = 0;
    if (this.inHeader) {
      const nl = chunk.indexOf(10);
      const part = chunk.subarray(0, nl < 0 ? chunk.length : nl);
      if (this.headBytes < HEADER_MAX) {
        this.head.push(part.subarray(0, HEADER_MAX - this.headBytes));
        this.headBytes += Math.min(part.length, HEADER_MAX - this.headBytes);
      }
      if (nl < 0) return;
      this.inHeader = false;
      i = nl + 1;
    }
    for (; i < chunk.length; i++) {
      const c = chunk[i] as number;
      if (c === 10) {
        if (this.significant) this.rows++;
        this.significant = false;
      } else if (c !== 13 && c !== 32 && c !== 0 && c !== 9) this.significant = true;
    }
  }

  header(): string {
    return Buffer.concat(this.head).toString('latin1');
  }

  /** Rows, counting a last line without a line break. */
  get total(): number {
    return this.rows + (this.significant ? 1 : 0);
  }
}

function checkHeader(name: string, kind: SourceKind, text: string): void {
  const end = text.indexOf('\n');
  const columns = (end < 0 ? text : text.slice(0, end)).replaceAll('\0', '').replace(/^\xef\xbb\xbf/, '').trim().split('|').map((c) => c.trim().toUpperCase());
  if (kind === 'pmn') {
    const expected = PMN_COLUMNS.join('|');
    if (columns.join('|') !== expected) {
      throw new ValidationError(`${name}: the header line changed: expected ${expected}, got ${columns.join('|').slice(0, 300)}`);
    }
    return;
  }
  const missing = FOICLASS_REQUIRED.filter((c) => !columns.includes(c));
  if (missing.length > 0) throw new ValidationError(`${name}: the header line changed: no ${missing.join(', ')} column`);
}

/** Data rows: non-blank lines after the header. */
export function countRows(text: string): number {
  const scan = new TextScan();
  scan.push(Buffer.from(text, 'latin1'));
  return scan.total;
}
