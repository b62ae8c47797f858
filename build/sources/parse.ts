/** Pure parsing of the source layouts: bytes in, rows out. No file system here. */

import { decodeCp1252 } from '../normalize/cp1252.ts';

export { decodeCp1252 };

const utf8 = new TextDecoder('utf-8');


export type SourceKind = 'pmn' | 'openfda-json' | 'foiclass';

/** FDA's 22 columns of the 510(k) pipe files (pmn*.txt), in order: what the sync checks downloads against and the generator writes. */
export const PMN_COLUMNS = [
  'KNUMBER', 'APPLICANT', 'CONTACT', 'STREET1', 'STREET2', 'CITY', 'STATE', 'COUNTRY_CODE', 'ZIP', 'POSTAL_CODE',
  'DATERECEIVED', 'DECISIONDATE', 'DECISION', 'REVIEWADVISECOMM', 'PRODUCTCODE', 'STATEORSUMM', 'CLASSADVISECOMM',
  'SSPINDICATOR', 'TYPE', 'THIRDPARTY', 'EXPEDITEDREVIEW', 'DEVICENAME',
] as const;


/** FDA's pipe files are Windows-1252 and may hold NUL padding; both are undone here. */
export function decodePipeText(bytes: Uint8Array): string {
  return stripNul(decodeCp1252(bytes));
}

export function decodeJsonText(bytes: Uint8Array): string {
  return stripNul(utf8.decode(bytes)).replace(/^\uFEFF/, '');
}

function stripNul(s: string): string {
  return s.includes('\0') ? s.replaceAll('\0', '') : s;
}

/** Tells the layout from the first bytes; null when it is none of ours. */
export function detectKind(bytes: Uint8Array): SourceKind | null {
  const head = decodeCp1252(bytes.subarray(0, 4096)).replace(/^\uFEFF|^ï»¿/, '').replaceAll('\0', '');
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  const columns = firstLine.split('|').map((c) => c.trim().toUpperCase());
  if (columns.includes('KNUMBER') && columns.includes('DECISIONDATE')) return 'pmn';
  if (columns.includes('PRODUCTCODE') && columns.includes('DEVICECLASS')) return 'foiclass';
  if (head.trimStart().startsWith('{')) return 'openfda-json';
  return null;
}

export type PipeRow =
  | { line: number; row: Record<string, string> }
  | { line: number; problem: string };

/**
 * The rows of a pipe-delimited file with a header line, keyed by column name. Quotes are ordinary characters.
 * A row with the wrong number of fields is returned as a problem, never guessed at.
 */
export function* pipeRows(text: string): Generator<PipeRow> {
  const lines = text.split(/\r?\n/);
  const header = (lines[0] ?? '').split('|').map((c) => c.trim().toUpperCase());
  // A final line break does not start a row.
  const last = lines.length > 1 && lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
  for (let i = 1; i < last; i++) {
    const lineText = lines[i] as string;
    const line = i + 1;
    if (lineText.trim() === '') {
      yield { line, problem: 'blank line' };
      continue;
    }
    const fields = lineText.split('|');
    if (fields.length !== header.length) {
      yield { line, problem: `${fields.length} fields where the header has ${header.length}` };
      continue;
    }
    const row: Record<string, string> = {};
    for (let c = 0; c < header.length; c++) row[header[c] as string] = fields[c] as string;
    yield { line, row };
  }
}

/** The `results` of an openFDA download (`{meta, results}`); throws with a plain reason when it is not one. */
export function openFdaResults(text: string): unknown[] {
  const doc: unknown = JSON.parse(text);
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { results?: unknown }).results)) {
    throw new Error('not an openFDA download: no "results" array');
  }
  return (doc as { results: unknown[] }).results;
}
