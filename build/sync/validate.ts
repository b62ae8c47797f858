import { basename } from 'node:path';
import type { SyncFileState } from '../../src/contract/sync.ts';
import { PMN_COLUMNS } from '../sources/parse.ts';
import { readZip } from './zip.ts';

/**
 * Checks one download before anything is built from it: a whole zip holding the expected text file, FDA's header
 * line, and a row count that has not collapsed against the last good sync. Pure: bytes in, facts or a reason out.
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

/**
 * `minRowRatio`: the share of the last good sync's rows a file must keep (0.9: losing more than a tenth is taken
 * for a broken export, not for FDA withdrawing records).
 */
export function validateDownload(name: string, bytes: Uint8Array, previous: SyncFileState | undefined, minRowRatio: number): Verified {
  const { entry, text } = textOf(name, bytes);
  checkHeader(name, kindOfFile(name), text);
  const rows = countRows(text);
  if (rows === 0) throw new ValidationError(`${name}: ${entry} has a header but no rows`);
  if (previous && rows < previous.rows * minRowRatio) {
    throw new ValidationError(
      `${name}: ${entry} has ${rows.toLocaleString('en-US')} rows where the last good sync had ${previous.rows.toLocaleString('en-US')} (fewer than ${Math.round(minRowRatio * 100)}%)`,
    );
  }
  return { rows, entry };
}

/** The text file inside (one char per byte: only the header's ASCII and the line breaks matter here). */
function textOf(name: string, bytes: Uint8Array): { entry: string; text: string } {
  if (!/\.zip$/i.test(name)) return { entry: name, text: latin1(bytes) };
  let entries;
  try {
    entries = readZip(bytes);
  } catch (err) {
    throw new ValidationError(`${name}: ${(err as Error).message}`);
  }
  const wanted = `${basename(name).replace(/\.zip$/i, '')}.txt`.toLowerCase();
  const texts = entries.filter((e) => /\.txt$/i.test(e.name));
  // Strict on purpose: FDA ships each .txt in the zip of its name, so anything else is not the file we expect.
  const match = texts.find((e) => basename(e.name).toLowerCase() === wanted);
  if (!match) throw new ValidationError(`${name}: the zip holds no ${wanted} (entries: ${entries.map((e) => e.name).join(', ') || 'none'})`);
  return { entry: match.name, text: latin1(match.bytes) };
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
  let rows = 0;
  let start = text.indexOf('\n') + 1;
  if (start === 0) return 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    for (let i = start; i < end; i++) {
      const c = text.charCodeAt(i);
      if (c !== 13 && c !== 32 && c !== 0 && c !== 9) {
        rows++;
        break;
      }
    }
    start = end + 1;
  }
  return rows;
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}
